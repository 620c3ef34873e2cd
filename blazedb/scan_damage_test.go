package blazedb

import (
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// scatteredLog writes n chunk-like records, syncing every 16 so that sync
// marks run through the log, closes the database and returns its log with
// damaged records flipped in the middle of their values, evenly spread, and
// the offsets of those records.
func scatteredLog(tb testing.TB, n, damaged, size int) (clean, bad []byte, hit []int64) {
	tb.Helper()
	fs := vfstest.NewMem()
	db, err := Open("/db", Options{FS: fs, Logger: quiet, Durability: DurabilityFast, DisableAutoCompaction: true})
	if err != nil {
		tb.Fatal(err)
	}
	var offs []int64
	for i := range n {
		before := db.Stats().LogBytes
		if err := db.Put(Key{X: int32(i)}, chunkLike(i, size)); err != nil {
			tb.Fatal(err)
		}
		offs = append(offs, before+(db.Stats().LogBytes-before)/2)
		if i%16 == 15 {
			db.Sync()
		}
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	clean, _ = fs.ReadFile("/db/chunks.dat")
	bad = append([]byte(nil), clean...)
	for i := range damaged {
		at := offs[(i*n+n/2)/damaged]
		bad[at] ^= 0x40
		hit = append(hit, at)
	}
	return clean, bad, hit
}

// Issue 35 item 16: a scan of a log with scattered damage decodes little
// more than a scan of the same log intact. It used to scan from each
// damaged record to the end of the log looking for a sync mark, so its
// cost grew with the damage times the log (and an open took tenths of a
// second per damaged record); a regression would multiply the decodes
// counted here.
func TestScatteredDamageScannedOnce(t *testing.T) {
	clean, bad, hit := scatteredLog(t, 2000, 50, 512)
	scan := func(log []byte) scanResult {
		fs := memWith(log)
		f, err := fs.Open("/db/chunks.dat")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		res, err := scanLog(f, fileHeaderSize, int64(len(log)), true, func(int64, *record) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	base, got := scan(clean), scan(bad)
	if len(got.corrupt) != len(hit) || got.end != int64(len(bad)) {
		t.Fatalf("the scan found %d damaged regions and ended at %d, want %d and %d", len(got.corrupt), got.end, len(hit), len(bad))
	}
	// Twice the records (the look ahead for marks, then the scan) and a
	// few tries per damaged record.
	if limit := 2*base.decodes + 8*len(hit); got.decodes > limit {
		t.Fatalf("a scan with %d damaged records decoded %d times, one with none %d (limit %d)", len(hit), got.decodes, base.decodes, limit)
	}
	for _, ro := range []bool{true, false} {
		db := open(t, memWith(bad), "/db", Options{ReadOnly: ro})
		if rec := db.Recovery(); len(rec.Corrupt) != len(hit) || rec.TornBytes != 0 {
			t.Fatalf("read-only %v: recovery found %d damaged regions and a torn tail of %d", ro, len(rec.Corrupt), rec.TornBytes)
		}
		db.Close()
	}
}

// BenchmarkOpenScatteredDamage: issue 35 item 16. Opening (by a scan) a log
// of 4,000 records with 50 damaged ones, against the same log intact.
func BenchmarkOpenScatteredDamage(b *testing.B) {
	clean, bad, _ := scatteredLog(b, 4000, 50, 2048)
	for _, c := range []struct {
		name string
		log  []byte
	}{{"clean", clean}, {"damaged", bad}} {
		b.Run(c.name, func(b *testing.B) {
			fs := memWith(c.log)
			b.SetBytes(int64(len(c.log)))
			for b.Loop() {
				db, err := Open("/db", Options{FS: fs, Logger: quiet, ReadOnly: true})
				if err != nil {
					b.Fatal(err)
				}
				db.Close()
			}
		})
	}
}
