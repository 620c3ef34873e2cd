package worldtest

import (
	"math/rand/v2"
	"sync"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// stateNames are the blocks synthetic columns are built from: a realistic
// palette of 9 to 34 states per sub-chunk.
var stateNames = []string{
	"minecraft:stone", "minecraft:dirt", "minecraft:grass_block", "minecraft:deepslate",
	"minecraft:coal_ore", "minecraft:iron_ore", "minecraft:copper_ore", "minecraft:gold_ore",
	"minecraft:diamond_ore", "minecraft:redstone_ore", "minecraft:lapis_ore", "minecraft:deepslate_iron_ore",
	"minecraft:deepslate_diamond_ore", "minecraft:gravel", "minecraft:sand", "minecraft:andesite",
	"minecraft:diorite", "minecraft:granite", "minecraft:tuff", "minecraft:calcite", "minecraft:bedrock",
	"minecraft:water", "minecraft:lava", "minecraft:oak_log", "minecraft:oak_leaves", "minecraft:short_grass",
	"minecraft:clay", "minecraft:cobblestone", "minecraft:mossy_cobblestone", "minecraft:glow_lichen",
	"minecraft:netherrack", "minecraft:soul_sand", "minecraft:end_stone", "minecraft:obsidian", "minecraft:chest",
}

var (
	statesOnce sync.Once
	states     map[string]uint32
)

// States returns a runtime id for each of the synthetic block names the
// registry knows.
func States(br world.BlockRegistry) map[string]uint32 {
	statesOnce.Do(func() {
		br.Finalize()
		states = map[string]uint32{}
		want := map[string]bool{}
		for _, n := range stateNames {
			want[n] = true
		}
		for rid := uint32(0); rid < uint32(br.BlockCount()); rid++ {
			if name, _, ok := br.RuntimeIDToState(rid); ok && want[name] {
				if _, seen := states[name]; !seen {
					states[name] = rid
				}
			}
		}
	})
	return states
}

func hash3(seed uint64, x, y, z int) uint64 {
	h := seed ^ uint64(x)*0x9E3779B97F4A7C15 ^ uint64(y)*0xC2B2AE3D27D4EB4F ^ uint64(z)*0x165667B19E3779F9
	h ^= h >> 31
	h *= 0xD6E8FEB86659FD93
	return h ^ h>>29
}

// Synthetic builds a deterministic, realistic column for a dimension's
// range: stone and deepslate with ores and caves, a surface with grass, sand
// and trees, water with waterlogged blocks in layer 1, varied biomes, chests
// with items, entities and scheduled updates.
func Synthetic(seed uint64, dim world.Dimension, br world.BlockRegistry) *chunk.Column {
	s := States(br)
	r := dim.Range()
	c := chunk.New(br, r)
	rng := rand.New(rand.NewPCG(seed, 99))
	base, deep, surface := s["minecraft:stone"], s["minecraft:deepslate"], s["minecraft:grass_block"]
	ores := []uint32{s["minecraft:coal_ore"], s["minecraft:iron_ore"], s["minecraft:copper_ore"], s["minecraft:gold_ore"], s["minecraft:redstone_ore"], s["minecraft:lapis_ore"], s["minecraft:diamond_ore"], s["minecraft:deepslate_iron_ore"], s["minecraft:deepslate_diamond_ore"]}
	fill := []uint32{s["minecraft:andesite"], s["minecraft:diorite"], s["minecraft:granite"], s["minecraft:tuff"], s["minecraft:gravel"], s["minecraft:dirt"], s["minecraft:clay"], s["minecraft:calcite"]}
	switch dim {
	case world.Nether:
		base, deep, surface = s["minecraft:netherrack"], s["minecraft:netherrack"], s["minecraft:soul_sand"]
	case world.End:
		base, deep, surface = s["minecraft:end_stone"], s["minecraft:end_stone"], s["minecraft:end_stone"]
	}
	top := r[0] + (r[1]-r[0])/3 + int(seed%8)
	water := s["minecraft:water"]
	for x := uint8(0); x < 16; x++ {
		for z := uint8(0); z < 16; z++ {
			h := top + int(hash3(seed, int(x)/4, 0, int(z)/4)%6)
			for y := r[0]; y <= h; y++ {
				v := base
				if y < 0 || (dim != world.Overworld && y < r[0]+20) {
					v = deep
				}
				n := hash3(seed, int(x), y, int(z))
				switch {
				case y == r[0]:
					v = s["minecraft:bedrock"]
				case n%97 < 3:
					v = ores[n%uint64(len(ores))]
				case n%41 < 4:
					v = fill[n%uint64(len(fill))]
				case hash3(seed+1, int(x)/3, y/3, int(z)/3)%11 == 0:
					continue // cave
				case y == h:
					v = surface
				case y > h-3:
					v = s["minecraft:dirt"]
				}
				c.SetBlock(x, int16(y), z, 0, v)
				if v == ores[0] && n%5 == 0 {
					c.SetBlock(x, int16(y), z, 1, water) // waterlogged, layer 1
				}
			}
			if dim == world.Overworld && hash3(seed, int(x), 1, int(z))%5 == 0 {
				c.SetBlock(x, int16(h+1), z, 0, water)
				c.SetBlock(x, int16(h+2), z, 0, water)
			}
			for y := r[0]; y <= r[1]; y += 4 {
				c.SetBiome(x, int16(y), z, uint32(1+hash3(seed, int(x)/8, y/64, int(z)/8)%5))
			}
		}
	}
	// A tree.
	if dim == world.Overworld {
		tx, tz := uint8(3+rng.IntN(9)), uint8(3+rng.IntN(9))
		for y := top + 6; y < top+11; y++ {
			c.SetBlock(tx, int16(y), tz, 0, s["minecraft:oak_log"])
		}
		for dx := -2; dx <= 2; dx++ {
			for dz := -2; dz <= 2; dz++ {
				c.SetBlock(uint8(int(tx)+dx), int16(top+11), uint8(int(tz)+dz), 0, s["minecraft:oak_leaves"])
			}
		}
	}
	col := &chunk.Column{Chunk: c, Tick: int64(seed * 20)}
	for i := 0; i < 1+rng.IntN(3); i++ {
		pos := cube.Pos{rng.IntN(16), top + 1, rng.IntN(16)}
		c.SetBlock(uint8(pos[0]), int16(pos[1]), uint8(pos[2]), 0, s["minecraft:chest"])
		col.BlockEntities = append(col.BlockEntities, chunk.BlockEntity{Pos: pos, Data: map[string]any{
			"id": "Chest", "x": int32(pos[0]), "y": int32(pos[1]), "z": int32(pos[2]), "CustomName": "loot",
			"Items": []any{
				map[string]any{"Name": "minecraft:diamond", "Count": uint8(3), "Slot": uint8(0), "Damage": int16(0)},
				map[string]any{"Name": "minecraft:bread", "Count": uint8(12), "Slot": uint8(5), "Damage": int16(0)},
			},
		}})
	}
	for i := 0; i < rng.IntN(3); i++ {
		id := int64(rng.Uint64() >> 1)
		col.Entities = append(col.Entities, chunk.Entity{ID: id, Data: map[string]any{
			"identifier": "minecraft:item", "UniqueID": id,
			"Pos":    []any{float32(rng.IntN(16)), float32(top + 2), float32(rng.IntN(16))},
			"Motion": []any{float32(0), float32(0), float32(0)},
			"Item":   map[string]any{"Name": "minecraft:apple", "Count": uint8(1)},
		}})
	}
	for i := 0; i < rng.IntN(4); i++ {
		col.ScheduledBlocks = append(col.ScheduledBlocks, chunk.ScheduledBlockUpdate{
			Pos: cube.Pos{rng.IntN(16), top + 1, rng.IntN(16)}, Block: water, Tick: col.Tick + int64(rng.IntN(40)),
		})
	}
	return col
}

// ChangeOneBlock changes one block of col, chosen by i, always to a state
// the block does not hold (obsidian, or cobblestone where obsidian is), in
// any dimension's height range. Benchmarks of changed columns use it:
// positions chosen by i repeat, and setting a block to what it already is
// would measure an unchanged store.
func ChangeOneBlock(col *chunk.Column, i int) {
	obsidian, cobble := changeStates()
	r := col.Chunk.Range()
	x, y, z := uint8(i%16), int16(r[0]+i%r.Height()), uint8(i/16%16)
	to := obsidian
	if col.Chunk.Block(x, y, z, 0) == obsidian {
		to = cobble
	}
	col.Chunk.SetBlock(x, y, z, 0, to)
}

var changeStates = sync.OnceValues(func() (uint32, uint32) {
	s := States(world.DefaultBlockRegistry)
	return s["minecraft:obsidian"], s["minecraft:cobblestone"]
})
