package blazedb

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// The format-version ratchet (issue 37). testdata/format holds, for every
// on-disk format version of the engine a build has written, a small
// database of that version, written by the build that introduced it, and
// read.txt, what reading it gave then. Every later build must open it and
// read exactly the same.
//
// From now on a change to any of these formats (chunks.dat's header and
// records, the header copy, sync and time marks, named snapshot records,
// record keys, value codecs, index.dat and its history section) adds a
// version: the writer writes the new one, the reader of every earlier one
// stays, and a new directory of golden files is added beside the old ones
// with -golden (which writes only what is missing, never over a file that
// exists). A golden file is never edited or removed: a test that fails
// here means a released format no longer reads, which is a bug in the
// change, not in the file. Versions from before the first release were
// dropped when this ratchet began; they are refused with ErrOldVersion
// (TestUnreleasedVersionsAreRefused).
var writeGolden = flag.Bool("golden", false, "write the golden files of the current format versions that are missing from testdata/format")

// goldenDir holds the golden database of the current versions: chunks.dat
// version logVersion, index.dat version indexVersion, snapshot records
// version snapshotVersion.
var goldenDir = filepath.Join("testdata", "format", fmt.Sprintf("log%d-index%d-snapshot%d", logVersion, indexVersion, snapshotVersion))

// goldenHistory keeps every version of the golden databases readable
// however long after they were written the test runs.
const goldenHistory = 200 * 365 * 24 * time.Hour

// goldenKeys are the chunk keys and names the golden database writes,
// in its three dimensions and at negative and extreme coordinates.
var (
	goldenKeys  = []Key{{0, 0, 0}, {0, -1, 5}, {1, 3, -4}, {2, math.MaxInt32, math.MinInt32}, {0, 7, 7}}
	goldenNames = []string{"settings", "player/1", "gone"}
)

// goldenValue is compressible text, so that each codec stores it
// compressed.
func goldenValue(what string, n int) []byte {
	return bytes.Repeat([]byte(what+" "), n)
}

