package restore

import (
	"bytes"
	"fmt"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Biomes are put back by exchanging storages, not by comparing them on the
// tick. Dragonfly's only public read of a chunk's biome storages is
// chunk.EncodeBiomes (or Clone), which copies every storage: for columns
// whose biomes vary inside each sub-chunk that costs more per column than
// the rest of the comparison together. Instead, a slice gives the World's
// chunk biome storages decoded from the source (prepared off the tick) and
// keeps the World's former storages, which nothing else then references;
// the job compares those with the source off the tick and, where they
// differed, a later slice marks the column modified and sends it to its
// viewers again.
//
// The exchange assigns a whole chunk.Chunk value: Go permits copying a
// struct with unexported fields, and Chunk.Sub and Chunk.HeightMap hand out
// the slices the value holds, so a prepared value can be given the World's
// sub-chunks and height map before it replaces the World's. The World's
// *chunk.Chunk pointer stays; its sub-chunks, their light and its height
// map are the same objects as before.

// biomeCheck is a column whose biomes were exchanged and are still to be
// compared off the tick.
type biomeCheck struct {
	pos  world.ChunkPos
	old  *chunk.Chunk // the World's former chunk value: its biomes are the job's alone
	want []byte       // the source's biomes, encoded
	src  *chunk.Chunk // the source, for counting the cells that differ
}

// prepareBiomes returns a chunk holding the biomes encoded in enc and
// nothing else that the slice will use, made off the tick. Each storage is
// its own (Clone): a decoded chunk shares a storage between sub-chunks
// whose biomes are equal, and the World must be able to set one alone.
func prepareBiomes(br world.BlockRegistry, r cube.Range, enc []byte) (*chunk.Chunk, error) {
	c, err := chunk.DiskDecode(br, chunk.SerialisedData{Biomes: enc}, r)
	if err != nil {
		return nil, fmt.Errorf("restore: decode biomes: %w", err)
	}
	c = c.Clone()
	// Clears the flag, so that the height map copied in is the one kept.
	_ = c.HeightMap()
	return c, nil
}

// swapBiomes gives live the biome storages of fresh, keeping everything
// else of live, and returns live's former value, whose biome storages only
// the job now holds. fresh must not be used afterwards: live holds its
// slices. Runs on the tick; it copies pointers and the height map.
func swapBiomes(live, fresh *chunk.Chunk) *chunk.Chunk {
	copy(fresh.HeightMap(), live.HeightMap())
	old := new(chunk.Chunk)
	*old = *live
	copy(fresh.Sub(), old.Sub())
	*live = *fresh
	// old's sub-chunk slice is its own; emptying it leaves old nothing the
	// World uses.
	clear(old.Sub())
	return old
}

// checkDeferred makes the checks deferred from the slices, off the tick:
// biomes and block entities. What differs is queued for a slice to commit.
func (j *Job) checkDeferred() {
	for _, c := range j.biomeChecks {
		j.checkOne(c)
	}
	clear(j.biomeChecks)
	j.biomeChecks = j.biomeChecks[:0]
	for _, c := range j.beChecks {
		j.checkBlockEntity(c)
	}
	clear(j.beChecks)
	j.beChecks = j.beChecks[:0]
	for _, c := range j.blockChecks {
		j.checkBlocks(c)
	}
	clear(j.blockChecks)
	j.blockChecks = j.blockChecks[:0]
}

// pending is the number of deferred checks not made yet.
func (j *Job) pending() int { return len(j.biomeChecks) + len(j.beChecks) + len(j.blockChecks) }

// checkNext makes one deferred check.
func (j *Job) checkNext() {
	if n := len(j.blockChecks); n > 0 {
		j.checkBlocks(j.blockChecks[n-1])
		j.blockChecks[n-1] = blockCheck{}
		j.blockChecks = j.blockChecks[:n-1]
		return
	}
	if n := len(j.biomeChecks); n > 0 {
		j.checkOne(j.biomeChecks[n-1])
		j.biomeChecks[n-1] = biomeCheck{}
		j.biomeChecks = j.biomeChecks[:n-1]
		return
	}
	if n := len(j.beChecks); n > 0 {
		j.checkBlockEntity(j.beChecks[n-1])
		j.beChecks[n-1] = beCheck{}
		j.beChecks = j.beChecks[:n-1]
	}
}

// commitDeferred commits what the deferred checks found, on the tick,
// until the clock is over (never for the zero sliceClock); it reports
// whether all is committed. A commit (a column's, or a block entity's) is
// the unit of work.
func (j *Job) commitDeferred(tx *world.Tx, clock *sliceClock) bool {
	over := clock.over
	for len(j.blockCommits) > 0 {
		if over() {
			return false
		}
		j.commitBlock(tx, j.blockCommits[0])
		clock.did()
		j.blockCommits[0] = blockCommit{}
		j.blockCommits = j.blockCommits[1:]
	}
	for len(j.biomeCommits) > 0 {
		if over() {
			return false
		}
		j.commitBiome(tx, j.biomeCommits[0])
		clock.did()
		j.biomeCommits = j.biomeCommits[1:]
	}
	for len(j.beCommits) > 0 {
		if over() {
			return false
		}
		j.commitBlockEntity(tx, j.beCommits[0])
		clock.did()
		j.beCommits[0] = beCheck{}
		j.beCommits = j.beCommits[1:]
	}
	return true
}

// checkOne compares the biomes of one exchanged column.
func (j *Job) checkOne(c biomeCheck) {
	if bytes.Equal(chunk.EncodeBiomes(c.old, chunk.DiskEncoding), c.want) {
		return
	}
	r := c.src.Range()
	n := 0
	for y := r[0]; y <= r[1]; y++ {
		for x := uint8(0); x < 16; x++ {
			for z := uint8(0); z < 16; z++ {
				if c.old.Biome(x, int16(y), z) != c.src.Biome(x, int16(y), z) {
					n++
				}
			}
		}
	}
	if n > 0 {
		j.st.BiomesSet += n
		j.biomeCommits = append(j.biomeCommits, c.pos)
	}
}

// commitBiome marks a column whose biomes differed modified and sends it
// to its viewers again, on the tick.
func (j *Job) commitBiome(tx *world.Tx, pos world.ChunkPos) {
	l, ok := j.loaders[pos]
	if !ok {
		return
	}
	live, ok := l.Chunk(pos)
	if !ok {
		return
	}
	if !j.changed[pos] {
		j.changed[pos] = true
		j.st.ColumnsChanged++
	}
	// A column may be half done: commit with a state of its own.
	saved := j.col
	j.col = columnState{biomes: true}
	j.commit(tx, pos, live)
	j.col = saved
}
