package restore

import (
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// mask is the box of blocks a paste covers, Min and Max included, less
// the positions void marks (a structure's -1: leave the World's block).
type mask struct {
	min, max cube.Pos
	void     func(p cube.Pos) bool
}

// covers reports whether the paste sets the block at p.
func (m *mask) covers(p cube.Pos) bool {
	return p[0] >= m.min[0] && p[0] <= m.max[0] && p[1] >= m.min[1] && p[1] <= m.max[1] &&
		p[2] >= m.min[2] && p[2] <= m.max[2] && (m.void == nil || !m.void(p))
}

// whole reports whether the paste covers all of the sub-chunk at baseY of
// the column at pos, with no void in it, so the sub-chunk may be compared
// and replaced as a whole.
func (m *mask) whole(pos world.ChunkPos, baseY int) bool {
	x, z := int(pos[0])<<4, int(pos[1])<<4
	return m.void == nil && x >= m.min[0] && x+15 <= m.max[0] && z >= m.min[2] && z+15 <= m.max[2] &&
		baseY >= m.min[1] && baseY+15 <= m.max[1]
}

// restoreMasked sets the blocks of ls (every layer) that the paste covers
// and that differ from ss, one by one, and returns how many it set.
func (j *Job) restoreMasked(ls, ss *chunk.SubChunk, pos world.ChunkPos, baseY int, br world.BlockRegistry) int {
	st := &j.col
	m := j.mask
	if baseY > m.max[1] || baseY+15 < m.min[1] {
		return 0
	}
	layers := max(len(ls.Layers()), len(ss.Layers()))
	n := 0
	for x := byte(0); x < 16; x++ {
		for z := byte(0); z < 16; z++ {
			for y := byte(0); y < 16; y++ {
				p := cube.Pos{int(pos[0])<<4 | int(x), baseY + int(y), int(pos[1])<<4 | int(z)}
				if !m.covers(p) {
					continue
				}
				for l := range uint8(layers) {
					a, b := ls.Block(x, y, z, l), ss.Block(x, y, z, l)
					if a == b {
						continue
					}
					ls.SetBlock(x, y, z, l, b)
					n++
					st.changedBlock(p, l, a, b, br)
				}
			}
		}
	}
	return n
}
