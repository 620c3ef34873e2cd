//go:build !windows

package vfs

import (
	"errors"
	"os"
	"syscall"
)

// openFile opens a file as os.OpenFile does.
func openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// rename renames as os.Rename does: rename(2) replaces an open file.
func rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// remove removes as os.Remove does.
func remove(name string) error { return os.Remove(name) }

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
