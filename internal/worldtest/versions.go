package worldtest

import (
	"fmt"
	"os"

	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Soak returns n, or long when BLAZE_SOAK is set (`make soak`).
func Soak(n, long int) int {
	if os.Getenv("BLAZE_SOAK") != "" {
		return long
	}
	return n
}

// Versions makes the successive states of a few columns of one dimension,
// for crash simulations that judge what a crash left: store i goes to
// column i % len(cols) and sets a block other than air where no earlier
// store to that column set one, so every version differs from every other. Not safe for concurrent
// use: one goroutine, as one World, drives each.
type Versions struct {
	dim  world.Dimension
	cols []*chunk.Column // as the World holds them
	// After[i] is a copy of the column store i left.
	After []*chunk.Column
}

// NewVersions returns Versions of n columns of dim, each empty to start.
func NewVersions(dim world.Dimension, n int) *Versions {
	return &Versions{dim: dim, cols: make([]*chunk.Column, n)}
}

// Next sets the next store's block to rid and returns the number of its
// column and the column, which the caller stores (and may not keep). rid
// must not be air: the block is set where no store set one, so air would
// leave the column as it was, and Find would then name the store before.
// Next panics if it is.
func (v *Versions) Next(rid uint32) (int, *chunk.Column) {
	i := len(v.After)
	c := i % len(v.cols)
	if v.cols[c] == nil {
		v.cols[c] = &chunk.Column{Chunk: chunk.New(world.DefaultBlockRegistry, v.dim.Range())}
	}
	n := i / len(v.cols) // how many stores of this column came before
	x, y := uint8(n%16), int16(n/16)
	if v.cols[c].Chunk.Block(x, y, 0, 0) == rid {
		panic(fmt.Sprintf("worldtest: Versions.Next(%d) would leave column %d as it was: a block state other than air is needed", rid, c))
	}
	v.cols[c].Chunk.SetBlock(x, y, 0, 0, rid)
	v.After = append(v.After, &chunk.Column{Chunk: v.cols[c].Chunk.Clone()})
	return c, v.cols[c]
}

// Find returns the store whose version of column c got is, or -1. Every
// version differs from every other, so at most one matches: Find counts
// the blocks the column's stores set in got to name that one, and compares
// got with it, before comparing with each (a whole column's comparison is
// slow, and a crash simulation finds thousands of versions).
func (v *Versions) Find(c int, got *chunk.Column) int {
	n := 0 // how many of column c's stores set their block in got
	for i := c; i < len(v.After); i += len(v.cols) {
		if got.Chunk.Block(uint8(n%16), int16(n/16), 0, 0) == world.DefaultBlockRegistry.AirRuntimeID() {
			break
		}
		n++
	}
	if i := c + (n-1)*len(v.cols); n > 0 && Compare(got, v.After[i]) == nil {
		return i
	}
	for i := c; i < len(v.After); i += len(v.cols) {
		if Compare(got, v.After[i]) == nil {
			return i
		}
	}
	return -1
}
