package vfstest

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// MemFS is an in-memory filesystem that models what survives a power loss
// (files in memfile.go, the crash point and state in memcrash.go).
// Each file keeps the content it had at its last Sync and the writes made
// since. Each directory keeps the entries, files and directories alike, it
// had at its last SyncDir, and the changes made to them since, in order:
// after a crash, a file or directory created, renamed or removed since
// then may be where it was before, or, as the directory's changes persist
// in order, where some of them put it. So a directory MkdirAll made is
// sure to survive only once its parent has been synced, and a renamed
// directory takes its contents with it.
// CrashClone returns the filesystem a machine would find after rebooting:
// synced data under synced names, plus, at random, some of the unsynced
// writes (possibly torn) and of the unsynced changes to directories. It is
// safe for concurrent use.
type MemFS struct {
	mu      sync.Mutex
	roots   map[string]*dirNode // "/" for absolute paths, "." for relative ones
	locks   map[string]int      // >0: shared holders, -1: exclusive
	ops     int
	crashAt int // mutating operation number that crashes; 0 = never
	crashed bool
	windows bool // Rename refuses to replace an open file (SetWindows)
}

// A dirNode is a directory. Its entries are each an *inode or a *dirNode.
type dirNode struct {
	entries map[string]any // now
	durable map[string]any // as of the last SyncDir
	pending []dirOp        // the changes since then, in order
}

// A dirOp is one change to a directory's entries: del removed, then set
// (if not "") made to name node. A rename within one directory is one
// dirOp, so that a crash keeps it whole, as the rename system call is
// atomic.
type dirOp struct {
	del, set string
	node     any
}

// apply makes the change to the entries in m.
func (op dirOp) apply(m map[string]any) {
	if op.del != "" {
		delete(m, op.del)
	}
	if op.set != "" {
		m[op.set] = op.node
	}
}

// change applies op to d now; it becomes durable at d's next SyncDir.
func (d *dirNode) change(op dirOp) {
	op.apply(d.entries)
	d.pending = append(d.pending, op)
}

func newDir() *dirNode { return &dirNode{entries: map[string]any{}, durable: map[string]any{}} }

// NewMem returns an empty MemFS.
func NewMem() *MemFS {
	return &MemFS{
		roots: map[string]*dirNode{"/": newDir(), ".": newDir()},
		locks: map[string]int{},
	}
}

func clean(name string) string { return filepath.Clean(name) }

// split returns the root a path starts from and the path's elements.
func (m *MemFS) split(name string) (*dirNode, []string) {
	name = filepath.ToSlash(clean(name))
	root := "."
	if strings.HasPrefix(name, "/") {
		root, name = "/", strings.TrimLeft(name, "/")
	}
	if name == "" || name == "." {
		return m.roots[root], nil
	}
	return m.roots[root], strings.Split(name, "/")
}

// walk returns the directory at the path of elements below d, or nil.
func (d *dirNode) walk(elems []string) *dirNode {
	for _, e := range elems {
		next, ok := d.entries[e].(*dirNode)
		if !ok {
			return nil
		}
		d = next
	}
	return d
}

// dir returns the directory called name, or nil. m.mu must be held.
func (m *MemFS) dir(name string) *dirNode {
	root, elems := m.split(name)
	return root.walk(elems)
}

// parent returns the directory holding name, or nil, and name's last
// element. m.mu must be held.
func (m *MemFS) parent(name string) (*dirNode, string) {
	root, elems := m.split(name)
	if len(elems) == 0 {
		return nil, ""
	}
	return root.walk(elems[:len(elems)-1]), elems[len(elems)-1]
}

// file returns the file called name, or nil. m.mu must be held.
func (m *MemFS) file(name string) *inode {
	d, base := m.parent(name)
	if d == nil {
		return nil
	}
	ino, _ := d.entries[base].(*inode)
	return ino
}

var (
	errOpen     = errors.New("the file to replace is open (Windows)")
	errIsDir    = errors.New("is a directory")
	errNotDir   = errors.New("not a directory")
	errNotEmpty = errors.New("directory not empty")
)

