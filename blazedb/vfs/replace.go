package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// TempSuffix is appended to a file's name while ReplaceFile writes it.
const TempSuffix = ".tmp"

// ReplaceFile atomically replaces dir/name with data: it writes
// dir/name.tmp, fsyncs it, renames it over dir/name and fsyncs dir. After a
// crash at any point the file is either wholly old or wholly new (a
// leftover .tmp may remain; it is never the only copy of anything). A
// symbolic link found at dir/name.tmp is removed itself, never written
// through (symlink.go).
func ReplaceFile(fs FS, dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+TempSuffix)
	f, err := fs.Create(tmp)
	if errors.Is(err, ErrSymlink) {
		if rerr := fs.Remove(tmp); rerr != nil {
			return fmt.Errorf("create %s: %w (removing the link: %v)", tmp, err, rerr)
		}
		f, err = fs.Create(tmp)
	}
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

// RemoveAll deletes a directory tree (or a file) through fs.RemoveAll,
// which never follows a symbolic link, and syncs the parent directory. A
// missing path is not an error.
func RemoveAll(fs FS, path string) error {
	if err := fs.RemoveAll(path); err != nil {
		return err
	}
	return fs.SyncDir(filepath.Dir(path))
}

// BuildSuffix is the suffix backups are built under (BuildDir), so that a
// directory a crash left behind says what it was.
const BuildSuffix = ".backup-tmp"

// BuildDir creates the directory dir whole or not at all: build fills
// dir + suffix (made empty for it, and left synced by build), which is then
// renamed to dir and the rename synced. Missing parents of dir are made
// durable first. If dir exists, or a directory left by a build cut short by
// a crash, BuildDir refuses with an error wrapping fs.ErrExist and changes
// nothing. A failed build or rename removes the temporary directory. After
// a crash dir is either absent or whole; the temporary directory may be
// left.
func BuildDir(fsys FS, dir, suffix string, build func(tmp string) error) error {
	dir = filepath.Clean(dir)
	tmp := dir + suffix
	for _, p := range []string{dir, tmp} {
		if exists(fsys, p) {
			return fmt.Errorf("%s: %w", p, fs.ErrExist)
		}
	}
	// The parents first, durably (MkdirAll): the final SyncDir makes dir's
	// entry durable, not theirs. The temporary directory needs no sync of
	// its own, as only its rename must last.
	if err := MkdirAll(fsys, filepath.Dir(dir)); err != nil {
		return err
	}
	if err := fsys.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	err := build(tmp)
	if err == nil {
		err = fsys.Rename(tmp, dir)
	}
	if err != nil {
		if rerr := RemoveAll(fsys, tmp); rerr != nil {
			err = errors.Join(err, fmt.Errorf("remove %s: %w", tmp, rerr))
		}
		return err
	}
	return fsys.SyncDir(filepath.Dir(dir))
}

// exists reports whether name is a directory or a file.
func exists(fsys FS, name string) bool {
	if _, err := fsys.List(name); err == nil {
		return true
	}
	f, err := fsys.Open(name)
	if err == nil {
		f.Close()
	}
	return err == nil
}
