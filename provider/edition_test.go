package provider

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
)

// The edition changes with the first column written after each open, and
// only when a column changes: unchanged stores, cached or not, leave it.
func TestEdition(t *testing.T) {
	dir := t.TempDir()
	pos := world.ChunkPos{3, 4}
	col := worldtest.Synthetic(5, world.Overworld, world.DefaultBlockRegistry)
	db := openDB(t, dir, Config{})
	if !db.Edition().IsZero() {
		t.Fatalf("a new world has edition %v", db.Edition())
	}
	if err := storeNow(db, pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	e1 := db.Edition()
	if e1.IsZero() {
		t.Fatal("a store left the edition zero")
	}
	other := worldtest.Synthetic(6, world.Overworld, world.DefaultBlockRegistry)
	if err := storeNow(db, world.ChunkPos{9, 9}, world.Overworld, other); err != nil {
		t.Fatal(err)
	}
	if db.Edition() != e1 {
		t.Fatal("a second store in one session changed the edition")
	}
	db.Close()

	if ro := openDB(t, dir, Config{ReadOnly: true}); ro.Edition() != e1 {
		t.Fatalf("read-only open: edition %v, want %v", ro.Edition(), e1)
	} else {
		ro.Close()
	}
	for _, cache := range []int64{-1, 0} {
		db = openDB(t, dir, Config{ColumnCacheBytes: cache})
		if cache == 0 {
			if _, err := db.LoadColumn(pos, world.Overworld); err != nil {
				t.Fatal(err)
			}
		}
		if err := storeNow(db, pos, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
		if db.Edition() != e1 {
			t.Fatalf("an unchanged store (column cache %d) changed the edition", cache)
		}
		db.Close()
	}

	db = openDB(t, dir, Config{})
	col.Chunk.SetBlock(1, 1, 1, 0, worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"])
	if err := storeNow(db, pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	e2 := db.Edition()
	if e2 == e1 || e2.IsZero() {
		t.Fatalf("a changed column left the edition %v (was %v)", e2, e1)
	}
	db.Close()
	if db = openDB(t, dir, Config{}); db.Edition() != e2 {
		t.Fatalf("reopened: edition %v, want %v", db.Edition(), e2)
	}
}

// The three dimensions' first stores race for the new edition; every
// column is written under it, and the one in memory is the one stored.
func TestEditionConcurrentFirstStores(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	var wg sync.WaitGroup
	for id := range 3 {
		dim, _ := world.DimensionByID(id)
		wg.Go(func() {
			for i := range 4 {
				col := worldtest.Synthetic(uint64(10*id+i), dim, world.DefaultBlockRegistry)
				if err := storeNow(db, world.ChunkPos{int32(i), 0}, dim, col); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	e := db.Edition()
	db.Close()
	if db = openDB(t, dir, Config{}); e.IsZero() || db.Edition() != e {
		t.Fatalf("edition %v in memory, %v stored", e, db.Edition())
	}
}

// After a crash, a column that changed is never found under the edition it
// had before: the new edition goes in the same atomic batch.
func TestEditionCrash(t *testing.T) {
	pos := world.ChunkPos{0, 0}
	col := worldtest.Synthetic(7, world.Overworld, world.DefaultBlockRegistry)
	base := vfstest.NewMem()
	db, err := Config{FS: base, Log: quiet}.Open("/w")
	if err != nil {
		t.Fatal(err)
	}
	if err := storeNow(db, pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	e1 := db.Edition()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Changed to a state the world already holds, so that the batch is
	// the column and the edition alone, without block dictionary entries.
	changed := worldtest.Synthetic(7, world.Overworld, world.DefaultBlockRegistry)
	changed.Chunk.SetBlock(2, 2, 2, 0, changed.Chunk.Block(2, 100, 2, 0))
	if changed.Chunk.Block(2, 2, 2, 0) == col.Chunk.Block(2, 2, 2, 0) {
		t.Fatal("the change changes nothing")
	}

	var kept, lost int
	for seed := range uint64(200) {
		mem := base.CrashClone(nil, 0)
		db, err := Config{FS: mem, Log: quiet, Durability: blazedb.DurabilityFast}.Open("/w")
		if err != nil {
			t.Fatal(err)
		}
		// Another column first, so that the changed one is not the first
		// write: its record must still not outlive the edition's.
		if err := storeNow(db, world.ChunkPos{5, 5}, world.Overworld, worldtest.Synthetic(8, world.Overworld, world.DefaultBlockRegistry)); err != nil {
			t.Fatal(err)
		}
		if err := storeNow(db, pos, world.Overworld, changed); err != nil {
			t.Fatal(err)
		}
		after := mem.CrashClone(rand.New(rand.NewPCG(seed, 3)), 0.5)
		db.Discard()
		re, err := Config{FS: after, Log: quiet}.Open("/w")
		if err != nil {
			t.Fatalf("seed %d: reopen: %v", seed, err)
		}
		got, err := re.LoadColumn(pos, world.Overworld)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		isNew := worldtest.Compare(changed, got) == nil
		if isNew && re.Edition() == e1 {
			t.Fatalf("seed %d: the changed column is there under the old edition", seed)
		}
		if isNew {
			kept++
		} else {
			lost++
		}
		re.Close()
	}
	if kept == 0 || lost == 0 {
		t.Fatalf("the crashes kept the change %d times and lost it %d times; the test needs both", kept, lost)
	}
}

// A damaged edition record, or damage the engine skipped, gives the world a
// new edition: whatever was built on the old one must not take it for
// unchanged. A writable open stores it; a read-only one cannot, so each
// gives a new one.
func TestEditionAfterDamage(t *testing.T) {
	dir := t.TempDir()
	e1 := editionWorld(t, dir)
	// The edition is the first entry of the first batch: bytes 196 to 258,
	// after the file header, its copy, the time mark the first write
	// carries (blazedb/timeline.go) and the batch's own header.
	flipByte(t, filepath.Join(dir, engineDir, "chunks.dat"), 228)
	var seen []Edition
	for range 2 {
		ro := openDB(t, dir, Config{ReadOnly: true})
		if e := ro.Edition(); e == e1 || e.IsZero() || slices.Contains(seen, e) {
			t.Fatalf("damaged edition record: edition %v (was %v, then %v)", e, e1, seen)
		}
		seen = append(seen, ro.Edition())
		ro.Close()
	}
	// Without index.dat the scan skips the whole batch: the first column
	// falls back (here, to nothing), and the edition is new again.
	os.Remove(filepath.Join(dir, engineDir, "index.dat"))
	db := openDB(t, dir, Config{})
	if len(db.Engine().Recovery().Corrupt) == 0 {
		t.Fatal("the scan skipped nothing")
	}
	e2 := db.Edition()
	if e2 == e1 || e2.IsZero() || slices.Contains(seen, e2) {
		t.Fatalf("skipped damage: edition %v (was %v, then %v)", e2, e1, seen)
	}
	db.Close() // writes an index.dat that no longer tells of the damage
	if db = openDB(t, dir, Config{ReadOnly: true}); db.Edition() != e2 {
		t.Fatalf("edition %v after the damage was skipped, %v stored", e2, db.Edition())
	}
}

// Repair gives a world whose columns it put back or deleted a new edition,
// and leaves that of an intact world alone.
func TestRepairEdition(t *testing.T) {
	dir := t.TempDir()
	e1 := editionWorld(t, dir)
	if _, err := (Config{Log: quiet}).Repair(dir); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, dir, Config{ReadOnly: true})
	if db.Edition() != e1 {
		t.Fatal("repairing an intact world changed its edition")
	}
	// The last column's record, which index.dat points at: a synthetic
	// column's record is well over 2,000 bytes, and what may follow it at
	// the end of the log is sync marks of 36 bytes (Close's, and one of the
	// background sync's when the store queue wrote the columns in more than
	// one batch), so a byte 2,000 from the end is the column's whatever
	// the batches were.
	st := db.Engine().Stats()
	db.Close()
	flipByte(t, filepath.Join(dir, engineDir, "chunks.dat"), st.LogBytes-2000)
	rep, err := Config{Log: quiet}.Repair(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Keys) != 1 {
		t.Fatalf("repair mended %v", rep.Keys)
	}
	db = openDB(t, dir, Config{ReadOnly: true})
	if e := db.Edition(); e == e1 || e.IsZero() {
		t.Fatalf("after repair: edition %v (was %v)", e, e1)
	}
}

// editionWorld stores three columns in a new world in dir, closes it and
// returns its edition.
func editionWorld(t *testing.T, dir string) Edition {
	t.Helper()
	db := openDB(t, dir, Config{})
	for i := range 3 {
		if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)); err != nil {
			t.Fatal(err)
		}
	}
	// The edition is made with the first columns written: the store
	// queue's, written by Sync.
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	e := db.Edition()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return e
}

// A backup has an edition of its own: the world goes on writing under its
// edition after the copy is taken.
func TestBackupEdition(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	if err := db.StoreColumn(world.ChunkPos{}, world.Overworld, worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	bdir := filepath.Join(t.TempDir(), "copy")
	if err := db.Backup(bdir); err != nil {
		t.Fatal(err)
	}
	b := openDB(t, bdir, Config{ReadOnly: true})
	if e := b.Edition(); e == db.Edition() || e.IsZero() {
		t.Fatalf("the copy's edition is %v, the world's %v", e, db.Edition())
	}
}

func TestParseEdition(t *testing.T) {
	e := Edition{0xab, 0xcd, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	if got, err := parseEdition(encodeEdition(e)); err != nil || got != e {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	if got, err := ParseEdition(e.String()); err != nil || got != e {
		t.Fatalf("string round trip: %v, %v", got, err)
	}
	for _, tc := range []struct {
		b    []byte
		want error
	}{
		{nil, blazedb.ErrCorrupt},
		{encodeEdition(e)[:16], blazedb.ErrCorrupt},
		{append(encodeEdition(e), 0), blazedb.ErrCorrupt},
		{encodeEdition(Edition{}), blazedb.ErrCorrupt},
		{append([]byte{0}, e[:]...), blazedb.ErrCorrupt},
		{append([]byte{editionVersion + 1}, e[:]...), blazedb.ErrVersion},
	} {
		if _, err := parseEdition(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("parseEdition(%x) = %v, want %v", tc.b, err, tc.want)
		}
	}
	for _, s := range []string{"", "00", e.String()[1:], e.String() + "0", "G" + e.String()[1:], string(bytes.ToUpper([]byte(e.String())))} {
		if _, err := ParseEdition(s); !errors.Is(err, blazedb.ErrCorrupt) {
			t.Errorf("ParseEdition(%q) = %v", s, err)
		}
	}
}

// FuzzParseEdition: both decoders refuse or round-trip, and never panic.
func FuzzParseEdition(f *testing.F) {
	f.Add(encodeEdition(newEdition()))
	f.Add([]byte(newEdition().String()))
	f.Add([]byte{editionVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		if e, err := parseEdition(b); err == nil && !bytes.Equal(encodeEdition(e), b) {
			t.Fatalf("%x read as %v, which encodes differently", b, e)
		}
		if e, err := ParseEdition(string(b)); err == nil && e.String() != string(b) {
			t.Fatalf("%q read as %v", b, e)
		}
	})
}

// With Dragonfly's World: a session that only looks at the world keeps its
// edition; one that sets a block gives it a new one.
func TestEditionWithDragonfly(t *testing.T) {
	dir := t.TempDir()
	session := func(fn func(tx *world.Tx)) Edition {
		t.Helper()
		db := openDB(t, dir, Config{})
		w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
		<-w.Do(fn).Done()
		if err := w.Close(); err != nil { // saves what changed, closes db
			t.Fatal(err)
		}
		return db.Edition()
	}
	pos := cube.Pos{5, 64, 5}
	e1 := session(func(tx *world.Tx) { tx.SetBlock(pos, block.Stone{}, nil) })
	if e1.IsZero() {
		t.Fatal("a World's stores left the edition zero")
	}
	if e := session(func(tx *world.Tx) {
		if _, ok := tx.Block(pos).(block.Stone); !ok {
			t.Errorf("the stone is %T", tx.Block(pos))
		}
	}); e != e1 {
		t.Fatal("a session that only read the world changed its edition")
	}
	if e := session(func(tx *world.Tx) { tx.SetBlock(pos, block.Obsidian{}, nil) }); e == e1 || e.IsZero() {
		t.Fatalf("a session that set a block left the edition %v (was %v)", e, e1)
	}
}
