package vfs

import (
	"errors"
	"os"
)

// ErrLocked is returned by FS.Lock when a conflicting lock is held. The
// error wrapping it says by whom where the FS can tell: Default and MemFS
// tell a lock of this process from another process's.
var ErrLocked = errors.New("vfs: lock held")

// ErrNotExist is returned for a missing file. It is os.ErrNotExist, so
// errors.Is(err, os.ErrNotExist) works for every FS.
var ErrNotExist = os.ErrNotExist

// ErrSymlink is wrapped by the error of an open for writing whose name is
// a symbolic link.
var ErrSymlink = errors.New("vfs: the file is a symbolic link, which Blaze does not write through; replace it with the file itself")
