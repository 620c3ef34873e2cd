package restore

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/df-mc/structure"
	"github.com/google/uuid"
)

// Structures are Bedrock's .mcstructure files, read and written with
// github.com/df-mc/structure (structure.ReadFile, structure.WriteFile).
// A structure holds blocks (layer 0, and a liquid in layer 1) with their
// block entities; it holds no biomes and no light. Entities are not
// exported or pasted.

// Export reads the blocks of the box from lo to hi (both included) of dim
// from any provider (a world on disk, a template, a point-in-time view)
// into a structure whose origin is lo. Columns the provider does not hold
// export as air. A block in layer 1 that is not a liquid is not exported:
// the format keeps only liquids there.
func Export(from world.Provider, dim world.Dimension, lo, hi cube.Pos) (structure.Structure, error) {
	if lo[0] > hi[0] || lo[1] > hi[1] || lo[2] > hi[2] {
		return structure.Structure{}, fmt.Errorf("%w: box %v to %v", ErrArea, lo, hi)
	}
	r := dim.Range()
	if lo[1] < r[0] || hi[1] > r[1] {
		return structure.Structure{}, fmt.Errorf("%w: box %v to %v outside the height range %v", ErrArea, lo, hi, r)
	}
	br := world.DefaultBlockRegistry
	size := [3]int{hi[0] - lo[0] + 1, hi[1] - lo[1] + 1, hi[2] - lo[2] + 1}
	s := structure.New(size)
	var bare []int // offsets of blocks with NBT that the source keeps none for
	s.Origin = []int32{int32(lo[0]), int32(lo[1]), int32(lo[2])}
	for cx := lo[0] >> 4; cx <= hi[0]>>4; cx++ {
		for cz := lo[2] >> 4; cz <= hi[2]>>4; cz++ {
			pos := world.ChunkPos{int32(cx), int32(cz)}
			col, err := from.LoadColumn(pos, dim)
			if errors.Is(err, leveldb.ErrNotFound) {
				continue // air, as New made it
			}
			if err != nil {
				return structure.Structure{}, fmt.Errorf("restore: export: load column %v (%v): %w", pos, dim, err)
			}
			bes := make(map[cube.Pos]map[string]any, len(col.BlockEntities))
			for _, be := range col.BlockEntities {
				bes[be.Pos] = be.Data
			}
			for x := max(lo[0], cx<<4); x <= min(hi[0], cx<<4+15); x++ {
				for z := max(lo[2], cz<<4); z <= min(hi[2], cz<<4+15); z++ {
					for y := lo[1]; y <= hi[1]; y++ {
						rid := col.Chunk.Block(uint8(x), int16(y), uint8(z), 0)
						b, ok := br.BlockByRuntimeID(rid)
						if !ok {
							return structure.Structure{}, fmt.Errorf("restore: export: block %v: unknown runtime id %d", cube.Pos{x, y, z}, rid)
						}
						if nb, ok := b.(world.NBTer); ok {
							data, ok := bes[cube.Pos{x, y, z}]
							if !ok {
								bare = append(bare, (x-lo[0])*size[1]*size[2]+(y-lo[1])*size[2]+(z-lo[2]))
							}
							// Set encodes the block's NBT: decode the
							// source's (or none) into the block first.
							b = nb.DecodeNBT(maps.Clone(data)).(world.Block)
						}
						var liq world.Liquid
						if l1, ok := br.BlockByRuntimeID(col.Chunk.Block(uint8(x), int16(y), uint8(z), 1)); ok {
							liq, _ = l1.(world.Liquid)
						}
						s.Set(x-lo[0], y-lo[1], z-lo[2], b, liq)
					}
				}
			}
		}
	}
	out, err := settle(s)
	if err != nil {
		return structure.Structure{}, fmt.Errorf("restore: export: %w", err)
	}
	// A block with NBT whose column keeps none (the World makes it when
	// the block is first used) exports without: Set wrote its default.
	if p, ok := out.Structure.Palettes[paletteName]; ok {
		for _, off := range bare {
			delete(p.BlockPositionData, strconv.Itoa(off))
		}
	}
	return out, nil
}

// paletteName is the palette structure.Read uses, and the one written.
const paletteName = "default"

// settle returns a copy of s, written and read back. structure.Structure
// (v1.1.0) reads blocks through a pointer into its palette taken when it
// was made or read; a Set that adds to the palette may move the palette and
// leave At reading freed memory. A copy read back has the pointer right,
// and is the job's own, as a structure must be used by one goroutine at a
// time.
func settle(s structure.Structure) (out structure.Structure, err error) {
	defer func() {
		// The zero Structure, for one, panics.
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: structure unusable: %v", ErrArea, r)
		}
	}()
	var buf bytes.Buffer
	if err := structure.Write(&buf, s); err != nil {
		return structure.Structure{}, err
	}
	return structure.Read(&buf)
}