func (m *MemFS) Create(name string) (vfs.File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.step(); err != nil {
		return nil, err
	}
	d, base := m.parent(name)
	if d == nil {
		return nil, &os.PathError{Op: "create", Path: name, Err: os.ErrNotExist}
	}
	switch ino := d.entries[base].(type) {
	case *dirNode:
		return nil, &os.PathError{Op: "create", Path: name, Err: errIsDir}
	case *inode:
		// Truncated in place, as O_TRUNC does: a crash before a Sync
		// may keep the old content, or an empty file.
		ino.data = nil
		ino.pending = append(ino.pending, pendingOp{trunc: 0})
		ino.open++
		return &memFile{fs: m, ino: ino, name: name, write: true}, nil
	}
	ino := &inode{open: 1}
	d.change(dirOp{set: base, node: ino})
	return &memFile{fs: m, ino: ino, name: name, write: true}, nil
}

func (m *MemFS) open(name string, write bool) (vfs.File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	ino := m.file(name)
	if ino == nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	ino.open++
	return &memFile{fs: m, ino: ino, name: name, write: write}, nil
}

func (m *MemFS) Open(name string) (vfs.File, error)          { return m.open(name, false) }
func (m *MemFS) OpenReadWrite(name string) (vfs.File, error) { return m.open(name, true) }

// Rename moves a file or a directory, with everything under it. Like every
// change to a directory's entries, it is durable once both directories
// have been synced: until the new parent is, a crash may lose the new
// name, and until the old parent is, it may keep the old one. Within one
// directory, a crash keeps the rename whole or not at all. Across two it is
// one change in each, and a crash may keep either without the other:
// harsher than a journalling filesystem, whose rename is atomic whatever
// the directories.
func (m *MemFS) Rename(oldname, newname string) error {
	oldname, newname = clean(oldname), clean(newname)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.step(); err != nil {
		return err
	}
	fail := func(err error) error { return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err} }
	od, ob := m.parent(oldname)
	nd, nb := m.parent(newname)
	if od == nil || od.entries[ob] == nil || nd == nil {
		return fail(os.ErrNotExist)
	}
	node := od.entries[ob]
	switch old := nd.entries[nb].(type) {
	case *dirNode:
		if _, ok := node.(*dirNode); !ok {
			return fail(errIsDir)
		}
		if len(old.entries) > 0 && old != node {
			return fail(errNotEmpty)
		}
	case *inode:
		if _, ok := node.(*dirNode); ok {
			return fail(errNotDir)
		}
		if m.windows && old.open > 0 && old != node {
			return fail(errOpen)
		}
	}
	if _, ok := node.(*dirNode); ok && strings.HasPrefix(newname, oldname+string(filepath.Separator)) {
		return fail(errors.New("cannot move a directory into itself"))
	}
	if od == nd {
		od.change(dirOp{del: ob, set: nb, node: node})
	} else {
		od.change(dirOp{del: ob})
		nd.change(dirOp{set: nb, node: node})
	}
	return nil
}

// RenameReplacesOpen reports whether Rename may replace an open file: true
// unless SetWindows made it refuse to.
func (m *MemFS) RenameReplacesOpen() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.windows
}

// SetWindows makes Rename refuse, as Windows does, to replace a file that
// is open (and RenameReplacesOpen say so), for tests of what a caller does
// there. Renaming and removing an open file still work, as they do on
// Windows for files opened with FILE_SHARE_DELETE (as Default opens them).
func (m *MemFS) SetWindows(on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.windows = on
}

// Remove removes a file or an empty directory; a crash before its parent is
// synced may bring it back.
func (m *MemFS) Remove(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.step(); err != nil {
		return err
	}
	d, base := m.parent(name)
	var node any
	if d != nil {
		node = d.entries[base]
	}
	switch n := node.(type) {
	case nil:
		return &os.PathError{Op: "remove", Path: name, Err: os.ErrNotExist}
	case *dirNode:
		if len(n.entries) > 0 {
			return &os.PathError{Op: "remove", Path: name, Err: errNotEmpty}
		}
	}
	d.change(dirOp{del: base})
	return nil
}

// RemoveAll removes path and everything under it, deepest first and each
// directory's entries in the order of their names, each removal a
// mutating operation that a crash before its parent is synced may undo.
func (m *MemFS) RemoveAll(path string) error {
	path = clean(path)
	m.mu.Lock()
	defer m.mu.Unlock()
	d, base := m.parent(path)
	switch {
	case base == "":
		return &os.PathError{Op: "removeall", Path: path, Err: errors.New("a root directory")}
	case d == nil || d.entries[base] == nil:
		return nil
	}
	return m.removeTree(d, base)
}

