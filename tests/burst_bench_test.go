package tests

import (
	"testing"
	"time"

	"github.com/df-mc/dragonfly/server/world"
)

// Stores in bursts: burstLen stores timed, then burstPause untimed.
const (
	burstLen   = 32
	burstPause = 100 * time.Millisecond
)

// BenchmarkStoreBurst stores columns in short bursts into a world that is
// otherwise idle, as an autosave does, where BenchmarkStoreColumn stores
// without pause. The difference matters for mcdb: a LevelDB that is written
// without pause must compact as fast as it is written, and holds writes
// back while its compactions catch up, so most of a sustained store's time
// is spent waiting for compaction (flate compression on the other core),
// not in the store itself. After each burst the benchmark pauses, untimed,
// long enough for those compactions to finish (mcdb measured the same with
// a pause of 400 ms as of 100 ms), so a burst measures the store's own
// work: encoding, compressing and writing.
//
// The pauses dominate the run's time, so `make bench` runs it for a fixed
// number of stores (-benchtime 640x, 20 bursts a sample).
func BenchmarkStoreBurst(b *testing.B) {
	cols := realistic(benchColumns)
	burst := func(b *testing.B, store func(i int) error) {
		time.Sleep(time.Second) // let filling the world settle
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%burstLen == 0 && i > 0 {
				b.StopTimer()
				time.Sleep(burstPause)
				b.StartTimer()
			}
			if err := store(i); err != nil {
				b.Fatal(err)
			}
		}
	}
	realCols := realWorld(b)
	for _, c := range contenders {
		for _, k := range storeKinds(cols) {
			b.Run(c.name+"/"+k.name, func(b *testing.B) {
				// Always a filled world: the first stores into an empty
				// one add block dictionary entries, which the bursts'
				// few stores would not amortise.
				p := filled(b, c, b.TempDir(), cols)
				defer p.Close()
				burst(b, func(i int) error { return k.store(p, i) })
			})
		}
		b.Run(c.name+"/real-new", func(b *testing.B) {
			// The real worlds' columns, each at a new position, into a
			// world that holds them all already (so that, as in the
			// realistic columns' bursts, no store adds dictionary entries).
			p := c.open(b, b.TempDir())
			defer p.Close()
			for _, col := range realCols {
				if err := p.StoreColumn(col.Pos, col.Dim, col.Col); err != nil {
					b.Fatal(err)
				}
			}
			burst(b, func(i int) error {
				col := realCols[i%len(realCols)]
				at := world.ChunkPos{col.Pos[0] + int32(1+i/len(realCols))*64, col.Pos[1]}
				return p.StoreColumn(at, col.Dim, col.Col)
			})
		})
	}
}
