package blazedb

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// headerWorld writes 20 keys and closes the database: its log and
// index.dat.
func headerWorld(t *testing.T) (log, idx []byte) {
	t.Helper()
	fs := vfstest.NewMem()
	db := open(t, fs, "/db", Options{Durability: DurabilityFast})
	for i := range 20 {
		if err := db.Put(Key{X: int32(i)}, value(i, 300)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	log, _ = fs.ReadFile("/db/chunks.dat")
	idx, _ = fs.ReadFile("/db/index.dat")
	return log, idx
}

func allKeysRead(t *testing.T, db *DB) {
	t.Helper()
	for i := range 20 {
		if got, err := db.Get(Key{X: int32(i)}); err != nil || !bytes.Equal(got, value(i, 300)) {
			t.Fatalf("key %d: %v", i, err)
		}
	}
}

// Issue 35 item 2: one flipped bit anywhere in the 40-byte header of
// chunks.dat used to make the database unopenable (and Repair failed too).
// The header now has a copy, the log's first record: every single flipped
// bit of the header, with or without index.dat, opens with every key,
// read-only (reported) as read-write (reported, and the header rewritten
// from its copy, so that the next open finds nothing wrong).
func TestHeaderBitFlipRecovered(t *testing.T) {
	log, idx := headerWorld(t)
	for i := 0; i < fileHeaderSize; i++ {
		for bit := range 8 {
			for _, withIndex := range []bool{true, false} {
				name := fmt.Sprintf("byte%d-bit%d-index%v", i, bit, withIndex)
				damaged := bytes.Clone(log)
				damaged[i] ^= 1 << bit
				fs := memWith(damaged)
				if withIndex {
					fs.WriteFile("/db/index.dat", idx)
				}
				db := open(t, fs, "/db", Options{ReadOnly: true})
				allKeysRead(t, db)
				if rec := db.Recovery(); rec.HeaderDamage == "" || rec.HeaderRewritten || len(rec.Corrupt) != 0 || rec.TornBytes != 0 || rec.IndexLoaded != withIndex {
					t.Fatalf("%s: read-only recovery %+v", name, rec)
				}
				db.Close()
				db = open(t, fs, "/db", Options{})
				allKeysRead(t, db)
				if rec := db.Recovery(); rec.HeaderDamage == "" || !rec.HeaderRewritten {
					t.Fatalf("%s: read-write recovery %+v", name, rec)
				}
				db.Close()
				if b, _ := fs.ReadFile("/db/chunks.dat"); !bytes.Equal(b[:fileHeaderSize], log[:fileHeaderSize]) {
					t.Fatalf("%s: header not rewritten", name)
				}
				db = open(t, fs, "/db", Options{})
				if rec := db.Recovery(); rec.HeaderDamage != "" {
					t.Fatalf("%s: damage found again: %+v", name, rec)
				}
				db.Close()
			}
		}
	}
}

// Issue 35 item 2: a flipped byte in the header's copy costs nothing
// either: the header is intact, Open reports the copy, and Repair
// compacts, which writes a new one.
func TestHeaderCopyDamageRepaired(t *testing.T) {
	log, idx := headerWorld(t)
	for i := fileHeaderSize; i < fileHeaderSize+headerCopySize; i++ {
		damaged := bytes.Clone(log)
		damaged[i] ^= 0x21
		for _, withIndex := range []bool{true, false} {
			name := fmt.Sprintf("byte%d-index%v", i, withIndex)
			fs := memWith(damaged)
			if withIndex {
				fs.WriteFile("/db/index.dat", idx)
			}
			db := open(t, fs, "/db", Options{ReadOnly: true})
			allKeysRead(t, db)
			if rec := db.Recovery(); rec.HeaderDamage == "" || rec.TornBytes != 0 {
				t.Fatalf("%s: recovery %+v", name, rec)
			}
			db.Close()
			rep, err := Repair("/db", Options{FS: fs, Logger: quiet})
			if err != nil || rep.Header == "" || !rep.Compacted {
				t.Fatalf("%s: repair %+v, %v", name, rep, err)
			}
			db = open(t, fs, "/db", Options{})
			allKeysRead(t, db)
			if rec := db.Recovery(); rec.HeaderDamage != "" {
				t.Fatalf("%s: after repair: %+v", name, rec)
			}
			if err := db.Check(); err != nil {
				t.Fatalf("%s: check after repair: %v", name, err)
			}
			db.Close()
		}
	}
}

// Issue 35 item 2: Repair of a database whose header is damaged opens it
// (rewriting the header from its copy) and says so.
func TestRepairRewritesHeader(t *testing.T) {
	log, _ := headerWorld(t)
	damaged := bytes.Clone(log)
	damaged[20] ^= 0x04 // the generation
	fs := memWith(damaged)
	rep, err := Repair("/db", Options{FS: fs, Logger: quiet})
	if err != nil || rep.Header == "" {
		t.Fatalf("repair %+v, %v", rep, err)
	}
	f, _ := fs.Open("/db/chunks.dat")
	if _, damage, err := readFileHeader(f); err != nil || damage.reason != "" {
		t.Fatalf("header not mended: %v %+v", err, damage)
	}
	f.Close()
	db := open(t, fs, "/db", Options{})
	allKeysRead(t, db)
	db.Close()
}

// A foreign file is still refused as such, and a newer format's header
// (whose copy says so too) as a newer format, not mended from a copy.
func TestHeaderCopyDoesNotAdoptForeignFiles(t *testing.T) {
	log, _ := headerWorld(t)
	dir := t.TempDir()
	foreign := bytes.Clone(log)
	copy(foreign, "not a blaze file at all, but long enough")
	copy(foreign[fileHeaderSize:], "and neither is what follows where the copy would be")
	os.WriteFile(dir+"/"+logName, foreign, 0o644)
	if _, err := Open(dir, Options{Logger: quiet}); err == nil {
		t.Fatal("a foreign chunks.dat opened")
	}
}

// Issue 35 item 2: with both copies of the header destroyed (the start of
// the file zeroed, into the first records) Open refuses, naming damage
// rather than a foreign file when records follow, and Repair rebuilds the
// header from the records, with index.dat's generation when index.dat fits
// the log, and compacts.
func TestRepairRebuildsLostHeader(t *testing.T) {
	log, idx := headerWorld(t)
	for _, c := range []struct {
		name      string
		zero      int
		withIndex bool
	}{
		{"header-and-copy", fileHeaderSize + headerCopySize, true},
		{"header-and-copy-no-index", fileHeaderSize + headerCopySize, false},
		{"into-the-first-record", fileHeaderSize + headerCopySize + 100, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			damaged := bytes.Clone(log)
			clear(damaged[:c.zero])
			fs := memWith(damaged)
			if c.withIndex {
				fs.WriteFile("/db/index.dat", idx)
			}
			_, err := Open("/db", Options{FS: fs, Logger: quiet, ReadOnly: true})
			if err == nil {
				t.Fatal("a log without a header opened")
			}
			if c.zero == fileHeaderSize+headerCopySize && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
			rep, err := Repair("/db", Options{FS: fs, Logger: quiet})
			if err != nil || !strings.Contains(rep.Header, "rebuilt") || !rep.Compacted {
				t.Fatalf("repair %+v, %v", rep, err)
			}
			if strings.Contains(rep.Header, "index.dat names") != c.withIndex {
				t.Fatalf("generation: %s", rep.Header)
			}
			db := open(t, fs, "/db", Options{})
			first := 0
			if c.zero > fileHeaderSize+headerCopySize {
				first = 1 // the record the zeroes reached
				if _, err := db.Get(Key{X: 0}); !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("key 0: %v", err)
				}
			}
			for i := first; i < 20; i++ {
				if got, err := db.Get(Key{X: int32(i)}); err != nil || !bytes.Equal(got, value(i, 300)) {
					t.Fatalf("key %d: %v", i, err)
				}
			}
			if rec := db.Recovery(); rec.HeaderDamage != "" {
				t.Fatalf("after repair: %+v", rec)
			}
			db.Close()
		})
	}
}

// An index.dat that is not this log's (here another database's, of the
// same keys laid out differently) does not lend a rebuilt header its
// generation.
func TestRebuiltHeaderIgnoresForeignIndex(t *testing.T) {
	_, idx := headerWorld(t)
	fs := vfstest.NewMem()
	db := open(t, fs, "/db", Options{Durability: DurabilityFast})
	for i := range 20 {
		db.Put(Key{X: int32(i)}, value(i, 333))
	}
	db.Close()
	log, _ := fs.ReadFile("/db/chunks.dat")
	clear(log[:fileHeaderSize+headerCopySize])
	fs = memWith(log)
	fs.WriteFile("/db/index.dat", idx)
	rep, err := Repair("/db", Options{FS: fs, Logger: quiet})
	if err != nil || !strings.Contains(rep.Header, "new generation") {
		t.Fatalf("repair %+v, %v", rep, err)
	}
	db = open(t, fs, "/db", Options{})
	for i := range 20 {
		if got, err := db.Get(Key{X: int32(i)}); err != nil || !bytes.Equal(got, value(i, 333)) {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	db.Close()
}
