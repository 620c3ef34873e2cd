package segment

import (
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// A registry set while regions are open reaches them, their cached
// columns included, and every region opened later. Dragonfly calls
// SetBlockRegistry once per World, so a World created after another has
// loaded chunks sets it with regions open.
func TestSetBlockRegistryReachesOpenRegions(t *testing.T) {
	dir := t.TempDir()
	p := openSeg(t, dir, Config{SegmentSize: 2})
	dim := world.Overworld
	open := []world.ChunkPos{{0, 0}, {5, 5}} // two regions, open and cached
	later := world.ChunkPos{-9, 4}           // a region not open yet
	cols := map[world.ChunkPos]int{}
	for i, pos := range append(open, later) {
		if err := p.StoreColumn(pos, dim, col(uint64(i+1), dim)); err != nil {
			t.Fatal(err)
		}
		cols[pos] = i + 1
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = openSeg(t, dir, Config{SegmentSize: 2})
	for _, pos := range open {
		if _, err := p.LoadColumn(pos, dim); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.OpenSegments(); n != len(open) {
		t.Fatalf("%d regions open, want %d", n, len(open))
	}
	p.SetBlockRegistry(world.DefaultBlockRegistry) // the same again: nothing changes
	moved := worldtest.PermutedRegistry(9, "")
	p.SetBlockRegistry(moved)
	for pos, seed := range cols {
		got, err := p.LoadColumn(pos, dim)
		if err != nil {
			t.Fatal(err)
		}
		if err := moved.CheckMoved(col(uint64(seed), dim), got); err != nil {
			t.Fatalf("column %v under the new registry: %v", pos, err)
		}
	}
}
