package restore

import (
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/go-gl/mathgl/mgl64"
)

// maxBlockUpdates is the most changed blocks of a column sent to its
// viewers one by one; past it the whole chunk is sent once, as
// World.BuildStructure does.
const maxBlockUpdates = 64

// columnState is the progress through the column being restored, which
// may take more than one slice.
type columnState struct {
	sub      int // sub-chunks below it are done
	changed  bool
	biomes   bool // a biome changed: viewers need the whole chunk
	light    bool // a change affects light
	updates  []layerPos
	overflow bool // more than maxBlockUpdates changes
	blocks   int  // blocks set in the column
}

type layerPos struct {
	pos   cube.Pos
	layer uint8
}

func centre(pos world.ChunkPos) mgl64.Vec3 {
	return mgl64.Vec3{float64(pos[0])*16 + 8, 0, float64(pos[1])*16 + 8}
}

// column restores one column; it reports false when the clock is over
// before it was done, to go on in the next slice.
func (j *Job) column(tx *world.Tx, pos world.ChunkPos, live *world.Column, source source, clock *sliceClock) bool {
	src := source.col
	st := &j.col
	br := j.w.BlockRegistry()
	air := br.AirRuntimeID()
	lsubs, ssubs := live.Sub(), src.Chunk.Sub()
	if j.mask == nil && source.layers != nil && st.sub == 0 {
		// Blocks: exchanged, and compared off the tick (blocks.go).
		j.blockChecks = append(j.blockChecks, blockCheck{pos: pos, old: swapLayers(live.Chunk, source.layers, air), src: src.Chunk})
		st.sub = len(lsubs)
	}
	for ; st.sub < len(lsubs); st.sub++ {
		ls, ss := lsubs[st.sub], ssubs[st.sub]
		baseY := int(live.SubY(int16(st.sub)))
		masked := j.mask != nil && !j.mask.whole(pos, baseY)
		if !masked && sameSub(ls, ss, air) {
			continue
		}
		// The clock is read before a sub-chunk gone through block by
		// block, the unit of work; a storage comparison is cheaper than
		// reading the clock.
		if clock.over() {
			return false
		}
		var n int
		if masked {
			n = j.restoreMasked(ls, ss, pos, baseY, br)
		} else {
			n = j.restoreSub(ls, ss, pos, baseY, br)
		}
		clock.did()
		if n > 0 {
			j.st.SubChunksChanged++
			st.blocks += n
		}
	}
	if clock.over() {
		return false
	}
	// Biomes: exchanged, and compared off the tick (biomes.go).
	if j.mask == nil && source.fresh != nil {
		j.biomeChecks = append(j.biomeChecks, biomeCheck{pos: pos, old: swapBiomes(live.Chunk, source.fresh), want: source.biomes, src: src.Chunk})
	}
	j.blockEntities(pos, live, source, br)
	if j.mask == nil {
		j.entities(tx, pos, src)
	}

	st.changed = st.changed || st.blocks > 0 || st.biomes
	if st.changed {
		if !j.changed[pos] {
			j.changed[pos] = true
			j.st.ColumnsChanged++
		}
		j.st.BlocksSet += st.blocks
		j.commit(tx, pos, live)
	}
	if st.light {
		j.relight[pos] = true
	}
	j.st.ColumnsCompared++
	j.col = columnState{updates: st.updates[:0]}
	return true
}

// sameSub reports whether two sub-chunks hold the same blocks in every
// layer, comparing storages; false may still mean equal blocks (storages
// differ in palette order), which the block by block pass then finds.
func sameSub(a, b *chunk.SubChunk, air uint32) bool {
	for l := range max(len(a.Layers()), len(b.Layers())) {
		if !sameLayer(a, b, l, air) {
			return false
		}
	}
	return true
}

// sameStorage compares two storages by representation. PalettedStorage.Equal
// calls every storage of one value different, and those are most of a
// world's (air above ground, stone below).
func sameStorage(a, b *chunk.PalettedStorage) bool {
	if pa, pb := a.Palette(), b.Palette(); pa.Len() == 1 && pb.Len() == 1 {
		return pa.Value(0) == pb.Value(0)
	}
	return a.Equal(b)
}

