//go:build windows

package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// openFile opens a file as os.OpenFile does, but shared for deletion as
// well as for reading and writing. Windows refuses to rename or remove a
// file that a handle without FILE_SHARE_DELETE holds open, and os.OpenFile
// never passes it, and a compaction renames aside the log that its
// readers still hold. An open that another program's handle refuses is
// tried again for a while (transient).
func openFile(name string, flag int, perm os.FileMode) (f *os.File, err error) {
	err = retry(func() error {
		f, err = openFileOnce(name, flag, perm)
		return err
	}, transient)
	return f, err
}

func openFileOnce(name string, flag int, perm os.FileMode) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(longPath(name))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	access := uint32(windows.GENERIC_READ)
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		access |= windows.GENERIC_WRITE
	}
	var create uint32
	switch {
	case flag&os.O_CREATE != 0 && flag&os.O_TRUNC != 0:
		create = windows.CREATE_ALWAYS
	case flag&os.O_CREATE != 0:
		create = windows.OPEN_ALWAYS
	case flag&os.O_TRUNC != 0:
		create = windows.TRUNCATE_EXISTING
	default:
		create = windows.OPEN_EXISTING
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if perm&0o200 == 0 && flag&os.O_CREATE != 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	h, err := windows.CreateFile(p, access, share, nil, create, attrs, 0)
	if err != nil {
		// The Errno matches os.ErrNotExist for a missing file or directory.
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}

// longPath returns name in the extended form (\\?\C:\...) when it is too
// long for Windows's usual limit (MAX_PATH less room for an 8.3 name, as
// os.OpenFile reckons it), so that a world deep in a directory tree opens
// as it would through os.OpenFile.
func longPath(name string) string {
	if strings.HasPrefix(name, `\\?\`) {
		return name
	}
	abs, err := filepath.Abs(name)
	if err != nil || len(abs) < 248 {
		return name
	}
	if unc, ok := strings.CutPrefix(abs, `\\`); ok {
		return `\\?\UNC\` + unc
	}
	return `\\?\` + abs
}

// rename renames as os.Rename does (MoveFileEx), which refuses to replace
// a file that is open: the engine renames an open log aside instead (see
// RenameReplacesOpen). Renaming or removing an open file works, as every
// handle Blaze opens has FILE_SHARE_DELETE; another program's handle
// without it is waited out for a while (transient).
func rename(oldname, newname string) error {
	return retry(func() error { return os.Rename(oldname, newname) }, transient)
}

// remove removes as os.Remove does, waiting out another program's handle
// as rename does.
func remove(name string) error {
	return retry(func() error { return os.Remove(name) }, transient)
}

// transient reports whether err may pass if the call is made again: the
// file is open in another program without the sharing the call needs
// (ERROR_SHARING_VIOLATION), or is being deleted or held in a way Windows
// reports as ERROR_ACCESS_DENIED, as antivirus scanners cause. A lasting
// denial (a read-only file opened for writing) is returned after
// retryBudget.
func transient(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)
}

const renameReplacesOpen = false

// syncDir does nothing: Windows cannot flush a directory (FlushFileBuffers
// on a directory's handle fails with ERROR_ACCESS_DENIED), and NTFS
// journals the changes to a directory's entries itself. RocksDB and Pebble
// do the same on Windows.
func syncDir(dir string) error {
	_, err := os.Stat(dir)
	return err
}
