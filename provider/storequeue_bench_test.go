package provider

import (
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// realOverworld returns the overworld columns of the real worlds in
// ../shared, compacted as World.saveChunk compacts a column before it
// stores it.
func realOverworld(b testing.TB) []*chunk.Column {
	var out []*chunk.Column
	for _, path := range worldtest.Worlds(b) {
		cols, err := worldtest.ReadAll(worldtest.UnpackTemp(b, path), world.DefaultBlockRegistry)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range cols {
			if c.Dim == world.Overworld {
				c.Col.Chunk.Compact()
				out = append(out, c.Col)
			}
		}
	}
	if len(out) == 0 {
		b.Skip("no real worlds")
	}
	return out
}

// BenchmarkSnapshotNew is the tick's share of a store of a new column in
// DurabilityBalanced and DurabilityFast (issue 42): snapshotOf with no
// snapshot to share with, over the real worlds' overworld columns. In
// "world" the columns hold no entities, as the autosave benchmark's World
// (which registers no entity types) hands them over; "entities" keeps the
// worlds' entities. "chunk-clone" is the floor to compare with:
// Dragonfly's own copy of the same columns' blocks and biomes
// (Chunk.Clone), the least any copy a store keeps must make.
func BenchmarkSnapshotNew(b *testing.B) {
	cols := realOverworld(b)
	bare := make([]*chunk.Column, len(cols))
	for i, c := range cols {
		cp := *c
		cp.Entities = nil
		bare[i] = &cp
	}
	b.Run("chunk-clone", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			bare[i%len(bare)].Chunk.Clone()
		}
	})
	for _, in := range []struct {
		name string
		cols []*chunk.Column
	}{{"world", bare}, {"entities", cols}} {
		b.Run(in.name, func(b *testing.B) {
			db := openDB(b, b.TempDir(), Config{})
			_, br := db.columns()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				db.dict.snapshotOf(blazedb.Key{X: int32(i)}, br, in.cols[i%len(in.cols)], nil)
			}
		})
	}
}
