package vfstest

import (
	"io"
	"os"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// Op names a filesystem operation for Inject: a plain value, safe to copy
// and share.
type Op int

const (
	OpCreate Op = iota
	OpOpen
	OpWrite
	OpSync
	OpTruncate
	OpRename
	OpRemove
	OpSyncDir
	OpRead
	OpMkdir // MkdirAll, named by the directory asked for
)

// Injector decides whether an operation on name fails; a nil result lets it
// proceed. It is called from every goroutine using the filesystem, so it
// must be safe for concurrent use.
type Injector func(op Op, name string) error

// Inject wraps fs so that fn can fail any operation. A failed WriteAt first
// writes half of its buffer, as a full disk does, then returns the error.
// fn is given names with forward slashes on every system (filepath.ToSlash),
// so that a test matches them on Windows too.
func Inject(fs vfs.FS, fn Injector) vfs.FS {
	slashed := func(op Op, name string) error { return fn(op, filepath.ToSlash(name)) }
	return &injectFS{fs: fs, fn: slashed}
}

type injectFS struct {
	fs vfs.FS
	fn Injector
}

type injectFile struct {
	vfs.File
	fn   Injector
	name string
}

func (i *injectFS) wrap(f vfs.File, err error, name string) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &injectFile{File: f, fn: i.fn, name: name}, nil
}

func (i *injectFS) Create(name string) (vfs.File, error) {
	if err := i.fn(OpCreate, name); err != nil {
		return nil, err
	}
	f, err := i.fs.Create(name)
	return i.wrap(f, err, name)
}

func (i *injectFS) Open(name string) (vfs.File, error) {
	if err := i.fn(OpOpen, name); err != nil {
		return nil, err
	}
	f, err := i.fs.Open(name)
	return i.wrap(f, err, name)
}

func (i *injectFS) OpenReadWrite(name string) (vfs.File, error) {
	if err := i.fn(OpOpen, name); err != nil {
		return nil, err
	}
	f, err := i.fs.OpenReadWrite(name)
	return i.wrap(f, err, name)
}

func (i *injectFS) Rename(o, n string) error {
	if err := i.fn(OpRename, n); err != nil {
		return err
	}
	return i.fs.Rename(o, n)
}

func (i *injectFS) Remove(name string) error {
	if err := i.fn(OpRemove, name); err != nil {
		return err
	}
	return i.fs.Remove(name)
}

// RemoveAll asks fn once, with OpRemove and path, not for each entry
// under it: the walk is the wrapped FS's own, so that it never follows a
// link.
func (i *injectFS) RemoveAll(path string) error {
	if err := i.fn(OpRemove, path); err != nil {
		return err
	}
	return i.fs.RemoveAll(path)
}

func (i *injectFS) List(dir string) ([]string, error) { return i.fs.List(dir) }

func (i *injectFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := i.fn(OpMkdir, dir); err != nil {
		return err
	}
	return i.fs.MkdirAll(dir, perm)
}

func (i *injectFS) SyncDir(dir string) error {
	if err := i.fn(OpSyncDir, dir); err != nil {
		return err
	}
	return i.fs.SyncDir(dir)
}

func (i *injectFS) RenameReplacesOpen() bool { return i.fs.RenameReplacesOpen() }

func (i *injectFS) Lock(name string, exclusive bool) (io.Closer, error) {
	return i.fs.Lock(name, exclusive)
}

func (f *injectFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fn(OpRead, f.name); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *injectFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fn(OpWrite, f.name); err != nil {
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, err
	}
	return f.File.WriteAt(p, off)
}

func (f *injectFile) Sync() error {
	if err := f.fn(OpSync, f.name); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *injectFile) Truncate(size int64) error {
	if err := f.fn(OpTruncate, f.name); err != nil {
		return err
	}
	return f.File.Truncate(size)
}
