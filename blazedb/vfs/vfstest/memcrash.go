package vfstest

import (
	"maps"
	"math/rand/v2"
	"slices"
)

// The crash point and the crash state of a MemFS.

// CrashAfter makes the n-th mutating operation from now, and every one after
// it, fail with ErrCrashed without taking effect. n <= 0 disarms it.
func (m *MemFS) CrashAfter(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n <= 0 {
		m.crashAt = 0
		return
	}
	m.crashAt = m.ops + n
}

// Crashed reports whether the crash point has been reached.
func (m *MemFS) Crashed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.crashed
}

// Ops reports how many mutating operations have been attempted.
func (m *MemFS) Ops() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops
}

// step counts a mutating operation and reports whether it may proceed.
// m.mu must be held.
func (m *MemFS) step() error {
	if m.crashed {
		return ErrCrashed
	}
	m.ops++
	if m.crashAt > 0 && m.ops >= m.crashAt {
		m.crashed = true
		return ErrCrashed
	}
	return nil
}

// CrashClone returns the state after a power loss at this moment: every
// directory's entries as of its last SyncDir, and each file's content as of
// its last Sync. Each unsynced write is kept with probability keep (drawn
// from rng), and a kept write is torn to a random prefix with probability
// keep/2. With probability keep, a directory also keeps some of the changes
// made to it since its last SyncDir: a random number of the first ones, as
// a filesystem that writes its metadata in order would. With keep = 0 only
// synced data under synced names survives. Locks are not carried over. For
// one rng seed the result is always the same. SetWindows carries over.
func (m *MemFS) CrashClone(rng *rand.Rand, keep float64) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMem()
	c.windows = m.windows
	files := map[*inode]*inode{}
	dirs := map[*dirNode]*dirNode{}
	cloneFile := func(ino *inode) *inode {
		if n, ok := files[ino]; ok {
			return n
		}
		data := append([]byte(nil), ino.synced...)
		for _, op := range ino.pending {
			if rng == nil || rng.Float64() >= keep {
				continue
			}
			if op.data == nil {
				data = resize(data, op.trunc)
				continue
			}
			w := op.data
			if rng.Float64() < keep/2 {
				w = w[:rng.IntN(len(w)+1)]
			}
			data = writeAt(data, w, op.off)
		}
		n := &inode{data: data, synced: append([]byte(nil), data...)}
		files[ino] = n
		return n
	}
	// A directory can be durable under two names (renamed, and both
	// parents synced since), so clones are shared, as the inodes are.
	var cloneDir func(d *dirNode) *dirNode
	cloneDir = func(d *dirNode) *dirNode {
		if n, ok := dirs[d]; ok {
			return n
		}
		n := newDir()
		dirs[d] = n
		after := maps.Clone(d.durable)
		if rng != nil && len(d.pending) > 0 && rng.Float64() < keep {
			for _, op := range d.pending[:rng.IntN(len(d.pending)+1)] {
				op.apply(after)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(after)) {
			var e any
			switch node := after[name].(type) {
			case *inode:
				e = cloneFile(node)
			case *dirNode:
				e = cloneDir(node)
			}
			n.entries[name] = e
			n.durable[name] = e
		}
		return n
	}
	for _, r := range []string{"/", "."} {
		c.roots[r] = cloneDir(m.roots[r])
	}
	return c
}
