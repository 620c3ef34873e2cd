// Package vfs is the filesystem seam of blazedb: every byte the engine reads
// or writes goes through an FS, so tests can substitute a filesystem that
// crashes (vfstest.MemFS) or fails on demand (vfstest.Inject).
//
// The interface is deliberately small. Files are addressed by offset
// (ReadAt/WriteAt) because the engine always knows where it writes; there is
// no shared file position to race on.
//
// Nothing is deleted, truncated or written through a symbolic link: a link
// is removed itself, and an open for writing refuses one (symlink.go).
//
// On Windows, an open, rename or removal by Default that another program's
// handle refuses for a moment (an antivirus scanner's, a backup tool's) is
// tried again for up to half a second before it fails (retry.go);
// elsewhere nothing is retried.
//
// Concurrency: every FS here (Default, and vfstest's MemFS and Inject) is
// safe for concurrent use, as FS requires; a File allows concurrent ReadAt
// calls with each other and with WriteAt calls to disjoint ranges.
package vfs
