package rawchunk

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/df-mc/dragonfly/server/world/chunk"
)

// A Builder builds Dragonfly's paletted storages, sub-chunks and chunks
// straight from index words and palettes, and reads a storage's words and
// palette back. Dragonfly offers no constructor for a PalettedStorage and
// no way to read its words: only its decoders and encoders do, copying
// every word a byte at a time. A storage built here is a copy of a
// template that Dragonfly's decoder made with the same bits per index (so
// every field derived from the bits is Dragonfly's), given its own index
// words and its own copy of the template's palette with the caller's
// values; a sub-chunk's list of layers is placed the same way, a chunk is
// a copy of an empty one with its own height map, sub-chunks and biome
// storages, and a column's parts come from an Arena. Those are the only
// private fields it writes: PalettedStorage.indices, .indicesStart and
// .palette, Palette.values, SubChunk.storages, and Chunk.heightMap, .sub
// and .biomes.
//
// A Builder exists only once Probe has proved its construction against
// Dragonfly's own decoder (probe.go). A Builder is immutable and safe for
// concurrent use.
type Builder struct {
	// offsets of PalettedStorage.indices, .indicesStart and .palette,
	// Palette.values, SubChunk.storages and Chunk.heightMap, .sub and
	// .biomes
	indices, indicesStart, palette, values, storages, heightMap, chunkSubs, biomes uintptr
	templates                                                                      [17]*chunk.PalettedStorage
}

// Chunk builds a chunk like tmpl, an empty chunk made by chunk.New that it
// never modifies, from subs, each placed where its y (ys, in the network
// encoding's sub-chunk y byte) says, and biomes, one storage for each of
// tmpl's sub-chunks, which it keeps. It makes the checks NetworkDecode
// makes of the sub-chunks' places. The chunk is a copy of tmpl with its
// own height map, list of sub-chunks (empty ones copied from tmpl's) and
// biome storages, all but the height map from a.
func (b *Builder) Chunk(a *Arena, tmpl *chunk.Chunk, subs []*chunk.SubChunk, ys []byte, biomes []*chunk.PalettedStorage) (*chunk.Chunk, error) {
	rng, empty := tmpl.Range(), tmpl.Sub()
	if len(subs) > len(empty) {
		return nil, fmt.Errorf("invalid sub-chunk count %d: chunk range has %d sub-chunks", len(subs), len(empty))
	}
	if len(biomes) != len(empty) {
		return nil, fmt.Errorf("%d biome storages: chunk range has %d sub-chunks", len(biomes), len(empty))
	}
	dst := a.subList.take(len(empty), len(empty))
	for i, sub := range subs {
		idx := uint8(int8(ys[i]) - int8(rng[0]>>4))
		if int(idx) >= len(dst) {
			return nil, fmt.Errorf("invalid sub-chunk index %d: chunk range has %d sub-chunks", idx, len(dst))
		}
		dst[idx] = sub
	}
	for i, sub := range dst {
		if sub == nil {
			s := &a.subs.take(1, len(empty))[0]
			*s = *empty[i]
			dst[i] = s
		}
	}
	c := new(chunk.Chunk)
	*c = *tmpl
	// Like New's (never tmpl.HeightMap(): it would compute tmpl's).
	*(*chunk.HeightMap)(unsafe.Add(unsafe.Pointer(c), b.heightMap)) = make(chunk.HeightMap, 256)
	*(*[]*chunk.SubChunk)(unsafe.Add(unsafe.Pointer(c), b.chunkSubs)) = dst
	*b.biomeStorages(c) = biomes
	return c, nil
}

// Storage returns a new PalettedStorage from a, of bits bits per index,
// whose index words are words (little-endian, exactly IndexWords(bits) of
// them) and whose palette is palette, which it keeps: the caller took it
// from a and has checked that every index lies inside it. The storage is
// a copy of the template with the same bits, given its own words and a
// copy of the template's palette with palette as its values.
func (b *Builder) Storage(a *Arena, bits byte, words []byte, palette []uint32) *chunk.PalettedStorage {
	t := b.templates[bits]
	s := &a.storages.take(1, blockOr(a.StorageBlock, 32))[0]
	*s = *t
	p := &a.palettes.take(1, blockOr(a.StorageBlock, 32))[0]
	*p = *t.Palette()
	*(*[]uint32)(unsafe.Add(unsafe.Pointer(p), b.values)) = palette
	*(**chunk.Palette)(unsafe.Add(unsafe.Pointer(s), b.palette)) = p
	if n := len(words) / 4; n > 0 {
		idx := a.words.take(n, a.WordBlock)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&idx[0])), 4*n), words)
		*(*[]uint32)(unsafe.Add(unsafe.Pointer(s), b.indices)) = idx
		*(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(s), b.indicesStart)) = unsafe.Pointer(&idx[0])
	}
	return s
}

