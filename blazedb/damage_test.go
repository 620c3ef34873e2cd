package blazedb

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// Issue 35 item 11: one damaged live record stopped every compaction for
// good, was reported once (one Sync error; later Sync and Close returned
// nil) and the log grew without bound. Compaction now goes on around it,
// carrying the damaged record as it is and its key's newest intact older
// version beside it; the damage is reported by every Sync, Compact and
// Close, by Maintain after each compaction, and in Stats; Repair still
// goes back to the older version afterwards.
// These tests keep no history (History: -1): they are about a damaged
// live record; history_test.go covers damaged versions the history keeps.
func TestCompactionCarriesDamagedRecord(t *testing.T) {
	fs := vfstest.NewMem()
	opts := Options{FS: fs, Logger: quiet, ExternalMaintenance: true, CompactMinBytes: 1, CompactGarbageRatio: 0.5, History: -1}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	a, b := Key{X: 1}, Key{X: 200} // a has an older version, b has none; others lie between
	steps := []error{db.Put(a, value(10, 500)), db.Put(a, value(11, 500)), db.Put(b, value(20, 500))}
	for i := range 10 {
		steps = append(steps, db.Put(Key{X: 100 + int32(i)}, value(100+i, 500)))
	}
	if err := errors.Join(steps...); err != nil {
		t.Fatal(err)
	}
	var offs []int64
	db.mu.RLock()
	for _, k := range []Key{a, b} {
		e, _ := db.idx.get(rkey{chunk: k})
		offs = append(offs, e.off+int64(e.size)/2)
	}
	db.mu.RUnlock()
	if err := db.Close(); err != nil { // index.dat covers the records: Open will not scan them
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
	damaged := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), a.String()) || !strings.Contains(err.Error(), b.String()) {
			t.Fatalf("%s: %v", what, err)
		}
	}
	var compactions int64
	for round := range 40 {
		for i := range 10 {
			if err := db.Put(Key{X: 100 + int32(i)}, value(1000*round+i, 500)); err != nil {
				t.Fatal(err)
			}
		}
		err := db.Maintain()
		if n := db.Stats().Compactions; n > compactions {
			compactions = n
			damaged("Maintain after a compaction", err)
		} else if err != nil {
			t.Fatalf("Maintain without a compaction: %v", err)
		}
		if compactions > 0 {
			damaged("Sync", db.Sync())
			if n := db.Stats().DamagedKeys; n != 2 {
				t.Fatalf("Stats.DamagedKeys %d, want 2", n)
			}
		}
	}
	st := db.Stats()
	if st.Compactions < 5 {
		t.Fatalf("%d compactions: damage stopped them", st.Compactions)
	}
	if max := 4 * (st.LiveBytes + 10*600); st.LogBytes > max {
		t.Fatalf("the log grew to %d bytes for %d live", st.LogBytes, st.LiveBytes)
	}
	damaged("Compact", db.Compact())
	damaged("Compact again", db.Compact())
	if st := db.Stats(); st.GarbageBytes != 0 {
		t.Fatalf("%d bytes of garbage after compaction: the kept older version counts as garbage", st.GarbageBytes)
	}
	for _, k := range []Key{a, b} {
		if _, err := db.Get(k); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%v after compactions: %v, want the damage as it was", k, err)
		}
	}
	damaged("Check", db.Check())
	damaged("Close", db.Close())

	// Should index.dat be lost, a scan of the compacted log skips the
	// damage, reports it, and falls back to the kept older version, as
	// Open does with decay.
	fs.Remove("/db/index.dat")
	db, err = Open("/db", Options{FS: fs, Logger: quiet, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := db.Recovery(); len(r.Corrupt) != 2 {
		t.Fatalf("a scan of the compacted log: %+v", r)
	}
	if got, err := db.Get(a); err != nil || !bytes.Equal(got, value(10, 500)) {
		t.Fatalf("a after a scan: %v", err)
	}
	db.Close()

	// Repair can still go back to a's older version, and deletes b.
	rep, err := Repair("/db", Options{FS: fs, Logger: quiet, History: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Keys) != 0 || len(rep.Skipped) != 2 {
		// Open scanned (no index.dat): it skipped the damage itself.
		t.Fatalf("repair: %+v", rep)
	}
	db = open(t, fs, "/db", Options{}) // the cleanup runs Check
	if got, err := db.Get(a); err != nil || !bytes.Equal(got, value(10, 500)) {
		t.Fatalf("a after repair: %v", err)
	}
	if _, err := db.Get(b); !errors.Is(err, ErrNotFound) {
		t.Fatalf("b after repair: %v", err)
	}
	if err := errors.Join(db.Sync(), db.Compact()); err != nil {
		t.Fatalf("after repair: %v", err)
	}
}

// Issue 35 item 11: a damaged entry of a batch is carried too, each
// compaction that carries it logs it, and the older version kept beside it
// comes from a batch as well as from a plain put.
func TestCompactionCarriesDamagedBatchEntry(t *testing.T) {
	fs := vfstest.NewMem()
	var logged bytes.Buffer
	opts := Options{FS: fs, Logger: slog.New(slog.NewTextHandler(&logged, nil)), DisableAutoCompaction: true, History: -1}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	a, b := Key{X: 1}, Key{X: 2}
	var first, second Batch
	first.Put(a, value(10, 300))
	first.Put(b, value(20, 300))
	second.Put(a, value(11, 300))
	second.Put(b, value(21, 300))
	if err := errors.Join(db.Apply(&first), db.Apply(&second), db.Put(Key{X: 3}, value(30, 300))); err != nil {
		t.Fatal(err)
	}
	db.mu.RLock()
	e, _ := db.idx.get(rkey{chunk: a})
	db.mu.RUnlock()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	log, _ := fs.ReadFile("/db/chunks.dat")
	log[e.off+int64(e.size)/2] ^= 0xff
	fs.WriteFile("/db/chunks.dat", log)

	db, err = Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := db.Compact(); !IsDamageReport(err) || !strings.Contains(err.Error(), a.String()) {
			t.Fatalf("Compact %d: %v", i, err)
		}
	}
	if n := strings.Count(logged.String(), "compaction kept damaged live records"); n != 2 {
		t.Fatalf("%d log lines for 2 compactions that carried damage:\n%s", n, logged.String())
	}
	if got, err := db.Get(b); err != nil || !bytes.Equal(got, value(21, 300)) {
		t.Fatalf("b, from the batch with the damaged entry: %v", err)
	}
	if _, err := db.Get(a); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a: %v", err)
	}
	if err := db.Close(); !IsDamageReport(err) {
		t.Fatalf("Close: %v", err)
	}
	rep, err := Repair("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Keys) != 1 || !rep.Keys[0].Restored {
		t.Fatalf("repair: %+v", rep)
	}
	db = open(t, fs, "/db", Options{})
	if got, err := db.Get(a); err != nil || !bytes.Equal(got, value(10, 300)) {
		t.Fatalf("a after repair: %v", err)
	}
}