// Paste writes s into the world to holds, offline, with the structure's
// lowest corner at at: each column the structure touches is loaded (or
// made empty if to has none), changed and stored. Use it on a world no
// World has open, such as a Blaze world on disk opened with
// provider.Config.Open; for a running World use Config.Import. Positions
// the structure leaves void keep their block; block entities in the box
// are replaced by the structure's.
func Paste(to world.Provider, dim world.Dimension, s structure.Structure, at cube.Pos) error {
	src, err := newStructureSource(s, dim, at)
	if err != nil {
		return err
	}
	// Every column of the paste is built before any is stored: a structure
	// that fails in one (a solid block in its liquid layer) changes nothing.
	pastes := map[world.ChunkPos]*chunk.Column{}
	for cx := src.min[0] >> 4; cx <= src.max[0]>>4; cx++ {
		for cz := src.min[2] >> 4; cz <= src.max[2]>>4; cz++ {
			pos := world.ChunkPos{int32(cx), int32(cz)}
			if pastes[pos], err = src.LoadColumn(pos, dim); err != nil {
				return fmt.Errorf("restore: paste: %w", err)
			}
		}
	}
	for cx := src.min[0] >> 4; cx <= src.max[0]>>4; cx++ {
		for cz := src.min[2] >> 4; cz <= src.max[2]>>4; cz++ {
			pos := world.ChunkPos{int32(cx), int32(cz)}
			col, err := to.LoadColumn(pos, dim)
			if errors.Is(err, leveldb.ErrNotFound) {
				col, err = &chunk.Column{Chunk: chunk.New(world.DefaultBlockRegistry, dim.Range())}, nil
			}
			if err != nil {
				return fmt.Errorf("restore: paste: load column %v (%v): %w", pos, dim, err)
			}
			paste := pastes[pos]
			m := src.mask()
			for x := uint8(0); x < 16; x++ {
				for z := uint8(0); z < 16; z++ {
					for y := src.min[1]; y <= src.max[1]; y++ {
						if !m.covers(cube.Pos{cx<<4 | int(x), y, cz<<4 | int(z)}) {
							continue
						}
						for l := range uint8(2) {
							if b := paste.Chunk.Block(x, int16(y), z, l); col.Chunk.Block(x, int16(y), z, l) != b {
								col.Chunk.SetBlock(x, int16(y), z, l, b)
							}
						}
					}
				}
			}
			bes := col.BlockEntities[:0]
			for _, be := range col.BlockEntities {
				if !m.covers(be.Pos) {
					bes = append(bes, be)
				}
			}
			col.BlockEntities = append(bes, paste.BlockEntities...)
			if err := to.StoreColumn(pos, dim, col); err != nil {
				return fmt.Errorf("restore: paste: store column %v (%v): %w", pos, dim, err)
			}
		}
	}
	return nil
}

// Import pastes s into the running World w with the structure's lowest
// corner at at, with the same budgeted job as Start: only blocks that
// differ are set, viewers are shown them and the light is computed again.
// Positions the structure leaves void keep their block; biomes and
// entities are left alone.
func (c Config) Import(w *world.World, s structure.Structure, at cube.Pos) (*Job, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: nil world", ErrArea)
	}
	src, err := newStructureSource(s, w.Dimension(), at)
	if err != nil {
		return nil, err
	}
	c = c.withDefaults()
	j := newJob(c, w, src, Area{Dim: w.Dimension(),
		Min: world.ChunkPos{int32(src.min[0] >> 4), int32(src.min[2] >> 4)},
		Max: world.ChunkPos{int32(src.max[0] >> 4), int32(src.max[2] >> 4)}})
	j.mask = src.mask()
	go j.run()
	return j, nil
}

// structureSource is a world.Provider of the columns a structure pasted at
// a place makes: its blocks and block entities inside the box, air
// elsewhere. The job reads only LoadColumn, with the mask telling it which
// positions count.
type structureSource struct {
	s        structure.Structure
	dim      world.Dimension
	min, max cube.Pos
	size     [3]int
	voids    bool
	nbt      map[string]any // the offsets with block entity data
}

