package restore

import (
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// benchColumn is one of the benchmark's synthetic columns, lit.
func benchColumn() *chunk.Column {
	col := worldtest.Synthetic(5000, world.Overworld, world.DefaultBlockRegistry)
	chunk.LightArea([]*chunk.Chunk{col.Chunk}, 0, 0).Fill()
	return col
}

// BenchmarkColumnParts measures, for one synthetic column (five biomes in
// every sub-chunk), the public ways to read a chunk's biomes, which a slice
// would need to compare them on the tick (EncodeBiomes; Clone, which also
// copies the sub-chunks and their light), against comparing its sub-chunks'
// storages with an equal column's.
//
//	go test -run '^$' -bench ColumnParts -benchmem ./restore/
func BenchmarkColumnParts(b *testing.B) {
	col := benchColumn()
	other := benchColumn()
	air := world.DefaultBlockRegistry.AirRuntimeID()
	b.Run("EncodeBiomes", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = chunk.EncodeBiomes(col.Chunk, chunk.DiskEncoding)
		}
	})
	b.Run("Clone", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = col.Chunk.Clone()
		}
	})
	b.Run("sameSub", func(b *testing.B) {
		for range b.N {
			for i, s := range col.Chunk.Sub() {
				if !sameSub(s, other.Chunk.Sub()[i], air) {
					b.Fatal("differ")
				}
			}
		}
	})
}
