package blazedb

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Issue 39 item 2: what shipping reads. DurableLog's length grows with
// syncs and covers whole records; ReadLogAt gives the file's bytes up to
// it, refuses beyond it, and after a compaction refuses the old
// generation; a log rebuilt from what was read opens whole.
func TestShipLog(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{Durability: DurabilityFast})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	gen, d0, err := db.DurableLog()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if err := db.Put(Key{X: int32(i)}, value(i, 1<<10)); err != nil {
			t.Fatal(err)
		}
	}
	if _, d, _ := db.DurableLog(); d != d0 {
		t.Errorf("durable length %d before any sync, want %d", d, d0)
	}
	if err := db.SyncLog(); err != nil {
		t.Fatal(err)
	}
	g, d1, err := db.DurableLog()
	if err != nil || g != gen || d1 <= d0 {
		t.Fatalf("after a sync: generation %d, durable %d (was %d, %d): %v", g, d1, gen, d0, err)
	}
	got := make([]byte, d1)
	if err := db.ReadLogAt(gen, got, 0); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, file[:d1]) {
		t.Error("ReadLogAt differs from the file")
	}
	if err := db.ReadLogAt(gen, make([]byte, 2), d1-1); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("a read past the durable length: %v", err)
	}
	// What was read is a log of its own, whole.
	copyDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(copyDir, logName), got, 0o644); err != nil {
		t.Fatal(err)
	}
	cp, err := Open(copyDir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if rec := cp.Recovery(); rec.TornBytes != 0 || len(rec.Corrupt) != 0 {
		t.Errorf("the copy's recovery: %+v", rec)
	}
	if err := errors.Join(cp.Check(), cp.Close()); err != nil {
		t.Error(err)
	}

	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := db.ReadLogAt(gen, make([]byte, 1), 0); !errors.Is(err, ErrGenerationGone) {
		t.Errorf("a read of the generation compaction replaced: %v", err)
	}
	if g, _, _ := db.DurableLog(); g != gen+1 {
		t.Errorf("generation %d after a compaction, want %d", g, gen+1)
	}
}
