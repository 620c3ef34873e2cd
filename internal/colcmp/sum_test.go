package colcmp_test

import (
	"math"
	"testing"

	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Issue 42 item 4: a column's Sum, what the converter keeps of each column
// it read to verify what it wrote, agrees with Compare: equal for columns
// Compare calls equal however their storages are laid out (palettes
// compacted, an extra layer of air, empty and nil lists, a NaN of the same
// bits), different for each kind of difference Compare finds.
func TestSumAgreesWithCompare(t *testing.T) {
	br := world.DefaultBlockRegistry
	st := worldtest.States(br)
	s := colcmp.NewSummer()
	// Two sub-chunks, so that Compare under the race detector is quick: a
	// few kinds of block and biome, an entity and a block entity.
	base := func() *chunk.Column {
		c := chunk.New(br, cube.Range{0, 31})
		for i := range 300 {
			x, y, z := uint8(i%16), int16(i*7%32), uint8(i*3%16)
			c.SetBlock(x, y, z, 0, st[[]string{"minecraft:stone", "minecraft:dirt", "minecraft:grass_block"}[i%3]])
			c.SetBiome(x, y, z, uint32(i%4))
		}
		return &chunk.Column{Chunk: c, Tick: 9,
			Entities:      []chunk.Entity{{ID: 3, Data: map[string]any{"Motion": []any{math.Float32frombits(0x7fc00001)}, "Tags": map[string]any{"a": int32(1), "b": "x"}}}},
			BlockEntities: []chunk.BlockEntity{{Pos: cube.Pos{1, 2, 3}, Data: map[string]any{"id": "Chest", "Items": []any{}}}},
		}
	}
	want := s.Sum(base())
	same := map[string]func(*chunk.Column){
		"nothing": func(*chunk.Column) {},
		"compacted palettes": func(c *chunk.Column) {
			c.Chunk.SetBlock(0, 0, 0, 0, st["minecraft:obsidian"])
			c.Chunk.SetBlock(0, 0, 0, 0, c.Chunk.Block(1, 0, 0, 0))
			c.Chunk.SetBlock(0, 0, 0, 0, base().Chunk.Block(0, 0, 0, 0))
			c.Chunk.Compact()
		},
		"an extra layer of air": func(c *chunk.Column) {
			c.Chunk.SetBlock(5, 5, 5, 1, st["minecraft:water"])
			c.Chunk.SetBlock(5, 5, 5, 1, br.AirRuntimeID())
		},
		"empty lists for nil": func(c *chunk.Column) {
			if c.ScheduledBlocks == nil {
				c.ScheduledBlocks = []chunk.ScheduledBlockUpdate{}
			}
		},
	}
	for name, f := range same {
		c := base()
		f(c)
		if err := colcmp.Compare(base(), c); err != nil {
			t.Fatalf("%s: Compare: %v", name, err)
		}
		if s.Sum(c) != want {
			t.Errorf("%s: the Sum differs where Compare finds no difference", name)
		}
	}
	differs := map[string]func(*chunk.Column){
		"a block":            func(c *chunk.Column) { c.Chunk.SetBlock(3, 20, 9, 0, st["minecraft:obsidian"]) },
		"a block of layer 1": func(c *chunk.Column) { c.Chunk.SetBlock(3, 20, 9, 1, st["minecraft:water"]) },
		"a biome":            func(c *chunk.Column) { c.Chunk.SetBiome(1, 30, 1, c.Chunk.Biome(1, 30, 1)+7) },
		"the tick":           func(c *chunk.Column) { c.Tick++ },
		"an entity's NaN": func(c *chunk.Column) {
			c.Entities[len(c.Entities)-1].Data["Motion"] = []any{math.Float32frombits(0x7fc00002)}
		},
		"a value's type": func(c *chunk.Column) { c.Entities[len(c.Entities)-1].Data["Tags"].(map[string]any)["a"] = int64(1) },
		"a map entry":    func(c *chunk.Column) { c.Entities[len(c.Entities)-1].Data["Tags"].(map[string]any)["c"] = "y" },
		"a block entity": func(c *chunk.Column) { c.BlockEntities = c.BlockEntities[1:] },
		"a scheduled update": func(c *chunk.Column) {
			c.ScheduledBlocks = append(c.ScheduledBlocks, chunk.ScheduledBlockUpdate{Block: 1})
		},
	}
	for name, f := range differs {
		c := base()
		f(c)
		if colcmp.Compare(base(), c) == nil {
			t.Fatalf("%s: Compare finds no difference", name)
		}
		if s.Sum(c) == want {
			t.Errorf("%s: the Sum is the same where Compare finds a difference", name)
		}
	}
}
