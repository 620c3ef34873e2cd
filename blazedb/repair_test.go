package blazedb

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// Repair puts each key whose newest record is damaged back at its newest
// intact older version (from a plain record or a batch), deletes a key
// with none left (never written before, or deleted since), and compacts
// the damage away; a damaged database then checks clean and compacts again.
// The keys of damagedDB and what a repair leaves of them: a, c, f and the
// named key "n" go back to older versions (f past a damaged one), b and e
// are deleted, d was never damaged.
var (
	repA, repB, repC, repD, repE = Key{X: 1}, Key{X: 2}, Key{X: 3}, Key{X: 4}, Key{X: 5, Dim: 1}
	repF                         = Key{X: 6}
	repairedValues               = map[Key][]byte{repA: value(10, 500), repC: value(30, 500), repD: value(40, 500), repF: value(70, 500)}
	repairedGone                 = []Key{repB, repE}
	repairedNamed                = value(60, 100)
)

// damagedDB returns a database on fs at /db, closed and synced, whose
// newest records of a, b, c, e, f and "n" (and f's one before) are damaged
// while index.dat covers them, so Open does not see the damage.
func damagedDB(t *testing.T) *vfstest.MemFS {
	t.Helper()
	fs := vfstest.NewMem()
	opts := Options{FS: fs, Logger: quiet, DisableAutoCompaction: true}
	a, b, c, d, e := repA, repB, repC, repD, repE
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
	var offs []int64
	middle := func(k rkey) int64 {
		en, _ := db.idx.get(k)
		return en.off + int64(en.size)/2
	}
	// f: 70, then 71 and 72 both damaged: back to 70 (the scan for older
	// versions passes over 71 as over any damaged record).
	f := rkey{chunk: repF}
	if err := errors.Join(db.Put(repF, value(70, 500)), db.Put(repF, value(71, 500))); err != nil {
		t.Fatal(err)
	}
	db.mu.RLock()
	offs = append(offs, middle(f))
	db.mu.RUnlock()
	if err := db.Put(repF, value(72, 500)); err != nil {
		t.Fatal(err)
	}
	damaged := []rkey{{chunk: a}, {chunk: b}, {chunk: c}, {chunk: e}, f, {named: true, name: "n"}}
	db.mu.RLock()
	for _, k := range damaged {
		offs = append(offs, middle(k))
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
	return fs
}

// checkRepaired fails unless db holds what a repair of damagedDB leaves.
func checkRepaired(t *testing.T, db *DB) {
	t.Helper()
	for k, v := range repairedValues {
		if got, err := db.Get(k); err != nil || !bytes.Equal(got, v) {
			t.Fatalf("%v after repair: %v", k, err)
		}
	}
	for _, k := range repairedGone {
		if _, err := db.Get(k); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%v after repair: %v", k, err)
		}
	}
	if v, err := db.GetNamed("n"); err != nil || !bytes.Equal(v, repairedNamed) {
		t.Fatalf("n after repair: %v", err)
	}
}

func TestRepair(t *testing.T) {
	fs := damagedDB(t)
	opts := Options{FS: fs, Logger: quiet, DisableAutoCompaction: true}
	a, b, c, e := repA, repB, repC, repE
	damaged := []rkey{{chunk: a}, {chunk: b}, {chunk: c}, {chunk: e}, {chunk: repF}, {named: true, name: "n"}}
	db, err := Open("/db", opts)
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
		rkey{chunk: e}.String(): false, rkey{chunk: repF}.String(): true, rkey{named: true, name: "n"}.String(): true}
	for k, v := range want {
		if got, ok := restored[k]; !ok || got != v {
			t.Fatalf("%s: restored %v (reported %v), want %v", k, got, ok, v)
		}
	}

	db = open(t, fs, "/db", opts) // the cleanup runs Check
	checkRepaired(t, db)
	if err := db.Compact(); err != nil {
		t.Fatalf("compaction after repair: %v", err)
	}
	if st := db.Stats(); st.GarbageBytes != 0 {
		t.Fatalf("%d bytes of garbage after repair and compaction", st.GarbageBytes)
	}
}

// A crash at any point of a repair leaves a database that opens, still
// holds every intact value, and that a second repair finishes mending.
func TestRepairCrashSafe(t *testing.T) {
	crashEverywhere(t, damagedDB(t), 8, Options{}, func(fs vfs.FS) error {
		_, err := Repair("/db", Options{FS: fs, Logger: quiet})
		return err
	}, func(err error) bool { return err == nil })
}

// crashEverywhere runs run on a copy of the database damagedDB made in
// base, to count the filesystem operations it makes, then once with a
// crash after each of them; finished tells the error of a run that went
// to its end. After each crash, keeping none and half of the writes not
// synced, the database must open (with opts) holding the intact key, and
// a repair must mend it as one without the crash does.
func crashEverywhere(t *testing.T, base *vfstest.MemFS, seed uint64, opts Options, run func(vfs.FS) error, finished func(error) bool) {
	t.Helper()
	whole := base.CrashClone(nil, 0) // everything is synced: an exact copy
	start := whole.Ops()
	if err := run(whole); !finished(err) {
		t.Fatalf("without a crash: %v", err)
	}
	total := whole.Ops() - start
	t.Logf("%d operations", total)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for k := 1; k <= total; k++ {
		fs := base.CrashClone(nil, 0)
		fs.CrashAfter(k)
		if err := run(fs); finished(err) {
			t.Fatalf("crash at operation %d of %d: no failure: %v", k, total, err)
		}
		for _, keep := range []float64{0, 0.5} {
			after := fs.CrashClone(rng, keep)
			o := opts
			o.FS, o.Logger = after, quiet
			db, err := Open("/db", o)
			if err != nil {
				t.Fatalf("crash at operation %d, keep %v: open: %v", k, keep, err)
			}
			if got, err := db.Get(repD); err != nil || !bytes.Equal(got, repairedValues[repD]) {
				t.Fatalf("crash at operation %d, keep %v: the intact key: %v", k, keep, err)
			}
			db.Close()
			if _, err := Repair("/db", Options{FS: after, Logger: quiet}); err != nil {
				t.Fatalf("crash at operation %d, keep %v: repair: %v", k, keep, err)
			}
			db = open(t, after, "/db", Options{}) // the cleanup runs Check
			checkRepaired(t, db)
			db.Close()
		}
	}
}

