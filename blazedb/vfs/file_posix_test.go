//go:build unix

package vfs

import (
	"errors"
	"os"
	"runtime"
	"syscall"
	"testing"
)

// Linux's /proc, like some network and FUSE filesystems, refuses to fsync
// a directory (EINVAL). SyncDir takes that as a filesystem that keeps its
// entries as it keeps them, as LevelDB does, rather than failing every
// Open there.
func TestSyncDirWhereDirectoriesCannotBeSynced(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux's /proc")
	}
	d, err := os.Open("/proc")
	if err != nil {
		t.Skip(err)
	}
	serr := d.Sync()
	d.Close()
	if !errors.Is(serr, syscall.EINVAL) {
		t.Skipf("fsync of /proc gave %v here, not EINVAL", serr)
	}
	if err := Default.SyncDir("/proc"); err != nil {
		t.Fatalf("SyncDir(/proc) = %v, want nil", err)
	}
}

func TestCannotSyncDir(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&os.PathError{Op: "sync", Path: "/d", Err: syscall.EINVAL}, true},
		{&os.PathError{Op: "sync", Path: "/d", Err: syscall.ENOTSUP}, true},
		{&os.PathError{Op: "sync", Path: "/d", Err: syscall.EIO}, false},
		{&os.PathError{Op: "sync", Path: "/d", Err: syscall.ENOSPC}, false},
		{nil, false},
	} {
		if got := cannotSyncDir(c.err); got != c.want {
			t.Errorf("cannotSyncDir(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
