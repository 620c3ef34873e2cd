package provider

import (
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// historyWorld makes a world of n columns (256 distinct synthetic ones,
// repeated), takes snapshot "s", then stores every column again with
// other contents, so that a View of "s" reads older versions throughout.
// It returns the directory and a time between the two sets of writes.
func historyWorld(b *testing.B, n int) (string, string) {
	dir := b.TempDir()
	db := openDB(b, dir, Config{Durability: blazedb.DurabilityFast})
	pos := func(i int) world.ChunkPos { return world.ChunkPos{int32(i % 100), int32(i / 100)} }
	const distinct = 256
	recs := make([][]byte, 2*distinct)
	for i := range recs {
		col := worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
		if err := db.StoreColumn(pos(i), world.Overworld, col); err != nil {
			b.Fatal(err)
		}
		k, _ := key(pos(i), world.Overworld)
		var err error
		if recs[i], err = db.Engine().Get(k); err != nil {
			b.Fatal(err)
		}
	}
	// Records whose dictionary entries are stored: copied to every key.
	put := func(off int) {
		for i := range n {
			k, _ := key(pos(i), world.Overworld)
			if err := db.Engine().Put(k, recs[off+i%distinct]); err != nil {
				b.Fatal(err)
			}
		}
	}
	put(0)
	if err := db.Snapshot("s"); err != nil {
		b.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	at := time.Now().Format(time.RFC3339Nano)
	time.Sleep(1100 * time.Millisecond)
	put(distinct)
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return dir, at
}

// BenchmarkViewOpen opens and closes a View of a 10,000-column world, by
// snapshot and by time (issue 36: at most 10 ms). Opening reads no column.
func BenchmarkViewOpen(b *testing.B) {
	dir, at := historyWorld(b, 10_000)
	db := openDB(b, dir, Config{})
	for _, point := range []struct{ name, p string }{{"snapshot", "s"}, {"time", at}} {
		b.Run(point.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v, err := db.At(point.p)
				if err != nil {
					b.Fatal(err)
				}
				v.Close()
			}
		})
	}
}

// BenchmarkViewColdLoad sets a cold load from a View (a column's older
// version, found through the engine's history) beside a cold load of the
// present, column by column on the same machine, both without caches
// (issue 36: a View's at most 2×). view/now is the ratio.
func BenchmarkViewColdLoad(b *testing.B) {
	const n = 10_000
	dir, _ := historyWorld(b, n)
	db := openDB(b, dir, Config{CacheBytes: -1, ColumnCacheBytes: -1})
	v, err := db.At("s")
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	var now, view time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := world.ChunkPos{int32(i % n % 100), int32(i % n / 100)}
		start := time.Now()
		if _, err := db.LoadColumn(p, world.Overworld); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := v.LoadColumn(p, world.Overworld); err != nil {
			b.Fatal(err)
		}
		now, view = now+mid.Sub(start), view+time.Since(mid)
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / 1e3 }
	b.ReportMetric(per(now), "now-µs/load")
	b.ReportMetric(per(view), "view-µs/load")
	b.ReportMetric(float64(view)/float64(now), "view/now")
}
