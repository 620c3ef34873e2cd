package blazedb

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// An fsync of chunks.dat slower than the slow-fsync threshold (knobs.go) is logged as a warning,
// with the database and how long it took; a fast one is not. The test
// lowers the threshold and slows the disk's syncs.
func TestSlowFsyncIsLogged(t *testing.T) {
	// A fast fsync (of memory) is judged against half a second, which
	// only a frozen machine would reach; a slowed one against 20 ms.
	var slow atomic.Bool
	fs := vfstest.Inject(vfstest.NewMem(), func(op vfstest.Op, name string) error {
		if op == vfstest.OpSync && slow.Load() && filepath.Base(name) == logName {
			time.Sleep(40 * time.Millisecond)
		}
		return nil
	})
	var logs bytes.Buffer
	db := open(t, fs, "/db", Options{Durability: DurabilitySafe, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	db.knobs.slowFsync.Store(int64(500 * time.Millisecond))
	if err := db.Put(Key{X: 1}, []byte("fast")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "slow fsync") {
		t.Fatalf("a fast fsync was logged: %s", logs.String())
	}
	db.knobs.slowFsync.Store(int64(20 * time.Millisecond))
	slow.Store(true)
	if err := db.Put(Key{X: 2}, []byte("slow")); err != nil {
		t.Fatal(err)
	}
	slow.Store(false)
	got := logs.String()
	if !strings.Contains(got, "level=WARN") || !strings.Contains(got, "slow fsync of chunks.dat") || !strings.Contains(got, "dir=/db") {
		t.Fatalf("a slow fsync was not logged as a warning: %q", got)
	}
	if strings.Contains(got, "err=") {
		t.Fatalf("a slow fsync that succeeded was logged with an error: %q", got)
	}
}
