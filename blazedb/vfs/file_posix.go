//go:build !windows

package vfs

import "os"

// openFile opens a file as os.OpenFile does.
func openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// rename renames as os.Rename does: rename(2) replaces an open file.
func rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// remove removes as os.Remove does.
func remove(name string) error { return os.Remove(name) }

const renameReplacesOpen = true

// syncDir fsyncs the directory, making its entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
