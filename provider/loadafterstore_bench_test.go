package provider

import (
	"testing"

	"github.com/df-mc/dragonfly/server/world"
)

// BenchmarkLoadAfterStore is the first hot load of a column once its store
// is written, in DurabilityBalanced (issue 42 item 4): the store worker
// leaves the cache's snapshot holding the tick's flat copies of the
// changed sub-chunks, which this load builds (snapshot.build) before it
// clones the chunk. Each op is one load of one of the real worlds' overworld
// columns, stored anew (and written, Sync) outside the timer.
func BenchmarkLoadAfterStore(b *testing.B) {
	cols := realOverworld(b)
	db := openDB(b, b.TempDir(), Config{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		pos := world.ChunkPos{int32(i), 0}
		if i%len(cols) == 0 {
			b.StopTimer()
			for j := range cols {
				if err := db.StoreColumn(world.ChunkPos{int32(i + j), 0}, world.Overworld, cols[j]); err != nil {
					b.Fatal(err)
				}
			}
			if err := db.Sync(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if _, err := db.LoadColumn(pos, world.Overworld); err != nil {
			b.Fatal(err)
		}
	}
}
