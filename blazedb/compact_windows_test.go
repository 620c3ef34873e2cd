//go:build windows

package blazedb

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// On Windows, a compaction renames the open log aside. Another program
// that holds the log open for a moment without FILE_SHARE_DELETE (an
// antivirus scanner, say) makes that rename fail until it lets go; the
// compaction waits it out rather than failing (vfs's retry).
func TestCompactionWaitsOutAnotherProgramsHandle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := open(t, vfs.Default, dir, Options{DisableAutoCompaction: true})
	for i := 0; i < 200; i++ {
		db.Put(Key{X: int32(i % 20)}, value(i, 1000))
	}
	held, err := os.Open(filepath.Join(dir, logName)) // no FILE_SHARE_DELETE
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		held.Close()
	}()
	if err := db.Compact(); err != nil {
		t.Fatalf("compact while another handle holds the log for 100 ms: %v", err)
	}
	if db.Stats().Compactions != 1 {
		t.Fatalf("%d compactions", db.Stats().Compactions)
	}
	for x := 0; x < 20; x++ {
		if got := mustGet(t, db, Key{X: int32(x)}); string(got) != string(value(180+x, 1000)) {
			t.Fatalf("key %d wrong after the compaction", x)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
