package blazedb

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// aliasWorld writes an arena of n×n columns in dimension 0, all holding
// one value but a few, and returns it with the values written.
func aliasWorld(t *testing.T, n int, o Options) (*vfstest.MemFS, *DB, map[Key][]byte) {
	fs := vfstest.NewMem()
	fs.MkdirAll("/db", 0o755)
	o.DisableAutoCompaction = true
	db := open(t, fs, "/db", o)
	same := bytes.Repeat([]byte("a flat arena's column, the same everywhere "), 20)
	want := map[Key][]byte{}
	for x := range n {
		for z := range n {
			k := Key{X: int32(x), Z: int32(z)}
			v := same
			if x == 1 && z < 2 {
				v = []byte(fmt.Sprintf("an island at %d %d", x, z))
			}
			if err := db.Put(k, v); err != nil {
				t.Fatal(err)
			}
			want[k] = v
		}
	}
	// Two of another value in another dimension, and a named key with the
	// common value, which is never aliased.
	for _, k := range []Key{{Dim: 1, X: 9}, {Dim: 1, X: -9}} {
		if err := db.Put(k, []byte("the nether's one column, twice")); err != nil {
			t.Fatal(err)
		}
		want[k] = []byte("the nether's one column, twice")
	}
	if err := db.PutNamed("level", same); err != nil {
		t.Fatal(err)
	}
	return fs, db, want
}

func checkValues(t *testing.T, db *DB, want map[Key][]byte) {
	t.Helper()
	for k, v := range want {
		if got := mustGet(t, db, k); !bytes.Equal(got, v) {
			t.Fatalf("%v reads %q, want %q", k, got, v)
		}
	}
}

// logRecords lists the offsets of the top-level records of kind in the
// log on fs.
func logRecords(t *testing.T, fs *vfstest.MemFS, kind uint8) []int64 {
	t.Helper()
	b, err := fs.ReadFile("/db/" + logName)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for off := fileHeaderSize; off < len(b); {
		r, n, err := decodeRecord(b[off:], true)
		if err != nil {
			t.Fatalf("record at %d: %v", off, err)
		}
		if r.kind == kind {
			offs = append(offs, int64(off))
		}
		off += n
	}
	return offs
}

// Issue 41 item 1: compaction stores a value that several live chunk keys
// hold once, as a body written twice, and the keys as an alias list; the
// log is far smaller, every key reads its value, with index.dat and
// without it (a scan rebuilds the aliases), the live bytes count the
// body once, and a write to an aliased key supersedes its alias while the
// history keeps it.
func TestCompactionAliases(t *testing.T) {
	fs, db, want := aliasWorld(t, 12, Options{})
	before, err := fs.ReadFile("/db/" + logName)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	after, _ := fs.ReadFile("/db/" + logName)
	if len(after)*8 > len(before) {
		t.Errorf("the log holds %d bytes after compaction, %d before: not 8 times smaller", len(after), len(before))
	}
	if bodies := logRecords(t, fs, kindBody); len(bodies) != 4 {
		t.Errorf("%d body records, want 2 bodies of 2 copies", len(bodies))
	}
	if lists := logRecords(t, fs, kindAliases); len(lists) != 1 {
		t.Errorf("%d alias lists, want 1", len(lists))
	}
	checkValues(t, db, want)
	// A backup copies the log as it is: the copy's aliases read.
	if err := db.Backup("/copy"); err != nil {
		t.Fatal(err)
	}
	cp := open(t, fs, "/copy", Options{ReadOnly: true})
	checkValues(t, cp, want)
	if len(cp.idx.bodies) != 2 {
		t.Errorf("the backup holds %d bodies", len(cp.idx.bodies))
	}
	cp.Close()
	// The bodies count as live once, the list as kept: no garbage.
	if s := db.Stats(); s.LiveBytes > int64(len(after)) || s.Keys != len(want)+1 || s.GarbageBytes != 0 {
		t.Errorf("live bytes %d and garbage %d of a log of %d, keys %d", s.LiveBytes, s.GarbageBytes, len(after), s.Keys)
	}
	seq, _ := db.Seq()
	k := Key{X: 5, Z: 5}
	if err := db.Put(k, []byte("written after")); err != nil {
		t.Fatal(err)
	}
	if v, err := db.GetAt(k, seq); err != nil || !bytes.Equal(v, want[k]) {
		t.Fatalf("the alias the history keeps reads %q, %v", v, err)
	}
	old := want[k]
	want[k] = []byte("written after")
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for _, withIndex := range []bool{true, false} {
		if !withIndex {
			fs.Remove("/db/" + indexName)
		}
		db = open(t, fs, "/db", Options{DisableAutoCompaction: true})
		if db.Recovery().IndexLoaded != withIndex {
			t.Fatalf("index loaded: %+v", db.Recovery())
		}
		checkValues(t, db, want)
		if v, err := db.GetAt(k, seq); err != nil || !bytes.Equal(v, old) {
			t.Fatalf("with index.dat %v: the alias the history keeps reads %q, %v", withIndex, v, err)
		}
		if err := db.Check(); err != nil {
			t.Fatal(err)
		}
		// A second compaction keeps the aliases and the history.
		if err := db.Compact(); err != nil {
			t.Fatal(err)
		}
		checkValues(t, db, want)
		if v, err := db.GetAt(k, seq); err != nil || !bytes.Equal(v, old) {
			t.Fatalf("after a second compaction: the version the history keeps reads %q, %v", v, err)
		}
		db.Close()
	}
}

