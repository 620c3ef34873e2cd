package restore

import (
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// lightPlan is the light work left once every column is restored. Light
// is computed off the tick, on private copies of the chunks, the way the
// World computes it when it loads a chunk: the light of each chunk in
// fills is filled again, then spread over the 3×3 window centred on each of
// windows. The copies of the area's chunks are the source's columns (whose
// blocks the World's now equal); those outside the area are cloned on the
// tick. The result is put in the World sub-chunk by sub-chunk, where the
// blocks are still those the light was computed for.
type lightPlan struct {
	chunks  map[world.ChunkPos]*chunk.Chunk // private copies, nil if not loaded
	clone   []world.ChunkPos                // outside the area: to clone on the tick
	cloned  map[world.ChunkPos]bool         // copies that carry the World's light
	fills   []world.ChunkPos
	windows []world.ChunkPos
	install []world.ChunkPos
	stage   int
}

const (
	lightClone = iota
	lightCompute
	lightInstall
	lightDone
)

// planLight finds the chunks whose light the restore may have changed: the
// columns where a change affected light and their neighbours (no light
// travels further than one chunk: it fades within 15 blocks). Each is
// filled again, which clears what light stale blocks left, and light is
// then spread over every complete window that holds one of them. Only
// chunks the World holds take part; a chunk it loads later is lit then.
func (j *Job) planLight(tx *world.Tx) *lightPlan {
	p := &lightPlan{chunks: map[world.ChunkPos]*chunk.Chunk{}, cloned: map[world.ChunkPos]bool{}}
	get := func(pos world.ChunkPos) *chunk.Chunk {
		if c, ok := p.chunks[pos]; ok {
			return c
		}
		var c *chunk.Chunk
		if col, ok := j.kept[pos]; ok {
			c = col.Chunk
		} else if _, ok := tx.BlockLoaded(cube.Pos{int(pos[0]) << 4, j.w.Range()[0], int(pos[1]) << 4}); ok {
			// A stand-in until the clone is made: the plan only needs to
			// know that the chunk is there.
			c = &chunk.Chunk{}
			p.clone = append(p.clone, pos)
			p.cloned[pos] = true
		}
		p.chunks[pos] = c
		return c
	}
	fill := map[world.ChunkPos]bool{}
	for pos := range j.relight {
		for dx := int32(-1); dx <= 1; dx++ {
			for dz := int32(-1); dz <= 1; dz++ {
				n := world.ChunkPos{pos[0] + dx, pos[1] + dz}
				if !fill[n] && get(n) != nil {
					fill[n] = true
					p.fills = append(p.fills, n)
				}
			}
		}
	}
	p.install = p.fills
	if len(p.fills) == 0 {
		p.stage = lightDone
	}
	window := map[world.ChunkPos]bool{}
	for _, pos := range p.fills {
		for dx := int32(-1); dx <= 1; dx++ {
			for dz := int32(-1); dz <= 1; dz++ {
				n := world.ChunkPos{pos[0] + dx, pos[1] + dz}
				if window[n] {
					continue
				}
				window[n] = true
				if p.complete(n, get) {
					p.windows = append(p.windows, n)
				}
			}
		}
	}
	return p
}

func (p *lightPlan) complete(centre world.ChunkPos, get func(world.ChunkPos) *chunk.Chunk) bool {
	for dx := int32(-1); dx <= 1; dx++ {
		for dz := int32(-1); dz <= 1; dz++ {
			if get(world.ChunkPos{centre[0] + dx, centre[1] + dz}) == nil {
				return false
			}
		}
	}
	return true
}

// tick does the plan's work on the World until the clock is over: cloning, then
// (after compute) installing. It reports whether all is done.
func (p *lightPlan) tick(j *Job, tx *world.Tx, clock *sliceClock) bool {
	for p.stage == lightClone {
		if len(p.clone) == 0 {
			p.stage = lightCompute
			return false
		}
		if clock.over() {
			return false
		}
		pos := p.clone[0]
		if col, ok := j.acquire(tx, pos).Chunk(pos); ok {
			p.chunks[pos] = col.Chunk.Clone()
		} else {
			p.chunks[pos] = nil
		}
		p.clone = p.clone[1:]
		clock.did()
	}
	if p.stage == lightCompute {
		return false
	}
	if p.stage == lightDone {
		return true
	}
	air := j.w.BlockRegistry().AirRuntimeID()
	for len(p.install) > 0 {
		if clock.over() {
			return false
		}
		pos := p.install[0]
		p.install = p.install[1:]
		clock.did()
		c := p.chunks[pos]
		if c == nil {
			continue
		}
		col, ok := j.acquire(tx, pos).Chunk(pos)
		if !ok {
			continue
		}
		live, lit := col.Sub(), c.Sub()
		for i := range live {
			// Only where the blocks are still those the light is for: a
			// block set since then keeps the light it had, as any block
			// Dragonfly sets does.
			if sameSub(live[i], lit[i], air) || sameBlocks(live[i], lit[i]) {
				live[i] = lit[i]
			}
		}
		j.st.ChunksRelit++
	}
	p.stage = lightDone
	return true
}

// compute fills and spreads the light on the private copies, off the
// World's tick. A nil chunk in a window (one that failed to clone) skips
// the window.
func (p *lightPlan) compute(j *Job) {
	filled := map[world.ChunkPos]bool{}
	fill := func(pos world.ChunkPos) {
		if c := p.chunks[pos]; c != nil && !filled[pos] {
			chunk.LightArea([]*chunk.Chunk{c}, int(pos[0]), int(pos[1])).Fill()
			filled[pos] = true
		}
	}
	for _, pos := range p.fills {
		if j.ctx.Err() != nil {
			return // cancelled: the loop reports it
		}
		fill(pos)
	}
	// A source column in a window but not among fills has no light yet:
	// fill it too. It is not put in the World; only its light at the
	// edges matters, and what it lacks (light from beyond the windows)
	// fades before it reaches a chunk that is.
	for pos := range p.chunks {
		if !p.cloned[pos] {
			fill(pos)
		}
	}
	for _, pos := range p.windows {
		if j.ctx.Err() != nil {
			return
		}
		// The order of World.spreadLight: z outer, x inner.
		c := make([]*chunk.Chunk, 0, 9)
		for dz := int32(-1); dz <= 1; dz++ {
			for dx := int32(-1); dx <= 1; dx++ {
				if n := p.chunks[world.ChunkPos{pos[0] + dx, pos[1] + dz}]; n != nil {
					c = append(c, n)
				}
			}
		}
		if len(c) == 9 {
			chunk.LightArea(c, int(pos[0])-1, int(pos[1])-1).Spread()
			j.st.LightSpreads++
		}
	}
	p.stage = lightInstall
}

// sameBlocks compares two sub-chunks block by block in every layer.
func sameBlocks(a, b *chunk.SubChunk) bool {
	for l := range uint8(max(len(a.Layers()), len(b.Layers()))) {
		for x := byte(0); x < 16; x++ {
			for z := byte(0); z < 16; z++ {
				for y := byte(0); y < 16; y++ {
					if a.Block(x, y, z, l) != b.Block(x, y, z, l) {
						return false
					}
				}
			}
		}
	}
	return true
}
