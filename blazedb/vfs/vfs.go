package vfs

import (
	"io"
	"os"
)

// File is an open file. Implementations must allow concurrent ReadAt calls
// with each other and with WriteAt calls to disjoint ranges.
type File interface {
	io.ReaderAt
	io.WriterAt
	// Sync makes the file's data durable. An error means the durable state of
	// the file is unknown; callers must not retry and trust a later success.
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Size reports the file's current size in bytes.
	Size() (int64, error)
	Close() error
}

// FS is a filesystem. Names are paths as understood by path/filepath.
// Implementations are safe for concurrent use.
type FS interface {
	// Create creates or truncates the named file and opens it read-write.
	// A name that is a symbolic link is refused with ErrSymlink
	// (symlink.go).
	Create(name string) (File, error)
	// Open opens an existing file read-only.
	Open(name string) (File, error)
	// OpenReadWrite opens an existing file read-write. A name that is a
	// symbolic link is refused with ErrSymlink.
	OpenReadWrite(name string) (File, error)
	// Rename atomically replaces newname with oldname. The change is durable
	// only after SyncDir of the directory. Where RenameReplacesOpen is
	// false, it fails if newname is open.
	Rename(oldname, newname string) error
	// RenameReplacesOpen reports whether Rename may replace a file that is
	// open. rename(2) may; Windows refuses, so a caller that must replace
	// an open file there renames it aside first (an open file may be
	// renamed or removed on every FS).
	RenameReplacesOpen() bool
	// Remove removes a file, an empty directory or a symbolic link (the
	// link itself). The change is durable only after SyncDir.
	Remove(name string) error
	// RemoveAll removes path and everything under it, as os.RemoveAll
	// does: a symbolic link, at path or under it, is removed itself, and
	// no directory is listed through one, so nothing outside path is
	// touched. A missing path is not an error. The changes are durable
	// only after SyncDir of the directories they were made in; the
	// function RemoveAll syncs path's parent.
	RemoveAll(path string) error
	// List returns the names (not paths) of the entries in dir.
	List(dir string) ([]string, error)
	// MkdirAll creates dir and its parents. Each new directory is durable
	// only after SyncDir of its parent; the function MkdirAll does both.
	MkdirAll(dir string, perm os.FileMode) error
	// SyncDir makes the directory's entries (creations, renames, removals)
	// durable. Default's does nothing on Windows, which cannot flush a
	// directory; NTFS journals its entries (file_windows.go). Elsewhere it
	// takes a filesystem's refusal to sync directories (EINVAL, ENOTSUP)
	// as success; LevelDB ignores EINVAL there too (file_posix.go).
	SyncDir(dir string) error
	// Lock takes an advisory lock on the named file, creating it when
	// exclusive is true (and then refusing a symbolic link, as Create
	// does). It fails with ErrLocked at once if a conflicting lock is
	// held, by this process or another. Closing the returned Closer
	// releases the lock.
	Lock(name string, exclusive bool) (io.Closer, error)
}
