package blazedb

import (
	"bytes"
	"errors"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// Repair puts each key whose newest record is damaged back at its newest
// intact older version (from a plain record or a batch), deletes a key
// with none left (never written before, or deleted since), and compacts
// the damage away; a damaged database then checks clean and compacts again.
func TestRepair(t *testing.T) {
	fs := vfs.NewMem()
	opts := Options{FS: fs, Logger: quiet, DisableAutoCompaction: true}
	a, b, c, d, e := Key{X: 1}, Key{X: 2}, Key{X: 3}, Key{X: 4}, Key{X: 5, Dim: 1}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	var batch Batch
	batch.Put(c, value(30, 500))
	batch.Put(d, value(40, 500))
	steps := []error{
		db.Put(a, value(10, 500)),
		db.Put(a, value(11, 500)), // damaged below: back to 10
		db.Put(b, value(20, 500)), // damaged, the only version: deleted
		db.Apply(&batch),
		db.Put(c, value(31, 500)), // damaged: back to 30, from the batch
		db.Put(e, value(50, 500)),
		db.Delete(e),
		db.Put(e, value(51, 500)), // damaged, deleted before: deleted
		db.PutNamed("n", value(60, 100)),
		db.PutNamed("n", value(61, 100)), // damaged: back to 60
	}
	if err := errors.Join(steps...); err != nil {
		t.Fatal(err)
	}
	damaged := []rkey{{chunk: a}, {chunk: b}, {chunk: c}, {chunk: e}, {named: true, name: "n"}}
	var offs []int64
	db.mu.RLock()
	for _, k := range damaged {
		en, _ := db.idx.get(k)
		offs = append(offs, en.off+int64(en.size)/2)
	}
	db.mu.RUnlock()
	if err := db.Close(); err != nil { // index.dat covers every record: Open will not scan them
		t.Fatal(err)
	}
	log, _ := fs.ReadFile("/db/chunks.dat")
	for _, off := range offs {
		log[off] ^= 0xff
	}
	fs.WriteFile("/db/chunks.dat", log)

	db, err = Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(a); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged a: %v", err)
	}
	if err := db.Compact(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("compaction over damage: %v", err)
	}
	db.Close()

	// Options under which compaction starts by itself at the least garbage
	// (Repair turns it off for its own run).
	rep, err := Repair("/db", Options{FS: fs, Logger: quiet, CompactMinBytes: 1, CompactGarbageRatio: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Compacted || len(rep.Keys) != len(damaged) {
		t.Fatalf("report %+v", rep)
	}
	restored := map[string]bool{}
	for _, r := range rep.Keys {
		if !errors.Is(r.Err, ErrCorrupt) {
			t.Fatalf("%+v: not a read error", r)
		}
		k := rkey{named: r.Named, name: r.Name, chunk: r.Key}
		restored[k.String()] = r.Restored
	}
	want := map[string]bool{rkey{chunk: a}.String(): true, rkey{chunk: b}.String(): false, rkey{chunk: c}.String(): true,
		rkey{chunk: e}.String(): false, rkey{named: true, name: "n"}.String(): true}
	for k, v := range want {
		if got, ok := restored[k]; !ok || got != v {
			t.Fatalf("%s: restored %v (reported %v), want %v", k, got, ok, v)
		}
	}

	db = open(t, fs, "/db", opts) // the cleanup runs Check
	for k, v := range map[Key][]byte{a: value(10, 500), c: value(30, 500), d: value(40, 500)} {
		if got := mustGet(t, db, k); !bytes.Equal(got, v) {
			t.Fatalf("%v after repair: wrong value", k)
		}
	}
	for _, k := range []Key{b, e} {
		if _, err := db.Get(k); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%v after repair: %v", k, err)
		}
	}
	if v, err := db.GetNamed("n"); err != nil || !bytes.Equal(v, value(60, 100)) {
		t.Fatalf("n after repair: %v", err)
	}
	if err := db.Compact(); err != nil {
		t.Fatalf("compaction after repair: %v", err)
	}
	if st := db.Stats(); st.GarbageBytes != 0 {
		t.Fatalf("%d bytes of garbage after repair and compaction", st.GarbageBytes)
	}
}

// Repair of an intact database changes nothing, and refuses a read-only
// open.
func TestRepairIntact(t *testing.T) {
	fs := vfs.NewMem()
	db := open(t, fs, "/db", Options{})
	for i := range 20 {
		db.Put(Key{X: int32(i)}, value(i, 300))
	}
	db.Close()
	before, _ := fs.ReadFile("/db/chunks.dat")
	rep, err := Repair("/db", Options{FS: fs, Logger: quiet})
	if err != nil || len(rep.Keys) != 0 || len(rep.Skipped) != 0 || rep.Compacted {
		t.Fatalf("repair of an intact database: %+v %v", rep, err)
	}
	if after, _ := fs.ReadFile("/db/chunks.dat"); !bytes.Equal(before, after) {
		t.Fatal("repair of an intact database changed its log")
	}
	if _, err := Repair("/db", Options{FS: fs, Logger: quiet, ReadOnly: true}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only repair: %v", err)
	}
}
