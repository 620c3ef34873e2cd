//go:build !unix && !windows

package vfs

import "io"

// lockFile on systems without flock only creates the file: two processes
// opening the same database there are not stopped. Blaze is tested on Linux.
func lockFile(name string, exclusive bool) (io.Closer, error) {
	return openLockFile(name, exclusive)
}
