package blazedb

import (
	"errors"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// Issue 35 item 10: damage an Open skipped stays in chunks.dat, and Check
// reports it, naming the keys its record held and where they stand, until
// compaction drops it: in the open that skipped it, and in a later one
// whose index.dat covers it (where Open scans nothing and finds nothing).
// It reported "no damage" in both.
func TestCheckReportsSkippedDamageUntilCompacted(t *testing.T) {
	fs := vfstest.NewMem()
	db := open(t, fs, "/db", Options{Compression: CompressionNone, DisableAutoCompaction: true})
	db.Put(Key{X: 1}, []byte("one, old"))
	db.Put(Key{X: 2}, []byte("two, the only version"))
	db.Put(Key{X: 3}, []byte("three, old"))
	off := db.Stats().LogBytes
	var b Batch
	b.Put(Key{X: 1}, []byte("one, new"))
	b.Put(Key{X: 3}, []byte("three, new"))
	db.Apply(&b)
	db.Put(Key{X: 5}, []byte("five"))
	four := db.Stats().LogBytes
	db.Put(Key{X: 4}, []byte("four"))
	db.Put(Key{X: 2}, []byte("two, overwritten"))
	db.Close()

	// Decay in a batch, whose keys fall back to their older versions, and
	// in the one record of key 4, which is left without a value.
	log, _ := fs.ReadFile("/db/chunks.dat")
	for _, at := range []*int64{&off, &four} {
		if log[*at+16] == kindMark { // a background sync came between
			*at += markSize
		}
	}
	log[off+2*recHeaderSize+chunkKeyLen+3] ^= 1 // the batch's first entry's value
	log[four+recHeaderSize+chunkKeyLen+1] ^= 1
	fs.WriteFile("/db/chunks.dat", log)
	fs.Remove("/db/index.dat")

	db, err := Open("/db", Options{FS: fs, Logger: quiet, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(db.Recovery().Corrupt); n != 2 {
		t.Fatalf("Open skipped %d damaged regions, want 2: %+v", n, db.Recovery())
	}
	want := []string{
		"(1, 0, dim 0) (fell back to an older version)",
		"(3, 0, dim 0) (fell back to an older version)",
		"(4, 0, dim 0) (now without a value)",
	}
	check := func(when string) {
		t.Helper()
		err := db.Check()
		var ce *CorruptionError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Offset != off {
			t.Fatalf("Check %s: %v", when, err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("Check %s does not say %q: %v", when, w, err)
			}
		}
	}
	check("in the open that skipped the damage")
	// The close writes index.dat over the damaged bytes: the next Open
	// scans nothing, and its Recovery is clean.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open("/db", Options{FS: fs, Logger: quiet, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := db.Recovery(); !r.IndexLoaded || len(r.Corrupt) != 0 {
		t.Fatalf("recovery %+v", r)
	}
	check("in a later open")
	db.Close()

	// Compaction leaves the damage behind: nothing left to report.
	db = open(t, fs, "/db", Options{})
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(); err != nil {
		t.Fatalf("Check after compaction: %v", err)
	}
}
