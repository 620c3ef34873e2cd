package vfs

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// ErrCrashed is returned by every mutating operation of a MemFS after its
// simulated crash point.
var ErrCrashed = errors.New("vfs: simulated crash")

// MemFS is an in-memory filesystem that models what survives a power loss.
// Each file keeps the content it had at its last Sync and the writes made
// since; each directory keeps the entries it had at its last SyncDir.
// CrashClone returns the filesystem a machine would find after rebooting:
// synced data under synced names, plus, at random, some of the unsynced
// writes (possibly torn). It is safe for concurrent use.
type MemFS struct {
	mu      sync.Mutex
	names   map[string]*inode // current directory entries
	durable map[string]*inode // entries as of the last SyncDir of their directory
	dirs    map[string]bool
	locks   map[string]int // >0: shared holders, -1: exclusive
	ops     int
	crashAt int // mutating operation number that crashes; 0 = never
	crashed bool
}

type inode struct {
	data    []byte
	synced  []byte
	pending []pendingOp // unsynced operations since the last Sync, in order
}

type pendingOp struct {
	off   int64
	data  []byte // nil for a truncate
	trunc int64
}

// NewMem returns an empty MemFS.
func NewMem() *MemFS {
	return &MemFS{
		names:   map[string]*inode{},
		durable: map[string]*inode{},
		dirs:    map[string]bool{"/": true, ".": true},
		locks:   map[string]int{},
	}
}

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

// CrashClone returns the state after a power loss at this moment. Each
// unsynced write is kept with probability keep (drawn from rng), and a kept
// write is torn to a random prefix with probability keep/2. With keep = 0
// only synced data under synced names survives. Locks are not carried over.
func (m *MemFS) CrashClone(rng *rand.Rand, keep float64) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMem()
	for d := range m.dirs {
		c.dirs[d] = true
	}
	clones := map[*inode]*inode{}
	for name, ino := range m.durable {
		n, ok := clones[ino]
		if !ok {
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
			n = &inode{data: data, synced: append([]byte(nil), data...)}
			clones[ino] = n
		}
		c.names[name] = n
		c.durable[name] = n
	}
	return c
}

func resize(b []byte, n int64) []byte {
	if int64(len(b)) >= n {
		return b[:n]
	}
	return append(b, make([]byte, n-int64(len(b)))...)
}

func writeAt(b, p []byte, off int64) []byte {
	if end := off + int64(len(p)); end > int64(len(b)) {
		b = resize(b, end)
	}
	copy(b[off:], p)
	return b
}

func clean(name string) string { return filepath.Clean(name) }

func (m *MemFS) Create(name string) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.step(); err != nil {
		return nil, err
	}
	if !m.dirs[filepath.Dir(name)] {
		return nil, &os.PathError{Op: "create", Path: name, Err: os.ErrNotExist}
	}
	ino := &inode{}
	m.names[name] = ino
	return &memFile{fs: m, ino: ino, name: name, write: true}, nil
}

func (m *MemFS) open(name string, write bool) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	ino, ok := m.names[name]
	if !ok {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	return &memFile{fs: m, ino: ino, name: name, write: write}, nil
}

func (m *MemFS) Open(name string) (File, error)          { return m.open(name, false) }
func (m *MemFS) OpenReadWrite(name string) (File, error) { return m.open(name, true) }

func (m *MemFS) Rename(oldname, newname string) error {
	oldname, newname = clean(oldname), clean(newname)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.step(); err != nil {
		return err
	}
	if m.dirs[oldname] {
		// Directories are durable at once in this model (see MkdirAll), and
		// so is their renaming, with everything under them.
		move := func(p string) (string, bool) {
			if p == oldname || strings.HasPrefix(p, oldname+"/") {
				return newname + strings.TrimPrefix(p, oldname), true
			}
			return p, false
		}
		var dirs []string
		for d := range m.dirs {
			if _, ok := move(d); ok {
				dirs = append(dirs, d)
			}
		}
		for _, d := range dirs {
			nd, _ := move(d)
			delete(m.dirs, d)
			m.dirs[nd] = true
		}
		for _, set := range []map[string]*inode{m.names, m.durable} {
			moved := map[string]*inode{}
			for n, ino := range set {
				if nn, ok := move(n); ok {
					delete(set, n)
					moved[nn] = ino
				}
			}
			for n, ino := range moved {
				set[n] = ino
			}
		}
		return nil
	}
	ino, ok := m.names[oldname]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: os.ErrNotExist}
	}
	delete(m.names, oldname)
	m.names[newname] = ino
	return nil
}

