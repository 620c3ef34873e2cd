//go:build !unix && !windows

package vfs

// oNoFollow is 0 where the system has no O_NOFOLLOW: openFile looks at the
// name before it opens it instead, which a link made in between defeats.
const oNoFollow = 0
