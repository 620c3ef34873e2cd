package restore

import (
	"time"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// lightPlan is the light work left once every column is restored: fill
// the light of each chunk in fills, then spread it over the 3×3 window
// centred on each of windows, as the World does when it loads a chunk.
type lightPlan struct {
	chunks  map[world.ChunkPos]*chunk.Chunk
	fills   []world.ChunkPos
	windows []world.ChunkPos
}

// planLight finds the chunks whose light the restore may have changed: the
// columns where a change affected light and their neighbours (no light
// travels further than one chunk: it fades within 15 blocks). Each is
// filled again, which clears what light stale blocks left, and light is
// then spread over every complete window that holds one of them. Only
// chunks the World holds take part; a chunk it loads later is lit then.
func (j *Job) planLight(tx *world.Tx) *lightPlan {
	p := &lightPlan{chunks: map[world.ChunkPos]*chunk.Chunk{}}
	get := func(pos world.ChunkPos) *chunk.Chunk {
		if c, ok := p.chunks[pos]; ok {
			return c
		}
		var c *chunk.Chunk
		if _, ok := tx.BlockLoaded(cube.Pos{int(pos[0]) << 4, j.w.Range()[0], int(pos[1]) << 4}); ok {
			// Loaded: the loader hands the column out at once.
			if col, ok := j.acquire(tx, pos).Chunk(pos); ok {
				c = col.Chunk
			}
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

// run does the plan's work until the deadline; it reports whether all is
// done.
func (p *lightPlan) run(j *Job, deadline time.Time) bool {
	for len(p.fills) > 0 {
		if !time.Now().Before(deadline) {
			return false
		}
		pos := p.fills[0]
		chunk.LightArea([]*chunk.Chunk{p.chunks[pos]}, int(pos[0]), int(pos[1])).Fill()
		p.fills = p.fills[1:]
		j.st.ChunksRelit++
	}
	for len(p.windows) > 0 {
		if !time.Now().Before(deadline) {
			return false
		}
		pos := p.windows[0]
		// The order of World.spreadLight: z outer, x inner.
		c := make([]*chunk.Chunk, 0, 9)
		for dz := int32(-1); dz <= 1; dz++ {
			for dx := int32(-1); dx <= 1; dx++ {
				c = append(c, p.chunks[world.ChunkPos{pos[0] + dx, pos[1] + dz}])
			}
		}
		chunk.LightArea(c, int(pos[0])-1, int(pos[1])-1).Spread()
		p.windows = p.windows[1:]
		j.st.LightSpreads++
	}
	return true
}
