//go:build !unix && !windows

package vfs

import (
	"io"
	"os"
)

// lockFile on systems without flock only creates the file: two processes
// opening the same database there are not stopped. Blaze is tested on Linux.
func lockFile(name string, exclusive bool) (io.Closer, error) {
	flag := os.O_RDONLY
	if exclusive {
		flag = os.O_RDWR | os.O_CREATE
	}
	return os.OpenFile(name, flag, 0o644)
}
