package blazedb

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// codecsIn returns how many puts of each codec the log in dir holds, and
// checks that every one of them verifies.
func codecsIn(t *testing.T, dir string) map[codec]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := memWith(b).Open("/db/" + logName)
	n := map[codec]int{}
	if _, err := scanLog(f, fileHeaderSize, int64(len(b)), true, func(off int64, r *record) error {
		return eachEntry(off, r, func(_ int64, _ rkey, e *record) error {
			if e.kind == kindPut || e.kind == kindBatchPut {
				if _, err := e.rawValue(); err != nil {
					t.Errorf("record at %d: %v", off, err)
				}
				n[e.codec]++
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// Issue 38 item 4: compaction with Recompress brings every put it copies,
// live records and the versions the history keeps, to the configured
// codec, and each reads the same, at its own point too.
func TestCompactRecompress(t *testing.T) {
	dir := t.TempDir()
	val := func(i, v int) []byte { return bytes.Repeat([]byte{byte(i), byte(v), 'x', 'y'}, 200) }
	db, err := Open(dir, Options{Compression: CompressionLZ4})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for v := range 2 {
		for i := range 20 {
			if err := db.Put(Key{X: int32(i)}, val(i, v)); err != nil {
				t.Fatal(err)
			}
		}
		s, _ := db.Seq()
		seqs = append(seqs, s)
	}
	if err := db.PutNamed("settings", val(99, 0)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if n := codecsIn(t, dir); n[codecLZ4] != 41 {
		t.Fatalf("before: codecs %v, want 41 LZ4", n)
	}

	// Without Recompress, compaction keeps the codec records were written in.
	db, err = Open(dir, Options{Compression: CompressionZstd})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if n := codecsIn(t, dir); n[codecZstd] != 0 {
		t.Fatalf("compaction without Recompress: codecs %v", n)
	}

	db, err = Open(dir, Options{Compression: CompressionZstd, Recompress: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		for v, seq := range seqs {
			for i := range 20 {
				got, err := db.GetAt(Key{X: int32(i)}, seq)
				if err != nil || !bytes.Equal(got, val(i, v)) {
					t.Fatalf("key %d at version %d: %v", i, v, err)
				}
			}
		}
		if got, err := db.GetNamed("settings"); err != nil || !bytes.Equal(got, val(99, 0)) {
			t.Fatalf("named record: %v", err)
		}
		if err := db.Check(); err != nil {
			t.Fatal(err)
		}
	}
	check()
	db.Close()
	if n := codecsIn(t, dir); n[codecZstd] != 41 || len(n) != 1 {
		t.Fatalf("after: codecs %v, want 41 zstd", n)
	}
	db, err = Open(dir, Options{Compression: CompressionZstd, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check()
}

// upper is a Recoder that stores chunk values in upper case, and counts
// its calls.
type upper struct{ calls *int }

func (u upper) Recode(k Key, v []byte) []byte {
	*u.calls++
	if bytes.Equal(v, bytes.ToUpper(v)) {
		return nil
	}
	return bytes.ToUpper(v)
}

// Issue 38 item 4: a Recoder's value replaces each chunk record's, live
// and in the history, with a checksum of its own; named records are not
// given to it; the cache forgets the values it replaced.
func TestCompactRecoder(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	db, err := Open(dir, Options{Recoder: upper{&calls}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, v := range []string{"first value", "second value"} {
		if err := db.Put(Key{X: 1}, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutNamed("n", []byte("named")); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Get(Key{X: 1}); string(got) != "second value" { // cached
		t.Fatalf("before: %q", got)
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("Recode called %d times, want 2 (two versions of one chunk key)", calls)
	}
	if got, err := db.Get(Key{X: 1}); err != nil || string(got) != "SECOND VALUE" {
		t.Fatalf("after: %q, %v", got, err)
	}
	if got, err := db.GetAt(Key{X: 1}, 1); err != nil || string(got) != "FIRST VALUE" {
		t.Fatalf("old version after: %q, %v", got, err)
	}
	if got, err := db.GetNamed("n"); err != nil || string(got) != "named" {
		t.Fatalf("named: %q, %v", got, err)
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
}

// Issue 38 item 4: recompression leaves damage handling as it was: a
// damaged live record and the older version carried with it are copied as
// they are, and the rest is recompressed around them.
func TestCompactRecompressCarriesDamage(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Logger: quiet, Compression: CompressionLZ4, History: -1}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	a := Key{X: 1}
	steps := []error{db.Put(a, value(10, 500)), db.Put(a, value(11, 500))}
	for i := range 5 {
		steps = append(steps, db.Put(Key{X: 100 + int32(i)}, value(100+i, 500)))
	}
	if err := errors.Join(steps...); err != nil {
		t.Fatal(err)
	}
	db.mu.RLock()
	e, _ := db.idx.get(rkey{chunk: a})
	db.mu.RUnlock()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, logName)
	log, _ := os.ReadFile(path)
	log[e.off+int64(e.size)/2] ^= 0xff
	os.WriteFile(path, log, 0o644)

	opts.Compression, opts.Recompress = CompressionZstd, true
	db, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(); !IsDamageReport(err) {
		t.Fatalf("Compact: %v, want the damage reported", err)
	}
	if _, err := db.Get(a); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged key after compaction: %v", err)
	}
	for i := range 5 {
		if got, err := db.Get(Key{X: 100 + int32(i)}); err != nil || !bytes.Equal(got, value(100+i, 500)) {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	db.Close()
	n := map[codec]int{}
	b, _ := os.ReadFile(path)
	f, _ := memWith(b).Open("/db/" + logName)
	scanLog(f, fileHeaderSize, int64(len(b)), true, func(off int64, r *record) error {
		if r.kind == kindPut {
			n[r.codec]++
		}
		return nil
	})
	// The five recompressed, a's older version carried in LZ4; a's damaged
	// record is skipped by the scan.
	if n[codecZstd] != 5 || n[codecLZ4] != 1 {
		t.Fatalf("codecs after compaction: %v", n)
	}
}
