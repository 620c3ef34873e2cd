package rawchunk

import "github.com/df-mc/dragonfly/server/world/chunk"

// An Arena hands out the parts of one column's storages (the storages,
// their palettes, palette values and index words, the sub-chunks and
// their lists of layers) from a few large allocations instead of five
// small ones per storage. The parts of a column live and die together, so
// sharing allocations keeps little alive for longer: a storage the World
// replaces (when a Set outgrows its palette) stays in memory until the
// rest of its column is dropped. Every slice handed out has its capacity
// cut to its length, so an append (as Palette.Add does) moves it instead
// of writing into a neighbour's.
//
// The zero Arena is ready for use. An Arena is not safe for concurrent
// use; one decode uses one.
type Arena struct {
	storages slab[chunk.PalettedStorage]
	palettes slab[chunk.Palette]
	subs     slab[chunk.SubChunk]
	subList  slab[*chunk.SubChunk]
	layers   slab[*chunk.PalettedStorage]
	values   slab[uint32]
	words    slab[uint32]
	// WordBlock is the size of a new block of index words.
	WordBlock int
	// The sizes of new blocks of storages (and palettes), palette values,
	// sub-chunks and layer lists when not 0, for a caller that knows them.
	StorageBlock, ValueBlock, SubBlock, LayerBlock int
}

// blockOr returns n, or def when n is 0.
func blockOr(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// Palette returns a copy of values taken from a.
func (a *Arena) Palette(values []uint32) []uint32 {
	p := a.Values(len(values))
	copy(p, values)
	return p
}

// Values returns n zero palette values taken from a, for a caller that
// fills them in.
func (a *Arena) Values(n int) []uint32 {
	return a.values.take(n, blockOr(a.ValueBlock, 256))
}

// Layers returns a list of n nil layers taken from a, for SubChunk.
func (a *Arena) Layers(n int) []*chunk.PalettedStorage {
	return a.layers.take(n, blockOr(a.LayerBlock, 32))
}

// slab hands out slices of blocks of Ts.
type slab[T any] struct{ free []T }

// take returns n zero Ts from the current block, or from a new one of
// max(n, block) when too few are left.
func (s *slab[T]) take(n, block int) []T {
	if len(s.free) < n {
		s.free = make([]T, max(n, block))
	}
	t := s.free[:n:n]
	s.free = s.free[n:]
	return t
}
