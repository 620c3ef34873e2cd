package provider

import (
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/df-mc/dragonfly/server/world"
)

// BenchmarkColdLoadFloor sets a cold LoadColumn beside the codec work it
// cannot avoid on the same columns: decoding the stored record (LZ4 of each
// frame, dictionary translation, index checks, Dragonfly's NetworkDecode,
// NBT). Issue #5 asks for cold ≤ 1.3× that floor; the difference is the
// engine (index lookup, pread, CRC) and handing the record to the snapshot
// worker. It also decodes the same column from a record stored without
// compression, which separates decompression from the rest. The columns
// are those of tests/'s realistic benchmarks, stored in DurabilityFast.
func BenchmarkColdLoadFloor(b *testing.B) {
	const n = 256
	dir := b.TempDir()
	conf := Config{Durability: blazedb.DurabilityFast}
	db := openDB(b, dir, conf)
	pos := func(i int) world.ChunkPos { return world.ChunkPos{int32(i % 64), int32(i / 64)} }
	recs, plain := make([][]byte, n), make([][]byte, n)
	for i := range n {
		col := worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
		if err := db.StoreColumn(pos(i), world.Overworld, col); err != nil {
			b.Fatal(err)
		}
		k, _ := key(pos(i), world.Overworld)
		var err error
		if recs[i], err = db.Engine().Get(k); err != nil {
			b.Fatal(err)
		}
		enc, err := db.dict.codec.Encode(col, column.Prev{}, blazedb.CompressionNone)
		if err != nil {
			b.Fatal(err)
		}
		plain[i] = enc.Rec
	}
	db.Close()
	rng := world.Overworld.Range()

	// Each iteration loads column j cold, then runs the floor on the
	// same column, so both see the same machine: on this 2-core VM, figures
	// of separate runs drift by more than the gap measured here.
	run := func(b *testing.B, conf Config) {
		db := openDB(b, dir, conf)
		var cold, floor, uncompressed time.Duration
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			j := i % n
			if j == 0 && i > 0 {
				db.Close()
				db = openDB(b, dir, conf)
			}
			start := time.Now()
			if _, err := db.LoadColumn(pos(j), world.Overworld); err != nil {
				b.Fatal(err)
			}
			mid := time.Now()
			if _, err := db.dict.codec.DecodeColumn(recs[j], rng); err != nil {
				b.Fatal(err)
			}
			end := time.Now()
			if _, err := db.dict.codec.DecodeColumn(plain[j], rng); err != nil {
				b.Fatal(err)
			}
			cold, floor, uncompressed = cold+mid.Sub(start), floor+end.Sub(mid), uncompressed+time.Since(end)
		}
		db.Close()
		per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / 1e3 }
		b.ReportMetric(per(cold), "cold-µs/load")
		b.ReportMetric(per(floor), "decode-µs")
		b.ReportMetric(per(uncompressed), "decode-uncompressed-µs")
		b.ReportMetric(float64(cold)/float64(floor), "cold/floor")
	}
	b.Run("interleaved", func(b *testing.B) { run(b, conf) })
	// The same with no snapshot worker beside the loads (what a load costs
	// when nothing else wants the second core).
	noWorker := conf
	noWorker.ExternalMaintenance = true
	b.Run("interleaved-no-worker", func(b *testing.B) { run(b, noWorker) })
}
