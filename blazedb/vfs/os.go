package vfs

import (
	"io"
	"os"
	"path/filepath"
)

// Default is the operating system's filesystem.
var Default FS = osFS{}

type osFS struct{}

type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (osFS) Create(name string) (File, error) {
	f, err := openFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := openFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) OpenReadWrite(name string) (File, error) {
	f, err := openFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Rename(oldname, newname string) error { return rename(oldname, newname) }
func (osFS) Remove(name string) error             { return remove(name) }
func (osFS) RemoveAll(path string) error          { return removeAll(path) }
func (osFS) RenameReplacesOpen() bool             { return renameReplacesOpen }

func (osFS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

func (osFS) SyncDir(dir string) error { return syncDir(filepath.Clean(dir)) }

func (osFS) Lock(name string, exclusive bool) (io.Closer, error) {
	return lockFile(name, exclusive)
}

// openLockFile opens the file a lock is taken on: read-write, and made if
// missing, for an exclusive lock; read-only for a shared one.
func openLockFile(name string, exclusive bool) (*os.File, error) {
	if exclusive {
		return openFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	}
	return openFile(name, os.O_RDONLY, 0)
}
