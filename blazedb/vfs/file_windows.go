//go:build windows

package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

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
	if !writes(flag) {
		h, err := windows.CreateFile(p, access, share, nil, create, attrs, 0)
		if err != nil {
			// The Errno matches os.ErrNotExist for a missing file or directory.
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(h), name), nil
	}
	// An open that may write never goes through a link (symlink.go): the
	// name itself is opened, without truncating it, and looked at first.
	keep := create
	switch create {
	case windows.CREATE_ALWAYS:
		keep = windows.OPEN_ALWAYS
	case windows.TRUNCATE_EXISTING:
		keep = windows.OPEN_EXISTING
	}
	h, err := windows.CreateFile(p, access, share, nil, keep, attrs|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	link, other, err := reparsePoint(h)
	switch {
	case err != nil:
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	case link:
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: name, Err: ErrSymlink}
	case other:
		// A reparse point that is the file, not a name for another one
		// (a deduplicated file, or one a cloud service keeps): its data
		// is reached only through its filter, so it is opened as usual.
		windows.CloseHandle(h)
		h, err = windows.CreateFile(p, access, share, nil, create, attrs, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(h), name), nil
	}
	f := os.NewFile(uintptr(h), name)
	if create != keep {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// reparsePoint reports whether the file open as h is a reparse point that
// names another file (link: a symbolic link, a junction or a mount point)
// or one of another kind (other).
func reparsePoint(h windows.Handle) (link, other bool, err error) {
	var info struct{ attributes, tag uint32 } // FILE_ATTRIBUTE_TAG_INFO
	err = windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo, (*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if err != nil || info.attributes&windows.FILE_ATTRIBUTE_REPARSE_POINT == 0 {
		return false, false, err
	}
	const nameSurrogate = 0x20000000 // IsReparseTagNameSurrogate
	return info.tag&nameSurrogate != 0, info.tag&nameSurrogate == 0, nil
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

// removeAll removes as os.RemoveAll does, which never follows a link
// (it opens each entry relative to its directory's handle, as the reparse
// point itself), waiting out another program's handle as rename does. A
// call tried again goes on from what the last one left. Where the system
// lacks the calls os.RemoveAll makes (Wine), removeTree finishes the job.
func removeAll(name string) error {
	err := retry(func() error { return os.RemoveAll(name) }, transient)
	if err != nil && removeTree(name) == nil {
		return nil
	}
	return err
}

// removeTree removes name and everything under it by path, as
// os.RemoveAll does on systems without its handle-relative calls: os.Lstat
// reports a symbolic link, a junction or a mount point as no directory, so
// it is removed itself, never entered.
func removeTree(name string) error {
	fi, err := os.Lstat(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		entries, err := os.ReadDir(name)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := removeTree(filepath.Join(name, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
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
