//go:build unix

package vfs

import "syscall"

// oNoFollow makes an open fail rather than follow a symbolic link at the
// name itself (links among the directories above it are followed).
const oNoFollow = syscall.O_NOFOLLOW
