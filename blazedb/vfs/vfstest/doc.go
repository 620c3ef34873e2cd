// Package vfstest holds the test fakes of the filesystem seam (package
// vfs): MemFS, an in-memory filesystem that models what survives a power
// loss and can crash at a chosen operation (CrashAfter, CrashClone), and
// Inject, which wraps any vfs.FS so that a test can fail any operation.
//
// They live apart from vfs so that no binary links them: only tests import
// this package (TestNoBinaryLinksVfstest checks it). MemFS and the FS
// Inject returns are safe for concurrent use.
package vfstest
