// Package fsutil holds file helpers for tools and tests that work on the
// real filesystem (the engine itself goes through blazedb/vfs).
package fsutil