// Damage confined to an old version harms nothing while index.dat covers
// it, but a scan after index.dat is lost must find its way past it: Repair
// reports it and compacts it away.
func TestRepairDamagedOldVersion(t *testing.T) {
	fs := vfstest.NewMem()
	opts := Options{FS: fs, Logger: quiet, DisableAutoCompaction: true}
	db := open(t, fs, "/db", opts)
	k := Key{X: 7}
	db.Put(k, value(1, 800))
	db.mu.RLock()
	old, _ := db.idx.get(rkey{chunk: k})
	db.mu.RUnlock()
	db.Put(k, value(2, 800))
	db.Put(Key{X: 8}, value(3, 800))
	db.Close()
	log, _ := fs.ReadFile("/db/chunks.dat")
	log[old.off+int64(old.size)/2] ^= 0xff
	fs.WriteFile("/db/chunks.dat", log)

	rep, err := Repair("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Keys) != 0 || len(rep.Found) != 1 || !rep.Compacted {
		t.Fatalf("report %+v", rep)
	}
	fs.Remove("/db/index.dat") // the next Open scans the whole log
	db = open(t, fs, "/db", opts)
	if rec := db.Recovery(); rec.IndexLoaded || len(rec.Corrupt) != 0 {
		t.Fatalf("a scan after repair: %+v", rec)
	}
	if got := mustGet(t, db, k); !bytes.Equal(got, value(2, 800)) {
		t.Fatal("the live version changed")
	}
}

// Repair of an intact database changes nothing; it refuses a read-only
// open and a directory without a database.
func TestRepairIntact(t *testing.T) {
	fs := vfstest.NewMem()
	db := open(t, fs, "/db", Options{})
	for i := range 20 {
		db.Put(Key{X: int32(i)}, value(i, 300))
	}
	db.Close()
	before, _ := fs.ReadFile("/db/chunks.dat")
	rep, err := Repair("/db", Options{FS: fs, Logger: quiet})
	if err != nil || len(rep.Keys) != 0 || len(rep.Skipped) != 0 || len(rep.Found) != 0 || rep.Compacted {
		t.Fatalf("repair of an intact database: %+v %v", rep, err)
	}
	if after, _ := fs.ReadFile("/db/chunks.dat"); !bytes.Equal(before, after) {
		t.Fatal("repair of an intact database changed its log")
	}
	if _, err := Repair("/db", Options{FS: fs, Logger: quiet, ReadOnly: true}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only repair: %v", err)
	}
	// Nothing to repair: refused, and no database made there.
	if _, err := Repair("/nowhere", Options{FS: fs, Logger: quiet}); !errors.Is(err, vfs.ErrNotExist) {
		t.Fatalf("repair of a missing database: %v", err)
	}
	if _, err := fs.List("/nowhere"); err == nil {
		t.Fatal("repair made a directory")
	}
}

// Repair restores the newest older version whose value reads, passing over
// versions whose records are whole but whose values are not (a value
// checksum that does not match), as it passes over records damaged
// outright; a key with no such version left is deleted.
func TestRepairPassesOverDamagedValues(t *testing.T) {
	fs := vfstest.NewMem()
	opts := Options{FS: fs, Logger: quiet, DisableAutoCompaction: true, Compression: CompressionNone}
	db := open(t, fs, "/db", opts)
	g, h := Key{X: 1}, Key{X: 2}
	var damaged []entry
	put := func(k Key, v []byte, damage bool) {
		if err := db.Put(k, v); err != nil {
			t.Fatal(err)
		}
		if damage {
			db.mu.RLock()
			e, _ := db.idx.get(rkey{chunk: k})
			db.mu.RUnlock()
			damaged = append(damaged, e)
		}
	}
	put(g, value(1, 300), false)
	put(g, value(2, 300), true)
	put(g, value(3, 300), true)
	put(h, value(4, 300), true)
	put(h, value(5, 300), true)
	db.Close()
	log, _ := fs.ReadFile("/db/" + logName)
	for _, e := range damaged {
		spoilValueSum(log[e.off : e.off+int64(e.size)])
	}
	fs.WriteFile("/db/"+logName, log)

	rep, err := Repair("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Keys) != 2 {
		t.Fatalf("report %+v", rep)
	}
	db = open(t, fs, "/db", opts)
	if got, err := db.Get(g); err != nil || !bytes.Equal(got, value(1, 300)) {
		t.Fatalf("g after repair: %v (want its first version)", err)
	}
	if _, err := db.Get(h); !errors.Is(err, ErrNotFound) {
		t.Fatalf("h after repair: %v", err)
	}
}