func (m *MemFS) Remove(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.step(); err != nil {
		return err
	}
	if m.dirs[name] {
		for n := range m.names {
			if filepath.Dir(n) == name {
				return &os.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
			}
		}
		for d := range m.dirs {
			if d != name && filepath.Dir(d) == name {
				return &os.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
			}
		}
		// Directories are durable at once (see MkdirAll), and so is their
		// removal, with whatever durable entries they still had.
		delete(m.dirs, name)
		for n := range m.durable {
			if filepath.Dir(n) == name {
				delete(m.durable, n)
			}
		}
		return nil
	}
	if _, ok := m.names[name]; !ok {
		return &os.PathError{Op: "remove", Path: name, Err: os.ErrNotExist}
	}
	delete(m.names, name)
	return nil
}

func (m *MemFS) List(dir string) ([]string, error) {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[dir] {
		return nil, &os.PathError{Op: "readdir", Path: dir, Err: os.ErrNotExist}
	}
	var out []string
	for name := range m.names {
		if filepath.Dir(name) == dir {
			out = append(out, filepath.Base(name))
		}
	}
	for d := range m.dirs {
		if d != dir && filepath.Dir(d) == dir {
			out = append(out, filepath.Base(d))
		}
	}
	sort.Strings(out)
	return out, nil
}

// MkdirAll creates directories; they are durable at once (directories are
// created before any data the tests care about).
func (m *MemFS) MkdirAll(dir string, perm os.FileMode) error {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := dir; !m.dirs[d]; d = filepath.Dir(d) {
		m.dirs[d] = true
	}
	return nil
}

func (m *MemFS) SyncDir(dir string) error {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.step(); err != nil {
		return err
	}
	for name := range m.durable {
		if filepath.Dir(name) == dir {
			delete(m.durable, name)
		}
	}
	for name, ino := range m.names {
		if filepath.Dir(name) == dir {
			m.durable[name] = ino
		}
	}
	return nil
}

func (m *MemFS) Lock(name string, exclusive bool) (io.Closer, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.names[name]; !ok {
		if !exclusive {
			return nil, &os.PathError{Op: "lock", Path: name, Err: os.ErrNotExist}
		}
		if err := m.step(); err != nil {
			return nil, err
		}
		m.names[name] = &inode{}
	}
	held := m.locks[name]
	if held < 0 || (exclusive && held > 0) {
		return nil, fmt.Errorf("%s: %w", name, ErrLocked)
	}
	if exclusive {
		m.locks[name] = -1
	} else {
		m.locks[name]++
	}
	return &memLock{fs: m, name: name, exclusive: exclusive}, nil
}

type memLock struct {
	fs        *MemFS
	name      string
	exclusive bool
	once      sync.Once
}

func (l *memLock) Close() error {
	l.once.Do(func() {
		l.fs.mu.Lock()
		defer l.fs.mu.Unlock()
		if l.exclusive {
			l.fs.locks[l.name] = 0
		} else {
			l.fs.locks[l.name]--
		}
	})
	return nil
}

// ReadFile returns a copy of the named file's current content, for tests.
func (m *MemFS) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ino, ok := m.names[clean(name)]
	if !ok {
		return nil, os.ErrNotExist
	}
	return append([]byte(nil), ino.data...), nil
}

// WriteFile replaces the named file's content, durably, for tests that
// damage files on purpose.
func (m *MemFS) WriteFile(name string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	ino, ok := m.names[name]
	if !ok {
		ino = &inode{}
		m.names[name] = ino
	}
	ino.data = append([]byte(nil), data...)
	ino.synced = append([]byte(nil), data...)
	ino.pending = nil
	m.durable[name] = ino
}

type memFile struct {
	fs     *MemFS
	ino    *inode
	name   string
	write  bool
	closed bool
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if off < 0 {
		return 0, errors.New("vfs: negative offset")
	}
	if off >= int64(len(f.ino.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.ino.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if !f.write {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: os.ErrPermission}
	}
	if err := f.fs.step(); err != nil {
		return 0, err
	}
	f.ino.data = writeAt(f.ino.data, p, off)
	f.ino.pending = append(f.ino.pending, pendingOp{off: off, data: append([]byte(nil), p...)})
	return len(p), nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	if err := f.fs.step(); err != nil {
		return err
	}
	f.ino.data = resize(f.ino.data, size)
	f.ino.pending = append(f.ino.pending, pendingOp{trunc: size})
	return nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	if err := f.fs.step(); err != nil {
		return err
	}
	f.ino.synced = append(f.ino.synced[:0], f.ino.data...)
	f.ino.pending = nil
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return int64(len(f.ino.data)), nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	f.closed = true
	return nil
}

// HasPrefix reports whether any file name starts with prefix, for tests.
func (m *MemFS) HasPrefix(prefix string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for n := range m.names {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}