func newStructureSource(s structure.Structure, dim world.Dimension, at cube.Pos) (*structureSource, error) {
	s, err := settle(s)
	if err != nil {
		return nil, fmt.Errorf("restore: structure: %w", err)
	}
	d := s.Dimensions()
	if d[0] <= 0 || d[1] <= 0 || d[2] <= 0 {
		return nil, fmt.Errorf("%w: empty structure %v", ErrArea, d)
	}
	if err := checkIndices(s, d); err != nil {
		return nil, err
	}
	src := &structureSource{s: s, dim: dim, min: at, max: at.Add(cube.Pos{d[0] - 1, d[1] - 1, d[2] - 1}), size: d}
	if r := dim.Range(); src.min[1] < r[0] || src.max[1] > r[1] {
		return nil, fmt.Errorf("%w: structure from %v to %v outside the height range %v", ErrArea, src.min, src.max, r)
	}
	src.nbt = map[string]any{}
	if p, ok := s.Structure.Palettes[paletteName]; ok {
		for k := range p.BlockPositionData {
			src.nbt[k] = nil
		}
	}
	for _, i := range s.Structure.BlockIndices[0] {
		if i == -1 {
			src.voids = true
			break
		}
	}
	return src, nil
}

// checkIndices checks what the structure package's At reads without
// bounds checks (through unsafe pointers): every layer holds a block index
// for each position of the box, and each is -1 or inside the palette. A
// file that fails would make At read outside its memory, and crash the
// process or paste garbage.
func checkIndices(s structure.Structure, d [3]int) error {
	n := int64(d[0]) * int64(d[1]) * int64(d[2])
	entries := -1
	for _, p := range s.Structure.Palettes {
		if entries == -1 || len(p.BlockPalette) < entries {
			entries = len(p.BlockPalette)
		}
	}
	for layer, indices := range s.Structure.BlockIndices {
		if int64(len(indices)) != n {
			return fmt.Errorf("%w: structure %v: layer %d holds %d block indices, not %d", ErrArea, d, layer, len(indices), n)
		}
		for i, v := range indices {
			if v < -1 || int64(v) >= int64(entries) {
				return fmt.Errorf("%w: structure: block index %d at %d of layer %d, beyond its palette of %d", ErrArea, v, i, layer, max(entries, 0))
			}
		}
	}
	return nil
}

// offset is the index of a position of the box in the structure's block
// indices (x, then y, then z, as the format lays them out).
func (src *structureSource) offset(p cube.Pos) int {
	x, y, z := p[0]-src.min[0], p[1]-src.min[1], p[2]-src.min[2]
	return x*src.size[1]*src.size[2] + y*src.size[2] + z
}

func (src *structureSource) mask() *mask {
	m := &mask{min: src.min, max: src.max}
	if src.voids {
		indices := src.s.Structure.BlockIndices[0]
		m.void = func(p cube.Pos) bool { return indices[src.offset(p)] == -1 }
	}
	return m
}

func (src *structureSource) LoadColumn(pos world.ChunkPos, dim world.Dimension) (col *chunk.Column, err error) {
	defer func() {
		// At asserts that a block of the liquid layer is a liquid.
		if r := recover(); r != nil {
			col, err = nil, fmt.Errorf("%w: structure unusable at column %v: %v", ErrArea, pos, r)
		}
	}()
	br := world.DefaultBlockRegistry
	c := chunk.New(br, dim.Range())
	col = &chunk.Column{Chunk: c}
	x0, z0 := int(pos[0])<<4, int(pos[1])<<4
	for x := max(src.min[0], x0); x <= min(src.max[0], x0+15); x++ {
		for z := max(src.min[2], z0); z <= min(src.max[2], z0+15); z++ {
			for y := src.min[1]; y <= src.max[1]; y++ {
				p := cube.Pos{x, y, z}
				b, liq := src.s.At(x-src.min[0], y-src.min[1], z-src.min[2], nil)
				if b == nil {
					continue
				}
				rid := br.BlockRuntimeID(b)
				c.SetBlock(uint8(x), int16(y), uint8(z), 0, rid)
				if liq != nil {
					c.SetBlock(uint8(x), int16(y), uint8(z), 1, br.BlockRuntimeID(liq))
				}
				if _, ok := src.nbt[strconv.Itoa(src.offset(p))]; ok && br.NBTBlock(rid) {
					// At decoded the position's NBT into b.
					col.BlockEntities = append(col.BlockEntities, chunk.BlockEntity{Pos: p, Data: b.(world.NBTer).EncodeNBT()})
				}
			}
		}
	}
	return col, nil
}

func (src *structureSource) Settings() *world.Settings    { return &world.Settings{} }
func (src *structureSource) SaveSettings(*world.Settings) {}
func (src *structureSource) StoreColumn(world.ChunkPos, world.Dimension, *chunk.Column) error {
	return errors.New("restore: a structure is read-only")
}
func (src *structureSource) LoadPlayerSpawnPosition(uuid.UUID) (cube.Pos, bool, error) {
	return cube.Pos{}, false, nil
}
func (src *structureSource) SavePlayerSpawnPosition(uuid.UUID, cube.Pos) error { return nil }
func (src *structureSource) Close() error                                      { return nil }
