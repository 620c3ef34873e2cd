//go:build unix

package vfs

import (
	"errors"
	"io"
	"syscall"
)

// lockFile takes a flock(2) lock. flock locks belong to the open file
// description, so a second Open of the same directory in this process
// conflicts too, as it must.
func lockFile(name string, exclusive bool) (io.Closer, error) {
	f, err := openLockFile(name, exclusive)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	l, err := lockHere(name, f, func() (bool, error) {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
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