// buildGolden writes the golden database of the current versions into dir
// on the operating system's filesystem: puts, deletes and a batch, chunk
// and named keys, values stored by every codec, sync marks, time marks a
// second apart, a named snapshot, a compaction (history records and the
// time marks it copies), and index.dat at Close.
func buildGolden(t *testing.T, dir string) {
	step := 0
	session := func(c Compression, writes func(db *DB)) {
		db, err := Open(dir, Options{Compression: c, History: goldenHistory, Durability: DurabilitySafe, DisableAutoCompaction: true, IndexCheckpointBytes: -1, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		writes(db)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	put := func(db *DB, k Key) {
		step++
		if err := db.Put(k, goldenValue(fmt.Sprintf("put %d of %v", step, k), 8)); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	session(CompressionNone, func(db *DB) {
		for _, k := range goldenKeys {
			put(db, k)
		}
		must(db.PutNamed("settings", []byte("level settings, first")))
		must(db.PutNamed("gone", []byte("deleted later")))
		time.Sleep(timeStep + 100*time.Millisecond) // the next write carries a second time mark
		put(db, goldenKeys[0])
		must(db.Delete(goldenKeys[1]))
		_, err := db.CreateSnapshot("before-batch")
		must(err)
	})
	session(CompressionLZ4, func(db *DB) {
		var b Batch
		b.Put(goldenKeys[1], goldenValue("batch put", 10))
		b.Delete(goldenKeys[4])
		b.PutNamed("player/1", []byte{1, 2, 3})
		b.DeleteNamed("gone")
		must(db.Apply(&b))
		put(db, goldenKeys[2])
	})
	session(CompressionSnappy, func(db *DB) {
		put(db, goldenKeys[3])
		// Three keys of one value, which the compaction stores once
		// (alias.go): one stays so, one is written again after it (the
		// history keeps the alias) and one deleted.
		for _, k := range goldenKeys[1:4] {
			must(db.Put(k, goldenValue("the same in three keys", 9)))
		}
		must(db.Compact())
		time.Sleep(timeStep + 100*time.Millisecond)
		put(db, goldenKeys[0])
	})
	session(CompressionZstd, func(db *DB) {
		var b Batch // after the compaction, which copies a batch's entries as records
		b.Put(goldenKeys[4], goldenValue("second batch put", 10))
		b.Delete(goldenKeys[3])
		b.DeleteNamed("player/1")
		must(db.Apply(&b))
		put(db, goldenKeys[2])
		must(db.PutNamed("settings", goldenValue("level settings, second", 6)))
		_, err := db.CreateSnapshot("last")
		must(err)
	})
}

// readGolden returns what reading db gives: its points, floor, timeline
// and snapshots, and every golden key's value at every point from the
// floor to the present, which covers the present values, every delete
// and each version compaction kept.
func readGolden(t *testing.T, db *DB) string {
	var w strings.Builder
	seq, err := db.Seq()
	if err != nil {
		t.Fatal(err)
	}
	floor, err := db.HistoryFloor()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&w, "present %d floor %d\n", seq, floor)
	db.mu.RLock()
	points := append([]timePoint(nil), db.idx.hist.points...)
	db.mu.RUnlock()
	for _, p := range points {
		at, err := db.SeqAt(time.Unix(0, p.at))
		fmt.Fprintf(&w, "time mark: seq %d at %d; SeqAt gives %d %v\n", p.seq, p.at, at, err)
	}
	snaps, err := db.Snapshots()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snaps {
		fmt.Fprintf(&w, "snapshot %q: seq %d time %d\n", s.Name, s.Seq, s.Time.UnixNano())
	}
	show := func(v []byte, err error) string {
		switch {
		case errors.Is(err, ErrNotFound):
			return "none"
		case err != nil:
			return "error: " + err.Error()
		}
		return fmt.Sprintf("%08x/%d", crc(v), len(v))
	}
	for p := floor; p <= seq; p++ {
		var line []string
		for _, k := range goldenKeys {
			line = append(line, show(db.GetAt(k, p)))
		}
		for _, n := range goldenNames {
			line = append(line, show(db.GetNamedAt(n, p)))
		}
		fmt.Fprintf(&w, "at %d: %s\n", p, strings.Join(line, " "))
	}
	for _, k := range goldenKeys {
		fmt.Fprintf(&w, "now %v: %s\n", k, show(db.Get(k)))
	}
	for _, n := range goldenNames {
		fmt.Fprintf(&w, "now %q: %s\n", n, show(db.GetNamed(n)))
	}
	names, err := db.Names()
	fmt.Fprintf(&w, "names %q %v\n", names, err)
	for d := int32(0); d < 3; d++ {
		keys, err := db.Keys(Area{Dim: d, MinX: math.MinInt32, MinZ: math.MinInt32, MaxX: math.MaxInt32, MaxZ: math.MaxInt32})
		fmt.Fprintf(&w, "keys of dim %d: %v %v\n", d, keys, err)
	}
	changes, err := db.ChangedSince(floor)
	fmt.Fprintf(&w, "changed since %d: %+v %v\n", floor, changes, err)
	return w.String()
}

// Issue 37: the golden database of every format version written so far
// opens and reads as it did when it was written: with its index.dat,
// without it (a scan of the log), read-only and read-write, and a
// read-write open appends to it and reads back what it appended.
func TestFormatVersionsStillRead(t *testing.T) {
	if *writeGolden {
		writeMissingGolden(t)
	}
	dirs, err := filepath.Glob(filepath.Join("testdata", "format", "log*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no golden databases in testdata/format")
	}
	if _, err := os.Stat(goldenDir); err != nil {
		t.Fatalf("no golden database of the current versions (go test -run TestFormatVersionsStillRead -golden): %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, "read.txt"))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name      string
				readOnly  bool
				withIndex bool
			}{{"read-only", true, true}, {"read-only, scanned", true, false}, {"read-write", false, true}, {"read-write, scanned", false, false}} {
				fs := goldenFS(t, dir, c.withIndex)
				db := open(t, fs, "/db", Options{ReadOnly: c.readOnly, History: goldenHistory, ExternalMaintenance: true})
				if rec := db.Recovery(); rec.IndexLoaded != c.withIndex || rec.Corrupt != nil || rec.TornBytes != 0 || rec.HeaderDamage != "" {
					t.Fatalf("%s: the open recovered %+v", c.name, rec)
				}
				if got := readGolden(t, db); got != string(want) {
					t.Fatalf("%s: %s reads\n%s\nwhere it read\n%s", c.name, dir, got, want)
				}
				if err := db.Check(); err != nil {
					t.Fatalf("%s: Check: %v", c.name, err)
				}
				if !c.readOnly {
					if err := db.Put(Key{X: 100}, []byte("appended")); err != nil {
						t.Fatal(err)
					}
					db.Close()
					db = open(t, fs, "/db", Options{ReadOnly: true, History: goldenHistory})
					if v, err := db.Get(Key{X: 100}); err != nil || string(v) != "appended" {
						t.Fatalf("%s: a write appended to it reads %q, %v", c.name, v, err)
					}
					if err := db.Check(); err != nil {
						t.Fatalf("%s: Check after a write: %v", c.name, err)
					}
				}
				db.Close()
			}
		})
	}
}

// Issue 37: the golden database of the current versions holds every
// kind of record and every codec, so that the ratchet covers them all.
func TestGoldenCoversEveryRecord(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(goldenDir, logName))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	note := func(r *record) {
		seen[fmt.Sprintf("kind %#x", r.kind)] = true
		if r.kind != kindMark && r.kind != kindHeaderCopy && r.kind != kindBatch {
			seen[fmt.Sprintf("codec %d", r.codec)] = true
		}
		if _, _, ok := r.timeMark(); ok {
			seen["time mark"] = true
		} else if r.kind == kindMark {
			seen["sync mark"] = true
		}
		if k, err := parseKey(r.key); err == nil && k.named && isSnapshotName(k.name) {
			seen["snapshot"] = true
		} else if err == nil && k.named {
			seen["named"] = true
		}
	}
	for off := fileHeaderSize; off < len(b); {
		r, n, err := decodeRecord(b[off:], true)
		if err != nil {
			t.Fatalf("record at %d: %v", off, err)
		}
		note(&r)
		if r.kind == kindBatch {
			if err := forEachEntry(r.value, func(_ int, e record) error { note(&e); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		off += n
	}
	for _, want := range []string{"kind 0x1", "kind 0x2", "kind 0x3", "kind 0x4", "kind 0x5", "kind 0x6", "kind 0x7", "kind 0x81", "kind 0x82",
		"codec 0", "codec 1", "codec 2", "codec 3", "sync mark", "time mark", "snapshot", "named"} {
		if !seen[want] {
			t.Errorf("%s holds no %s", goldenDir, want)
		}
	}
}

// goldenFS returns a MemFS holding the golden database in dir as /db,
// with or without its index.dat.
func goldenFS(t *testing.T, dir string, withIndex bool) *vfstest.MemFS {
	fs := vfstest.NewMem()
	if err := fs.MkdirAll("/db", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{logName, indexName} {
		if n == indexName && !withIndex {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		fs.WriteFile(filepath.Join("/db", n), b)
	}
	return fs
}

// writeMissingGolden writes the golden database of the current versions
// and what it reads, unless its directory exists.
func writeMissingGolden(t *testing.T) {
	if _, err := os.Stat(goldenDir); err == nil {
		t.Logf("%s exists: not written again", goldenDir)
		return
	}
	tmp := filepath.Join(t.TempDir(), "db")
	buildGolden(t, tmp)
	db := open(t, vfs.Default, tmp, Options{ReadOnly: true, History: goldenHistory})
	read := readGolden(t, db)
	db.Close()
	if err := os.MkdirAll(goldenDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{logName, indexName} {
		b, err := os.ReadFile(filepath.Join(tmp, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(goldenDir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(goldenDir, "read.txt"), []byte(read), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", goldenDir)
}

// Issue 37: the log and index.dat versions that no release wrote are
// refused with ErrOldVersion, which names the version found and the one
// read, and is not ErrCorrupt: neither Open nor Repair takes them for
// damage, and nothing on disk changes. A version field damaged in a
// current header is damage (the checksum fails), read from the copy.
func TestUnreleasedVersionsAreRefused(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join(goldenDir, logName))
	if err != nil {
		t.Fatal(err)
	}
	withVersion := func(v uint32, fixSum bool) []byte {
		b := bytes.Clone(golden)
		b[8], b[9], b[10], b[11] = byte(v), 0, 0, 0
		if fixSum {
			sum := crc(b[:32])
			b[32], b[33], b[34], b[35] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
		}
		return b
	}
	for _, v := range []uint32{1, 2} {
		for _, ro := range []bool{true, false} {
			log := withVersion(v, true)
			fs := vfstest.NewMem()
			fs.MkdirAll("/db", 0o755)
			fs.WriteFile("/db/"+logName, log)
			_, err := Open("/db", Options{FS: fs, ReadOnly: ro, Logger: quiet})
			if !errors.Is(err, ErrOldVersion) || !errors.Is(err, ErrVersion) || errors.Is(err, ErrCorrupt) {
				t.Fatalf("version %d log, read-only %v: %v, want ErrOldVersion and not ErrCorrupt", v, ro, err)
			}
			for _, s := range []string{fmt.Sprintf("format version %d", v), fmt.Sprintf("reads version %d", logVersion)} {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("version %d log: %q does not say %q", v, err, s)
				}
			}
			if _, err := Repair("/db", Options{FS: fs, Logger: quiet}); !errors.Is(err, ErrOldVersion) {
				t.Fatalf("Repair of a version %d log: %v, want ErrOldVersion", v, err)
			}
			if b, _ := fs.ReadFile("/db/" + logName); !bytes.Equal(b, log) {
				t.Fatalf("a refused version %d log was changed", v)
			}
		}
	}

	// A flipped version byte under a checksum that no longer matches.
	fs := vfstest.NewMem()
	fs.MkdirAll("/db", 0o755)
	fs.WriteFile("/db/"+logName, withVersion(1, false))
	db := open(t, fs, "/db", Options{ReadOnly: true, History: goldenHistory})
	if rec := db.Recovery(); !strings.Contains(rec.HeaderDamage, "read from its copy") {
		t.Fatalf("a damaged version field: %+v", rec)
	}
	db.Close()

	// index.dat of version 1: refused by its decoder, and, as index.dat is
	// only an accelerator, the log is scanned instead.
	ix, err := os.ReadFile(filepath.Join(goldenDir, indexName))
	if err != nil {
		t.Fatal(err)
	}
	ix[8] = 1
	sum := crc(ix[:len(ix)-4])
	copy(ix[len(ix)-4:], []byte{byte(sum), byte(sum >> 8), byte(sum >> 16), byte(sum >> 24)})
	if _, _, err := decodeIndex(ix); !errors.Is(err, ErrOldVersion) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "format version 1") {
		t.Fatalf("index.dat version 1: %v, want ErrOldVersion", err)
	}
	fs = goldenFS(t, goldenDir, false)
	fs.WriteFile("/db/"+indexName, ix)
	db = open(t, fs, "/db", Options{ReadOnly: true, History: goldenHistory})
	if rec := db.Recovery(); rec.IndexLoaded || !strings.Contains(rec.IndexProblem, "format version 1") {
		t.Fatalf("an index.dat of version 1: %+v", rec)
	}
	db.Close()
}
