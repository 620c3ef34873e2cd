package tests

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// bulkCopies is how many times the bulk benchmarks repeat the real
// worlds' 183 columns, each copy at places of its own: 2,928 columns.
const bulkCopies = 16

// bulkColumns returns the real worlds' columns repeated bulkCopies times,
// each at a place of its own (the three worlds share positions).
func bulkColumns(b *testing.B) []worldtest.Column {
	cols := realWorld(b)
	out := make([]worldtest.Column, 0, len(cols)*bulkCopies)
	for range bulkCopies {
		for _, c := range cols {
			c.Pos = world.ChunkPos{int32(len(out) % 64), int32(len(out) / 64)}
			out = append(out, c)
		}
	}
	return out
}

// BenchmarkBulkStore (issue 42 item 4) stores a few thousand real columns
// into a new world, as a conversion or a map pre-generation does, and
// closes it: the time counts every column written, not only acknowledged.
// cols/s is the throughput.
func BenchmarkBulkStore(b *testing.B) {
	cols := bulkColumns(b)
	for _, c := range contenders {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var took, cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				p := c.open(b, b.TempDir())
				b.StartTimer()
				start, cpu0 := time.Now(), cpuTime()
				for _, col := range cols {
					if err := p.StoreColumn(col.Pos, col.Dim, col.Col); err != nil {
						b.Fatal(err)
					}
				}
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
				took += time.Since(start)
				cpu += cpuTime() - cpu0
			}
			b.ReportMetric(float64(len(cols)*b.N)/took.Seconds(), "cols/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(len(cols)*b.N), "cpu-µs/col")
		})
	}
}

// bulkLevelDB builds, in a new temporary directory, a LevelDB world
// (Dragonfly's mcdb) holding bulkColumns.
func bulkLevelDB(b *testing.B) string {
	dir := b.TempDir()
	p := openMcdb(b, dir)
	for _, col := range bulkColumns(b) {
		if err := p.StoreColumn(col.Pos, col.Dim, col.Col); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkConvert (issue 42 item 4) converts a LevelDB world of the real
// worlds' columns repeated to 2,928 into a new Blaze world, as `blaze
// convert` does (verification included), and each real world as it is.
func BenchmarkConvert(b *testing.B) {
	run := func(b *testing.B, src string) {
		var n int
		var took, cpu time.Duration
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			dst := filepath.Join(b.TempDir(), fmt.Sprint("w", i))
			b.StartTimer()
			start, cpu0 := time.Now(), cpuTime()
			r, err := convert.Convert(src, dst, convert.Options{})
			took += time.Since(start)
			cpu += cpuTime() - cpu0
			if err != nil || len(r.Failed) > 0 {
				b.Fatalf("convert: %v, %+v", err, r)
			}
			n += r.Columns
		}
		b.ReportMetric(float64(n)/took.Seconds(), "cols/s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/col")
	}
	tiled := bulkLevelDB(b)
	b.Run("tiled", func(b *testing.B) { run(b, tiled) })
	for _, path := range worldtest.Worlds(b) {
		b.Run(worldtest.Name(path), func(b *testing.B) { run(b, worldtest.UnpackTemp(b, path)) })
	}
}