// IsDamageReport tells the report of carried damage from a failure, and
// from the two joined.
func TestIsDamageReport(t *testing.T) {
	d := damageError([]carriedKey{{k: rkey{chunk: Key{X: 1}}, c: carried{reason: "bad"}}})
	other := errors.New("disk on fire")
	cases := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{other, false},
		{d, true},
		{fmt.Errorf("blazedb: close /db: %w", errors.Join(d)), true},
		{fmt.Errorf("blazedb: sync: %w", errors.Join(other, d)), false},
		{ErrCorrupt, false},
	}
	for _, c := range cases {
		if got := IsDamageReport(c.err); got != c.want {
			t.Errorf("IsDamageReport(%v) = %v", c.err, got)
		}
	}
	if !errors.Is(d, ErrCorrupt) {
		t.Error("a damage report does not wrap ErrCorrupt")
	}
}

// Issue 35 item 11: a crash at any point of a compaction that carries
// damaged records loses nothing: the database opens with every intact
// value, and a repair then leaves what it leaves without the crash (the
// older versions compaction kept are there to go back to).
func TestCarryingCompactionCrashSafe(t *testing.T) {
	opts := Options{Logger: quiet, DisableAutoCompaction: true, History: -1}
	crashEverywhere(t, damagedDB(t), 3, opts, func(fs vfs.FS) error {
		o := opts
		o.FS = fs
		db, err := Open("/db", o)
		if err != nil {
			return err
		}
		err = db.Compact()
		return errors.Join(err, db.Close())
	}, IsDamageReport)
}

// A compaction that meets damage for the first time after it has written
// more than its buffer starts its file again (appender.restart), and the
// file it installs holds every record once.
func TestCarryingCompactionRestartsItsFile(t *testing.T) {
	fs := vfstest.NewMem()
	opts := Options{FS: fs, Logger: quiet, DisableAutoCompaction: true, Compression: CompressionNone, History: -1}
	db := open(t, fs, "/db", opts)
	last := Key{X: 1000}
	for i := range 40 {
		if err := db.Put(Key{X: int32(i)}, value(i, 64<<10)); err != nil {
			t.Fatal(err)
		}
	}
	db.Put(last, value(1, 1000))
	db.Put(last, value(2, 1000))
	db.mu.RLock()
	e, _ := db.idx.get(rkey{chunk: last})
	live := db.idx.live
	db.mu.RUnlock()
	db.Close()
	log, _ := fs.ReadFile("/db/chunks.dat")
	log[e.off+int64(e.size)/2] ^= 0xff
	fs.WriteFile("/db/chunks.dat", log)

	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(); !IsDamageReport(err) {
		t.Fatalf("Compact: %v", err)
	}
	st := db.Stats()
	if want := fileHeaderSize + headerCopySize + st.HistoryBytes + live + int64(e.size) + markSize; st.LogBytes != want || st.DamagedKeys != 1 {
		t.Fatalf("compacted log of %d bytes, want %d (the header and its copy, time marks, live, the older version, a mark); %d damaged keys", st.LogBytes, want, st.DamagedKeys)
	}
	for i := range 40 {
		if got, err := db.Get(Key{X: int32(i)}); err != nil || !bytes.Equal(got, value(i, 64<<10)) {
			t.Fatalf("key %d after compaction: %v", i, err)
		}
	}
	db.Close()
	if rep, err := Repair("/db", opts); err != nil || len(rep.Keys) != 1 || !rep.Keys[0].Restored {
		t.Fatalf("repair: %+v, %v", rep, err)
	}
	db = open(t, fs, "/db", opts)
	if got, err := db.Get(last); err != nil || !bytes.Equal(got, value(1, 1000)) {
		t.Fatalf("the damaged key after repair: %v", err)
	}
}