// Issue 41 item 1: one damaged copy of a body costs nothing: reads take
// the other, Check names the damaged bytes, and Repair writes both copies
// again. A damaged alias list costs nothing while index.dat covers it, and
// the next compaction writes it again; without index.dat the scan skips it
// and reports it, as any damaged record.
func TestAliasDamage(t *testing.T) {
	for _, copyNo := range []int{0, 1} {
		t.Run(fmt.Sprintf("body copy %d", copyNo+1), func(t *testing.T) {
			fs, db, want := aliasWorld(t, 6, Options{})
			if err := db.Compact(); err != nil {
				t.Fatal(err)
			}
			db.Close()
			bodies := logRecords(t, fs, kindBody)
			// The first body's copies are bodies[0] and bodies[2].
			at := bodies[copyNo*2] + recHeaderSize + 5
			b, _ := fs.ReadFile("/db/" + logName)
			b[at] ^= 0x40
			fs.WriteFile("/db/"+logName, b)

			db, err := Open("/db", Options{FS: fs, Logger: quiet, DisableAutoCompaction: true})
			if err != nil {
				t.Fatal(err)
			}
			checkValues(t, db, want)
			if err := db.Check(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "its other copy") {
				t.Fatalf("Check of a damaged body copy: %v", err)
			}
			db.Close()
			if _, err := Repair("/db", Options{FS: fs, Logger: quiet}); err != nil {
				t.Fatal(err)
			}
			db = open(t, fs, "/db", Options{DisableAutoCompaction: true})
			checkValues(t, db, want)
			if err := db.Check(); err != nil {
				t.Fatalf("Check after Repair: %v", err)
			}
			db.Close()
		})
	}
	t.Run("both body copies", func(t *testing.T) {
		fs, db, want := aliasWorld(t, 6, Options{})
		if err := db.Compact(); err != nil {
			t.Fatal(err)
		}
		db.Close()
		bodies := logRecords(t, fs, kindBody)
		b, _ := fs.ReadFile("/db/" + logName)
		b[bodies[0]+recHeaderSize+5] ^= 0x40
		b[bodies[2]+recHeaderSize+5] ^= 0x40
		fs.WriteFile("/db/"+logName, b)
		db, err := Open("/db", Options{FS: fs, Logger: quiet, DisableAutoCompaction: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Get(Key{X: 3, Z: 3}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("a body both of whose copies are damaged: %v", err)
		}
		db.Close()
		rep, err := Repair("/db", Options{FS: fs, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		db = open(t, fs, "/db", Options{DisableAutoCompaction: true})
		if _, err := db.Get(Key{X: 3, Z: 3}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after Repair (%+v), a column of the lost body: %v", rep, err)
		}
		checkValues(t, db, map[Key][]byte{{X: 1}: want[Key{X: 1}], {Dim: 1, X: 9}: want[Key{Dim: 1, X: 9}]})
		db.Close()
	})
	t.Run("alias list", func(t *testing.T) {
		fs, db, want := aliasWorld(t, 6, Options{})
		if err := db.Compact(); err != nil {
			t.Fatal(err)
		}
		db.Close()
		lists := logRecords(t, fs, kindAliases)
		b, _ := fs.ReadFile("/db/" + logName)
		b[lists[0]+recHeaderSize+3] ^= 0x40
		fs.WriteFile("/db/"+logName, b)
		idx, _ := fs.ReadFile("/db/" + indexName)

		// Without index.dat the scan skips the list, and says so.
		fs.Remove("/db/" + indexName)
		db, err := Open("/db", Options{FS: fs, Logger: quiet, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if rec := db.Recovery(); len(rec.Corrupt) != 1 || rec.Corrupt[0].Offset != lists[0] {
			t.Fatalf("a damaged alias list, scanned: %+v", rec)
		}
		if _, err := db.Get(Key{X: 3, Z: 3}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("an alias of a damaged list: %v", err)
		}
		db.Close()

		// With it, nothing is lost, and compaction writes the list again.
		fs.WriteFile("/db/"+indexName, idx)
		db, err = Open("/db", Options{FS: fs, Logger: quiet, DisableAutoCompaction: true})
		if err != nil {
			t.Fatal(err)
		}
		checkValues(t, db, want)
		if err := db.Check(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "an alias list") {
			t.Fatalf("Check of a damaged alias list: %v", err)
		}
		if err := db.Compact(); err != nil {
			t.Fatal(err)
		}
		db.Close()
		fs.Remove("/db/" + indexName)
		db = open(t, fs, "/db", Options{DisableAutoCompaction: true})
		checkValues(t, db, want)
		db.Close()
	})
}

// Issue 41 item 1: a crash at every file operation of a compaction that
// writes aliases, and of the writes after it, recovers to a prefix of the
// writes (the crash harness of crash_test.go, with half the values
// shared between keys).
func TestCrashAliases(t *testing.T) {
	n := soak(40, 5_000)
	aliased := 0
	for i := range n {
		if runCrashShared(t, uint64(i)) {
			aliased++
		}
	}
	if aliased < n/2 {
		t.Fatalf("only %d of %d workloads compacted to aliases", aliased, n)
	}
}

// runCrashShared is runCrash of a workload whose values are often shared,
// with a compaction before and after the crash point is armed. It reports
// whether the first compaction wrote aliases.
func runCrashShared(t *testing.T, seed uint64) bool {
	fs := vfstest.NewMem()
	fs.MkdirAll("/db", 0o755)
	opts := Options{FS: fs, Logger: quiet, Durability: DurabilitySafe, DisableAutoCompaction: true, IndexCheckpointBytes: []int64{-1, 2 << 10}[seed%2],
		// History kept, off, or a horizon every compaction passes.
		History: []time.Duration{0, -1, time.Nanosecond}[seed/2%3]}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	w := &workload{t: t, rng: rand.New(rand.NewPCG(seed, 41)), fs: fs, opts: opts, db: db, m: newModel(), shared: true}
	for i := 20 + w.rng.IntN(30); i > 0; i-- {
		if !w.writeStep() {
			t.Fatalf("seed %d: operation failed before any crash", seed)
		}
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	aliased := len(logRecords(t, fs, kindAliases)) > 0
	// A few writes, then the compaction: the crash falls in either.
	fs.CrashAfter(1 + w.rng.IntN(30))
	for i := w.rng.IntN(6); i > 0 && w.writeStep(); i-- {
	}
	if w.db != nil && w.db.Compact() == nil {
		for i := 0; i < 10 && w.writeStep(); i++ {
		}
	}
	keep := []float64{0, 0.5, 1}[w.rng.IntN(3)]
	clone := fs.CrashClone(w.rng, keep)
	if w.db != nil {
		w.db.Close()
	}
	verify(t, clone, opts, w.m, fmt.Sprintf("shared values, seed %d keep %.1f", seed, keep))
	return aliased
}

// FuzzDecodeAliasList: an alias list's value decodes or fails as
// ErrCorrupt, never a panic; what decodes re-encodes the same.
func FuzzDecodeAliasList(f *testing.F) {
	a := &aliasList{
		bodies: []aliasBody{{first: 200, second: 400, size: 60, vsum: 7}, {first: 260, second: 460, size: 50, vsum: 8}},
		keys:   []aliasKey{{k: Key{X: 1}, body: 0, seq: 9}, {k: Key{X: 2}, body: 1, seq: 4}, {k: Key{Dim: 2, X: -1, Z: 5}, body: 0, seq: 12}},
	}
	f.Add(appendAliasList(nil, a, 600), int64(600))
	f.Fuzz(func(t *testing.T, b []byte, at int64) {
		if at < 0 || at > 1<<40 {
			return
		}
		a, err := decodeAliasList(b, at)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		again, err := decodeAliasList(appendAliasList(nil, a, at), at)
		if err != nil || fmt.Sprint(again) != fmt.Sprint(a) {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, a)
		}
	})
}

// Issue 41 item 1: Repair rebuilding a lost header from an aliased log
// takes index.dat's generation: its entries for aliased keys, which point
// at bodies, fit the log.
func TestRepairRebuildsHeaderOfAliases(t *testing.T) {
	fs, db, want := aliasWorld(t, 6, Options{})
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, _ := fs.ReadFile("/db/" + logName)
	clear(b[:fileHeaderSize+headerCopySize])
	fs.WriteFile("/db/"+logName, b)
	rep, err := Repair("/db", Options{FS: fs, Logger: quiet})
	if err != nil || !strings.Contains(rep.Header, "index.dat names") {
		t.Fatalf("repair %+v, %v", rep, err)
	}
	db = open(t, fs, "/db", Options{DisableAutoCompaction: true})
	checkValues(t, db, want)
	db.Close()
}

// Issue 41 item 1: a compaction that aliases more keys than one list may
// name writes several lists, each with the bodies its keys name; a scan
// reads them all back.
func TestAliasListsSplit(t *testing.T) {
	fs, db, want := aliasWorld(t, 6, Options{})
	db.knobs.aliasListKeys = 5
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	if n := len(logRecords(t, fs, kindAliases)); n != 8 { // 34 + 2 keys, 5 a list
		t.Errorf("%d alias lists, want 8", n)
	}
	db.Close()
	fs.Remove("/db/" + indexName)
	db = open(t, fs, "/db", Options{DisableAutoCompaction: true})
	if db.Recovery().IndexLoaded {
		t.Fatal("index.dat was loaded")
	}
	checkValues(t, db, want)
	db.Close()
}

// Issue 41 (review): a key whose newest record is damaged goes back to its
// newest intact version, and that may be an alias: Repair restores the
// value the alias list gave the key rather than deleting the key.
func TestRepairRestoresAlias(t *testing.T) {
	fs, db, want := aliasWorld(t, 4, Options{})
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	k := Key{X: 3, Z: 3}
	if err := db.Put(k, []byte("written after the compaction, then damaged")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, _ := fs.ReadFile("/db/" + logName)
	puts := logRecords(t, fs, kindPut)
	b[puts[len(puts)-1]+recHeaderSize+chunkKeyLen+3] ^= 0x40
	fs.WriteFile("/db/"+logName, b)
	rep, err := Repair("/db", Options{FS: fs, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Keys) != 1 || !rep.Keys[0].Restored {
		t.Fatalf("repair of a damaged put over an alias: %+v", rep.Keys)
	}
	db = open(t, fs, "/db", Options{DisableAutoCompaction: true})
	checkValues(t, db, want)
	db.Close()
}

// Issue 41 (review): compaction carries a damaged live record with its
// key's newest intact older version, which may be an alias: it is written
// as a put of the key (a body has no key of its own), so that a scan
// reads it and Repair later restores it.
func TestCompactionCarriesAlias(t *testing.T) {
	fs, db, want := aliasWorld(t, 4, Options{History: -1}) // no history to find it in
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	k := Key{X: 3, Z: 3}
	if err := db.Put(k, []byte("written after the compaction, then damaged")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, _ := fs.ReadFile("/db/" + logName)
	puts := logRecords(t, fs, kindPut)
	b[puts[len(puts)-1]+recHeaderSize+chunkKeyLen+3] ^= 0x40
	fs.WriteFile("/db/"+logName, b)
	db = open(t, fs, "/db", Options{History: -1, DisableAutoCompaction: true})
	if err := db.Compact(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("compaction around a damaged record: %v", err)
	}
	db.Close()
	fs.Remove("/db/" + indexName)
	db, err := Open("/db", Options{FS: fs, Logger: quiet, History: -1, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	if rec := db.Recovery(); len(rec.Corrupt) != 1 {
		t.Fatalf("the compacted log scans with damage %+v, want the carried record's alone", rec.Corrupt)
	}
	checkValues(t, db, want) // the scan passes the damaged record: the older version is live
	db.Close()
	if _, err := Repair("/db", Options{FS: fs, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	db = open(t, fs, "/db", Options{DisableAutoCompaction: true})
	checkValues(t, db, want)
	db.Close()
}
