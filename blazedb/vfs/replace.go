package vfs

import (
	"errors"
	"fmt"
	"path/filepath"
)

// TempSuffix is appended to a file's name while ReplaceFile writes it.
const TempSuffix = ".tmp"

// ReplaceFile atomically replaces dir/name with data: it writes
// dir/name.tmp, fsyncs it, renames it over dir/name and fsyncs dir. After a
// crash at any point the file is either wholly old or wholly new (a
// leftover .tmp may remain; it is never the only copy of anything).
func ReplaceFile(fs FS, dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+TempSuffix)
	f, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	if err := fs.SyncDir(dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// ReadFile reads a whole file.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	if n, err := f.ReadAt(b, 0); int64(n) != size {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return b, nil
}

// RemoveAll deletes a directory tree (or a file) through fs and syncs the
// parent directory. A missing path is not an error.
func RemoveAll(fs FS, path string) error {
	if err := removeTree(fs, path); err != nil {
		return err
	}
	return fs.SyncDir(filepath.Dir(path))
}

func removeTree(fs FS, path string) error {
	names, err := fs.List(path)
	if err != nil { // not a directory (or gone)
		if err := fs.Remove(path); err != nil && !errors.Is(err, ErrNotExist) {
			return err
		}
		return nil
	}
	for _, n := range names {
		if err := removeTree(fs, filepath.Join(path, n)); err != nil {
			return err
		}
	}
	if err := fs.Remove(path); err != nil && !errors.Is(err, ErrNotExist) {
		return err
	}
	return nil
}
