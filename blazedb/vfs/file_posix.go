//go:build !windows

package vfs

import (
	"errors"
	"os"
	"syscall"
)

// openFile opens a file as os.OpenFile does, except that an open that may
// write, create or truncate refuses a symbolic link (symlink.go).
func openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if !writes(flag) {
		return os.OpenFile(name, flag, perm)
	}
	if oNoFollow == 0 {
		if err := linkError("open", name, nil); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(name, flag|oNoFollow, perm)
	if err != nil {
		return nil, linkError("open", name, err)
	}
	return f, nil
}

// linkError returns err, the error of an open of name for writing, or,
// when name is a symbolic link, an error wrapping ErrSymlink: the error
// the open refused it with (ELOOP on Linux and macOS, EMLINK on FreeBSD)
// does not say so everywhere.
func linkError(op, name string, err error) error {
	if fi, lerr := os.Lstat(name); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
		return &os.PathError{Op: op, Path: name, Err: ErrSymlink}
	}
	return err
}

// rename renames as os.Rename does: rename(2) replaces an open file.
func rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// remove removes as os.Remove does.
func remove(name string) error { return os.Remove(name) }

// removeAll removes as os.RemoveAll does: it never follows a symbolic
// link. On POSIX systems it also opens each directory it lists with
// O_NOFOLLOW (openat), so a link swapped in for one meanwhile is not
// followed either.
func removeAll(name string) error { return os.RemoveAll(name) }

const renameReplacesOpen = true

// syncDir fsyncs the directory, making its entries durable. A filesystem
// that cannot fsync a directory at all (it answers EINVAL or ENOTSUP, as
// some network and FUSE filesystems do, and Linux's /proc) keeps its
// entries as it keeps them: that is no error, as in LevelDB (and so
// Dragonfly's mcdb), borg and Cassandra, or Blaze could not open a world
// there that mcdb can.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cannotSyncDir(err) {
		err = nil
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// cannotSyncDir reports whether err is a filesystem's answer that it does
// not sync directories, rather than a failure to.
func cannotSyncDir(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported)
}