// sameLayer compares one layer of two sub-chunks by storage, a missing
// layer being air.
func sameLayer(a, b *chunk.SubChunk, l int, air uint32) bool {
	la, lb := a.Layers(), b.Layers()
	switch {
	case l < len(la) && l < len(lb):
		return sameStorage(la[l], lb[l])
	case l < len(la):
		return uniform(la[l], air)
	case l < len(lb):
		return uniform(lb[l], air)
	}
	return true
}

func uniform(s *chunk.PalettedStorage, v uint32) bool {
	p := s.Palette()
	return p.Len() == 1 && p.Value(0) == v
}

// restoreSub counts the blocks of ls (every layer) that differ from ss,
// noting them for the viewers and for light, then gives ls copies of the
// storages of ss: a sub-chunk that holds the source's storages compares
// equal to it at once the next time. Copies, because the source column
// goes on to the light computation off the tick.
func (j *Job) restoreSub(ls, ss *chunk.SubChunk, pos world.ChunkPos, baseY int, br world.BlockRegistry) int {
	n := diffSub(ls, ss, pos, baseY, br, &j.col)
	src := ss.Layers()
	if len(src) > 0 {
		ls.Layer(uint8(len(src) - 1)) // as many layers as the source at least
	}
	dst := ls.Layers()
	for i := range dst {
		if i < len(src) {
			dst[i] = src[i].Clone()
		} else {
			dst[i] = chunk.NewSubChunk(br.AirRuntimeID()).Layer(0)
		}
	}
	return n
}

// diffSub counts the blocks of ls (every layer) that differ from ss, noting
// them in st for the viewers and for light.
func diffSub(ls, ss *chunk.SubChunk, pos world.ChunkPos, baseY int, br world.BlockRegistry, st *columnState) int {
	layers := max(len(ls.Layers()), len(ss.Layers()))
	air := br.AirRuntimeID()
	n := 0
	for l := range uint8(layers) {
		if sameLayer(ls, ss, int(l), air) {
			continue
		}
		for x := byte(0); x < 16; x++ {
			for z := byte(0); z < 16; z++ {
				for y := byte(0); y < 16; y++ {
					a, b := ls.Block(x, y, z, l), ss.Block(x, y, z, l)
					if a == b {
						continue
					}
					n++
					st.changedBlock(cube.Pos{int(pos[0])<<4 | int(x), baseY + int(y), int(pos[1])<<4 | int(z)}, l, a, b, br)
				}
			}
		}
	}
	return n
}

// commit marks a changed column modified, has its height map computed
// again and shows the change to its viewers.
func (j *Job) commit(tx *world.Tx, pos world.ChunkPos, live *world.Column) {
	st := &j.col
	r := j.w.Range()
	// Setting a block to itself flags the height map for recalculation.
	live.Chunk.SetBlock(0, int16(r[0]), 0, 0, live.Chunk.Block(0, int16(r[0]), 0, 0))
	// SetBiome is the public way to mark a column modified with no other
	// effect; it sets the biome the column already has.
	p := cube.Pos{int(pos[0]) << 4, r[0], int(pos[1]) << 4}
	if b, ok := world.BiomeByID(int(live.Chunk.Biome(0, int16(r[0]), 0))); ok {
		tx.SetBiome(p, b)
	} else {
		tx.SetBlock(p, tx.Block(p), &world.SetOpts{DisableBlockUpdates: true, DisableLiquidDisplacement: true, DisableRedstoneUpdates: true})
	}
	viewers := tx.Viewers(centre(pos))
	if len(viewers) == 0 {
		return
	}
	if st.biomes || st.overflow {
		for _, v := range viewers {
			v.ViewChunk(pos, j.area.Dim, live.BlockEntities, live.Chunk)
		}
		return
	}
	br := j.w.BlockRegistry()
	for _, u := range st.updates {
		rid := live.Chunk.Block(uint8(u.pos[0]), int16(u.pos[1]), uint8(u.pos[2]), u.layer)
		b := br.BlockByRuntimeIDOrAir(rid)
		if be, ok := live.BlockEntities[u.pos]; ok && u.layer == 0 {
			b = be
		}
		for _, v := range viewers {
			v.ViewBlockUpdate(u.pos, b, int(u.layer))
		}
	}
}