// removeTree removes the entry name of d and everything under it. m.mu
// must be held.
func (m *MemFS) removeTree(d *dirNode, name string) error {
	if sub, ok := d.entries[name].(*dirNode); ok {
		for _, n := range slices.Sorted(maps.Keys(sub.entries)) {
			if err := m.removeTree(sub, n); err != nil {
				return err
			}
		}
	}
	if err := m.step(); err != nil {
		return err
	}
	d.change(dirOp{del: name})
	return nil
}

func (m *MemFS) List(dir string) ([]string, error) {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.dir(dir)
	if d == nil {
		return nil, &os.PathError{Op: "readdir", Path: dir, Err: os.ErrNotExist}
	}
	return slices.Sorted(maps.Keys(d.entries)), nil
}

// MkdirAll creates dir and its missing parents, each a mutating operation.
// A directory it creates is sure to survive a crash only once its parent
// has been synced.
func (m *MemFS) MkdirAll(dir string, perm os.FileMode) error {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	d, elems := m.split(dir)
	for i, e := range elems {
		switch next := d.entries[e].(type) {
		case *dirNode:
			d = next
			continue
		case *inode:
			return &os.PathError{Op: "mkdir", Path: strings.Join(elems[:i+1], "/"), Err: errNotDir}
		}
		if err := m.step(); err != nil {
			return err
		}
		next := newDir()
		d.change(dirOp{set: e, node: next})
		d = next
	}
	return nil
}

// SyncDir makes the directory's entries durable as they are now.
func (m *MemFS) SyncDir(dir string) error {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.step(); err != nil {
		return err
	}
	d := m.dir(dir)
	if d == nil {
		return &os.PathError{Op: "sync", Path: dir, Err: os.ErrNotExist}
	}
	d.durable = maps.Clone(d.entries)
	d.pending = nil
	return nil
}

func (m *MemFS) Lock(name string, exclusive bool) (io.Closer, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.file(name) == nil {
		if !exclusive {
			return nil, &os.PathError{Op: "lock", Path: name, Err: os.ErrNotExist}
		}
		if err := m.step(); err != nil {
			return nil, err
		}
		d, base := m.parent(name)
		if d == nil {
			return nil, &os.PathError{Op: "lock", Path: name, Err: os.ErrNotExist}
		}
		d.change(dirOp{set: base, node: &inode{}})
	}
	held := m.locks[name]
	if held < 0 || (exclusive && held > 0) {
		return nil, fmt.Errorf("%s: %w by this process (a MemFS lives in one)", name, vfs.ErrLocked)
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
	ino := m.file(name)
	if ino == nil {
		return nil, os.ErrNotExist
	}
	return append([]byte(nil), ino.data...), nil
}

// WriteFile replaces the named file's content, durably, for tests that
// damage files on purpose. Missing directories on its path are created, and
// every entry on the path is made durable.
func (m *MemFS) WriteFile(name string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, elems := m.split(name)
	if len(elems) == 0 {
		panic("vfs: WriteFile of a root directory")
	}
	for _, e := range elems[:len(elems)-1] {
		next, ok := d.entries[e].(*dirNode)
		if !ok {
			next = newDir()
			d.entries[e] = next
		}
		d.makeDurable(e)
		d = next
	}
	base := elems[len(elems)-1]
	ino, ok := d.entries[base].(*inode)
	if !ok {
		ino = &inode{}
		d.entries[base] = ino
	}
	ino.data = append([]byte(nil), data...)
	ino.synced = append([]byte(nil), data...)
	ino.pending = nil
	d.makeDurable(base)
}

// makeDurable makes name's entry durable as it is now, and drops the
// pending changes to it, for WriteFile.
func (d *dirNode) makeDurable(name string) {
	d.durable[name] = d.entries[name]
	kept := d.pending[:0]
	for _, op := range d.pending {
		if op.del == name {
			op.del = ""
		}
		if op.set == name {
			op.set = ""
		}
		if op.del != "" || op.set != "" {
			kept = append(kept, op)
		}
	}
	d.pending = kept
}

// HasPrefix reports whether any file's name starts with prefix, for tests.
func (m *MemFS) HasPrefix(prefix string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	var has func(d *dirNode, path string) bool
	has = func(d *dirNode, path string) bool {
		for name, e := range d.entries {
			p := filepath.Join(path, name)
			switch e := e.(type) {
			case *inode:
				if strings.HasPrefix(p, prefix) {
					return true
				}
			case *dirNode:
				if has(e, p) {
					return true
				}
			}
		}
		return false
	}
	return has(m.roots["/"], "/") || has(m.roots["."], ".")
}