// SubChunk returns a new SubChunk from a whose air is air and whose layers
// are layers, which it keeps (the caller took the list from a.Layers).
func (b *Builder) SubChunk(a *Arena, air uint32, layers []*chunk.PalettedStorage) *chunk.SubChunk {
	sub := &a.subs.take(1, blockOr(a.SubBlock, 24))[0]
	*sub = *chunk.NewSubChunk(air)
	if len(layers) > 0 {
		*(*[]*chunk.PalettedStorage)(unsafe.Add(unsafe.Pointer(sub), b.storages)) = layers
	}
	return sub
}

// Clone returns a copy of sub from a, for a stored column's snapshot: its
// layers are storages built as sub's decode would build them, with their
// own words and palettes, in a few allocations for the whole column where
// SubChunk.Clone makes four for every layer. The copy has no light: sub's
// light is the World's, and a World computes a loaded chunk's light afresh
// (chunk.LightArea's Fill replaces every sub-chunk's), as it does for a
// decoded one.
func (b *Builder) Clone(a *Arena, sub *chunk.SubChunk) *chunk.SubChunk {
	layers := sub.Layers()
	var storages []*chunk.PalettedStorage
	if len(layers) > 0 {
		storages = a.Layers(len(layers))
		for i, l := range layers {
			storages[i] = b.CopyOf(a, l)
		}
	}
	// A layer past the last reads as the sub-chunk's own air.
	return b.SubChunk(a, sub.Block(0, 0, 0, 255), storages)
}

// CopyOf returns a copy of s from a, with its own words and palette.
func (b *Builder) CopyOf(a *Arena, s *chunk.PalettedStorage) *chunk.PalettedStorage {
	words := b.WordBytes(s)
	return b.Storage(a, byte(len(words)/512), words, a.Palette(b.Values(s)))
}

// Words returns s's index words, shared with s.
func (b *Builder) Words(s *chunk.PalettedStorage) []uint32 {
	return *(*[]uint32)(unsafe.Add(unsafe.Pointer(s), b.indices))
}

// WordBytes returns s's index words as little-endian bytes, shared with s
// (the probe refuses a machine where they are not).
func (b *Builder) WordBytes(s *chunk.PalettedStorage) []byte {
	idx := b.Words(s)
	if len(idx) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&idx[0])), 4*len(idx))
}

// Values returns the values of s's palette, shared with s.
func (b *Builder) Values(s *chunk.PalettedStorage) []uint32 {
	return *(*[]uint32)(unsafe.Add(unsafe.Pointer(s.Palette()), b.values))
}

// AppendSubChunk appends sub, the sub-chunk at y (its index in its column
// plus the column's lowest), as chunk.EncodeSubChunk encodes it in the
// network encoding.
func (b *Builder) AppendSubChunk(dst []byte, sub *chunk.SubChunk, y int) []byte {
	layers := sub.Layers()
	dst = append(dst, chunk.SubChunkVersion, byte(len(layers)), uint8(y))
	for _, s := range layers {
		dst = b.AppendStorage(dst, s)
	}
	return dst
}

// biomeStorages is c's slice of biome storages (an unexported field of
// chunk.Chunk, at the offset the probe found).
func (b *Builder) biomeStorages(c *chunk.Chunk) *[]*chunk.PalettedStorage {
	return (*[]*chunk.PalettedStorage)(unsafe.Add(unsafe.Pointer(c), b.biomes))
}

// AppendBiomes appends c's biomes as chunk.EncodeBiomes encodes them in
// the network encoding: a storage Equal to the one before is written as a
// reference to it.
func (b *Builder) AppendBiomes(dst []byte, c *chunk.Chunk) []byte {
	var prev *chunk.PalettedStorage
	for _, s := range *b.biomeStorages(c) {
		if s.Equal(prev) {
			dst = append(dst, 0x7f<<1|1)
		} else {
			dst = b.AppendStorage(dst, s)
		}
		prev = s
	}
	return dst
}

// AppendStorage appends s in the network encoding: a header of the bits
// per index (which Dragonfly derives from the number of index words), the
// words, then the palette, its length first unless the bits are 0. That is
// what Dragonfly's decoder reads; its encoder writes the length when the
// palette's own size is not 0, which it keeps equal to the bits.
func (b *Builder) AppendStorage(dst []byte, s *chunk.PalettedStorage) []byte {
	words := b.WordBytes(s)
	bits := len(words) / 512
	dst = append(dst, byte(bits<<1|1))
	dst = append(dst, words...)
	values := b.Values(s)
	if bits != 0 {
		dst = AppendVarint32(dst, uint32(len(values)))
	}
	for _, v := range values {
		dst = AppendVarint32(dst, v)
	}
	return dst
}

// AppendVarint32 appends v as the network encoding's zig-zag varint32.
func AppendVarint32(b []byte, v uint32) []byte {
	return binary.AppendVarint(b, int64(int32(v)))
}
