package restore

import (
	"slices"

	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Blocks are put back, like biomes, by exchanging storages on the tick and
// comparing them off it: comparing a column's storages on the tick reads
// every storage of both sides from memory, the largest part left of a
// restore that finds nothing to do. A slice gives each of the World's
// sub-chunks copies of the source's layer storages, made off the tick
// (SubChunk.Layers hands out the slice the sub-chunk holds), and keeps the
// World's former storages, which nothing else then references; the job
// compares those with the source off the tick and a later slice commits
// the columns where blocks differed: counted, marked modified, shown to
// viewers, their height map computed again and their light planned. The
// sub-chunks themselves, and their light, stay the World's.

// blockCheck is a column whose block storages a slice exchanged.
type blockCheck struct {
	pos world.ChunkPos
	old [][]*chunk.PalettedStorage // per sub-chunk, the World's former layers
	src *chunk.Chunk
}

// blockCommit is what a check found in one column, for a slice to commit.
type blockCommit struct {
	pos   world.ChunkPos
	subs  int
	state columnState
}

// cloneLayers copies the layer storages of every sub-chunk of c, off the
// tick.
func cloneLayers(c *chunk.Chunk) [][]*chunk.PalettedStorage {
	subs := c.Sub()
	out := make([][]*chunk.PalettedStorage, len(subs))
	for i, s := range subs {
		l := s.Layers()
		out[i] = make([]*chunk.PalettedStorage, len(l))
		for k, st := range l {
			out[i][k] = st.Clone()
		}
	}
	return out
}

// swapLayers gives each sub-chunk of live the storages of fresh (layers
// live has beyond fresh's become air) and returns its former layers. fresh
// must not be used afterwards: live holds its storages. Runs on the tick.
func swapLayers(live *chunk.Chunk, fresh [][]*chunk.PalettedStorage, air uint32) [][]*chunk.PalettedStorage {
	subs := live.Sub()
	old := make([][]*chunk.PalettedStorage, len(subs))
	for i, ls := range subs {
		want := fresh[i]
		if len(want) > 0 {
			ls.Layer(uint8(len(want) - 1)) // as many layers as the source at least
		}
		dst := ls.Layers()
		old[i] = slices.Clone(dst)
		for k := range dst {
			if k < len(want) {
				dst[k] = want[k]
			} else {
				dst[k] = chunk.NewSubChunk(air).Layer(0)
			}
		}
	}
	return old
}

// checkBlocks compares the block storages the World had with the source's,
// off the tick, and queues what differed for a slice to commit.
func (j *Job) checkBlocks(c blockCheck) {
	br := j.w.BlockRegistry()
	air := br.AirRuntimeID()
	res := blockCommit{pos: c.pos}
	for i, old := range c.old {
		was := chunk.NewSubChunk(air)
		if len(old) > 0 {
			was.Layer(uint8(len(old) - 1))
			copy(was.Layers(), old)
		}
		ss := c.src.Sub()[i]
		if sameSub(was, ss, air) {
			continue
		}
		if n := diffSub(was, ss, c.pos, int(c.src.SubY(int16(i))), br, &res.state); n > 0 {
			res.subs++
			res.state.blocks += n
		}
	}
	if res.state.blocks > 0 {
		j.blockCommits = append(j.blockCommits, res)
	}
}

// commitBlock counts, marks modified and shows to viewers a column whose
// blocks differed, and plans its light, on the tick.
func (j *Job) commitBlock(tx *world.Tx, c blockCommit) {
	l, ok := j.loaders[c.pos]
	if !ok {
		return
	}
	live, ok := l.Chunk(c.pos)
	if !ok {
		return
	}
	j.st.SubChunksChanged += c.subs
	j.st.BlocksSet += c.state.blocks
	if c.state.light {
		j.relight[c.pos] = true
	}
	if !j.changed[c.pos] {
		j.changed[c.pos] = true
		j.st.ColumnsChanged++
	}
	// A column may be half done: commit with a state of its own.
	saved := j.col
	j.col = c.state
	j.commit(tx, c.pos, live)
	j.col = saved
}
