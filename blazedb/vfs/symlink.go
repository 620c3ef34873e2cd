package vfs

import (
	"os"
)

// Symbolic links. Blaze creates none, and never deletes, truncates or
// writes through one it finds: a link in a world's directory may point
// anywhere, and what is there is not the world's to change.
//
//   - FS.RemoveAll removes a link itself, never what it points to, and
//     never lists a directory through one (as os.RemoveAll does). Remove
//     removes a link itself, as remove(2) does.
//   - Create, OpenReadWrite and an exclusive Lock refuse a name that is a
//     link with an *os.PathError wrapping ErrSymlink, before a byte is
//     truncated or written: O_NOFOLLOW on POSIX systems, and on Windows an
//     open of the name itself (FILE_FLAG_OPEN_REPARSE_POINT) that looks at
//     its reparse tag first.
//   - Rename replaces a link at newname, never its target.
//
// Reading follows links (Open, List), as do the directories on a path: a
// world's directory, or a directory above it, may be a link to another
// disk. MemFS has no links.

// writes reports whether an open with flag may change the file, or make
// it.
func writes(flag int) bool {
	return flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
}
