package worldtest

import (
	"testing"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Compare must see a change in any part of a column.
func TestCompareDetectsDifferences(t *testing.T) {
	br := world.DefaultBlockRegistry
	base := Synthetic(1, world.Overworld, br)
	if err := Compare(base, Synthetic(1, world.Overworld, br)); err != nil {
		t.Fatalf("identical columns differ: %v", err)
	}
	for name, change := range map[string]func(c *chunk.Column){
		"block layer 0": func(c *chunk.Column) { c.Chunk.SetBlock(1, 10, 1, 0, States(br)["minecraft:gold_ore"]) },
		"block layer 1": func(c *chunk.Column) { c.Chunk.SetBlock(2, -50, 3, 1, States(br)["minecraft:water"]) },
		"biome":         func(c *chunk.Column) { c.Chunk.SetBiome(4, 100, 4, 77) },
		"block entity":  func(c *chunk.Column) { c.BlockEntities[0].Data["CustomName"] = "other" },
		"entity":        func(c *chunk.Column) { c.Entities = append(c.Entities, chunk.Entity{ID: 5}) },
		"scheduled": func(c *chunk.Column) {
			c.ScheduledBlocks = append(c.ScheduledBlocks, chunk.ScheduledBlockUpdate{Pos: cube.Pos{1, 2, 3}})
		},
		"tick": func(c *chunk.Column) { c.Tick++ },
	} {
		c := Synthetic(1, world.Overworld, br)
		change(c)
		if Compare(base, c) == nil {
			t.Errorf("%s: difference not seen", name)
		}
	}
}

func TestSyntheticPalettes(t *testing.T) {
	c := Synthetic(7, world.Overworld, world.DefaultBlockRegistry)
	most := 0
	for _, s := range c.Chunk.Sub() {
		for _, l := range s.Layers() {
			most = max(most, l.Palette().Len())
		}
	}
	if most < 9 || most > 34 {
		t.Fatalf("largest palette %d, want 9 to 34", most)
	}
}

// Every version Versions makes differs from every other, and a block that
// would leave a column as it was is refused: air made two versions equal,
// and the crash simulations then took a durable store for a lost one.
func TestVersionsDiffer(t *testing.T) {
	states := States(world.DefaultBlockRegistry)
	v := NewVersions(world.Nether, 2)
	for i := range 40 {
		v.Next(states[[]string{"minecraft:stone", "minecraft:dirt"}[i%3%2]])
	}
	for i, a := range v.After {
		if f := v.Find(i%2, a); f != i {
			t.Fatalf("version %d is found as %d", i, f)
		}
	}
	// A state no store left is found as none: one with a block no store
	// set, and one whose blocks are a version's but another column's.
	odd := &chunk.Column{Chunk: v.After[7].Chunk.Clone()}
	odd.Chunk.SetBlock(15, 15, 15, 0, states["minecraft:stone"])
	if f := v.Find(1, odd); f != -1 {
		t.Fatalf("a version with a block no store set is found as %d", f)
	}
	if f := v.Find(0, v.After[7]); f != -1 {
		t.Fatalf("column 1's version 7 is found as %d of column 0", f)
	}
	air, _ := world.DefaultBlockRegistry.StateToRuntimeID("minecraft:air", nil)
	defer func() {
		if recover() == nil {
			t.Fatal("Next(air) did not panic")
		}
	}()
	v.Next(air)
}
