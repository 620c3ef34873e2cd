//go:build unix

package vfs

import (
	"errors"
	"fmt"
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
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", name, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return f, nil
}
