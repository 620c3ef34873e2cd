//go:build windows

package vfs

import (
	"errors"
	"io"

	"golang.org/x/sys/windows"
)

// lockFile takes a LockFileEx lock on the file's first byte. Such locks
// belong to the handle, so a second Open of the same directory in this
// process conflicts too, as it must; closing the handle releases it.
func lockFile(name string, exclusive bool) (io.Closer, error) {
	f, err := openLockFile(name, exclusive)
	if err != nil {
		return nil, err
	}
	how := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		how |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	l, err := lockHere(name, f, func() (bool, error) {
		err := windows.LockFileEx(windows.Handle(f.Fd()), how, 0, 1, 0, new(windows.Overlapped))
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}
