package provider

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/df-mc/dragonfly/server/world/chunk"
)

// rawStorage builds Dragonfly's paletted storages straight from a record's
// index words, and reads them straight into a record. Dragonfly offers no
// constructor for a PalettedStorage and no way to read its words: only its
// decoders and encoders do, copying every word a byte at a time, which was
// a third of a cold load (and, because Chunk.Equals ignores biomes and the
// only way to learn they had not changed was to encode them, most of an
// unchanged store). A storage built here is a copy of a template that
// Dragonfly's decoder made with the same bits per index (so every field
// derived from the bits is Dragonfly's), given its own index words (the
// record's) and its own copy of the template's palette with the record's
// values; a sub-chunk's list of layers is placed the same way, a chunk is
// a copy of an empty one with its own height map, sub-chunks and biome
// storages, and a column's parts come from a few shared allocations
// (columnArena). Those are the only private fields it touches:
// PalettedStorage.indices, .indicesStart and .palette, Palette.values,
// SubChunk.storages, and Chunk.heightMap, .sub and .biomes.
//
// Reaching into another package's fields breaks when that package changes,
// so nothing here is trusted before it is proved against Dragonfly itself
// (probe.go): probeRawStorage finds the fields by name and type, then
// builds storages of every size both ways, all from one arena, and
// requires Dragonfly's
// Equal, At at every position and a later Set that grows the palette to
// agree (and every storage to be intact once all have grown), the same of
// a two-layer sub-chunk after a layer and blocks are added, the same of
// biomes, and appendSubChunk and appendBiomes to give EncodeSubChunk's and
// EncodeBiomes' bytes. If anything differs (a new Dragonfly, a big-endian
// machine), there is no rawStorage and every decode and encode goes
// through Dragonfly's own, as it did before. A test fails if the probe
// refuses on the Dragonfly this module pins, so an upgrade that disables
// it is never a silent slowdown.
//
// A rawStorage is immutable and safe for concurrent use.
type rawStorage struct {
	// offsets of PalettedStorage.indices, .indicesStart and .palette,
	// Palette.values, SubChunk.storages and Chunk.heightMap, .sub and
	// .biomes
	indices, indicesStart, palette, values, storages, heightMap, chunkSubs, biomes uintptr
	templates                                                                      [17]*chunk.PalettedStorage
}

// rawStorageOnce probes once per process.
var rawStorageOnce = sync.OnceValue(probeRawStorage)

// chunk builds a chunk like tmpl, an empty chunk made by chunk.New that it
// never modifies, from sub-chunks read by sub, each placed where its y
// says, and the network biome encoding, with the checks and the results of
// NetworkDecode, except that a biome storage that repeats the previous one
// is a copy of it, not (as there) the same storage, which a SetBiome in
// either sub-chunk would change for both. The chunk is a copy of tmpl with
// its own height map, list of sub-chunks (empty ones copied from tmpl's)
// and biome storages, all but the height map from a.
func (rs *rawStorage) chunk(a *columnArena, tmpl *chunk.Chunk, subs []*chunk.SubChunk, ys []byte, biomes []byte) (*chunk.Chunk, error) {
	rng, empty := tmpl.Range(), tmpl.Sub()
	if len(subs) > len(empty) {
		return nil, fmt.Errorf("invalid sub-chunk count %d: chunk range has %d sub-chunks", len(subs), len(empty))
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
	bs := a.layers.take(len(empty), 32)
	err := walkBiomes(biomes, len(bs), func(i int, bits byte, words []byte, palette []uint32) {
		if palette == nil {
			bs[i] = rs.copyOf(a, bs[i-1])
		} else {
			bs[i] = rs.storage(a, bits, words, a.palette(palette))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("biomes: %w", err)
	}
	c := new(chunk.Chunk)
	*c = *tmpl
	// Like New's (never tmpl.HeightMap(): it would compute tmpl's).
	*(*chunk.HeightMap)(unsafe.Add(unsafe.Pointer(c), rs.heightMap)) = make(chunk.HeightMap, 256)
	*(*[]*chunk.SubChunk)(unsafe.Add(unsafe.Pointer(c), rs.chunkSubs)) = dst
	*(*[]*chunk.PalettedStorage)(unsafe.Add(unsafe.Pointer(c), rs.biomes)) = bs
	return c, nil
}

// storage returns a new PalettedStorage from a, of bits bits per index,
// whose index words are words (little-endian, exactly indexWords(bits) of
// them) and whose palette is palette, which it keeps: the caller took it
// from a and has checked that every index lies inside it. The storage is
// a copy of the template with the same bits (so every field derived from
// the bits is Dragonfly's), given its own words and a copy of the
// template's palette with palette as its values.
func (rs *rawStorage) storage(a *columnArena, bits byte, words []byte, palette []uint32) *chunk.PalettedStorage {
	t := rs.templates[bits]
	s := &a.storages.take(1, blockOr(a.storageBlock, 32))[0]
	*s = *t
	p := &a.palettes.take(1, blockOr(a.storageBlock, 32))[0]
	*p = *t.Palette()
	*(*[]uint32)(unsafe.Add(unsafe.Pointer(p), rs.values)) = palette
	*(**chunk.Palette)(unsafe.Add(unsafe.Pointer(s), rs.palette)) = p
	if n := len(words) / 4; n > 0 {
		idx := a.words.take(n, a.wordBlock)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&idx[0])), 4*n), words)
		*(*[]uint32)(unsafe.Add(unsafe.Pointer(s), rs.indices)) = idx
		*(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(s), rs.indicesStart)) = unsafe.Pointer(&idx[0])
	}
	return s
}

// sub reads one sub-chunk in the shared layout from r into a new SubChunk
// from a whose air is air, translating palette entries (read with read)
// with tr. It returns the sub-chunk's y byte with it.
func (rs *rawStorage) sub(a *columnArena, r *reader, air uint32, read func(*reader) uint64, tr func(uint32) (uint64, error)) (*chunk.SubChunk, byte, error) {
	_, layers, y, err := readSubHeader(r)
	if err != nil {
		return nil, 0, err
	}
	sub := &a.subs.take(1, 24)[0]
	*sub = *chunk.NewSubChunk(air)
	if layers == 0 {
		return sub, y, nil
	}
	storages := a.layers.take(int(layers), 32)
	var (
		l       int
		bits    byte
		words   []byte
		palette []uint32
	)
	err = walkLayers(r, int(layers), read, tr, func(hdr byte, w []byte, n int) {
		bits, words, palette = hdr>>1, w, a.values.take(n, 256)
	}, func(i int, t uint64) {
		palette[i] = uint32(t)
		if i == len(palette)-1 {
			storages[l] = rs.storage(a, bits, words, palette)
			l++
		}
	})
	if err != nil {
		return nil, 0, err
	}
	*(*[]*chunk.PalettedStorage)(unsafe.Add(unsafe.Pointer(sub), rs.storages)) = storages
	return sub, y, nil
}

// clone returns a copy of sub from a, for a stored column's snapshot: its
// layers are storages built as sub's decode would build them, with their
// own words and palettes, in a few allocations for the whole column where
// SubChunk.Clone makes four for every layer. The copy has no light: sub's
// light is the World's (often 4 KiB a sub-chunk that Clone would copy),
// and a World computes a loaded chunk's light afresh (chunk.LightArea's
// Fill replaces every sub-chunk's), as it does for a decoded one.
func (rs *rawStorage) clone(a *columnArena, sub *chunk.SubChunk) *chunk.SubChunk {
	c := &a.subs.take(1, blockOr(a.subBlock, 24))[0]
	// A layer past the last reads as the sub-chunk's own air.
	*c = *chunk.NewSubChunk(sub.Block(0, 0, 0, 255))
	layers := sub.Layers()
	if len(layers) == 0 {
		return c
	}
	storages := a.layers.take(len(layers), blockOr(a.layerBlock, 32))
	for i, l := range layers {
		storages[i] = rs.copyOf(a, l)
	}
	*(*[]*chunk.PalettedStorage)(unsafe.Add(unsafe.Pointer(c), rs.storages)) = storages
	return c
}

// copyOf returns a copy of s from a, with its own words and palette.
func (rs *rawStorage) copyOf(a *columnArena, s *chunk.PalettedStorage) *chunk.PalettedStorage {
	idx := rs.indicesOf(s)
	var words []byte
	if len(idx) > 0 {
		words = unsafe.Slice((*byte)(unsafe.Pointer(&idx[0])), 4*len(idx))
	}
	values := *(*[]uint32)(unsafe.Add(unsafe.Pointer(s.Palette()), rs.values))
	return rs.storage(a, byte(len(idx)/128), words, a.palette(values))
}

// appendSubChunk appends sub-chunk i of c as chunk.EncodeSubChunk encodes
// it in the network encoding.
func (rs *rawStorage) appendSubChunk(dst []byte, c *chunk.Chunk, i int) []byte {
	layers := c.Sub()[i].Layers()
	dst = append(dst, chunk.SubChunkVersion, byte(len(layers)), uint8(i+(c.Range()[0]>>4)))
	for _, s := range layers {
		dst = rs.appendStorage(dst, s)
	}
	return dst
}

// appendBiomes appends c's biomes as chunk.EncodeBiomes encodes them in
// the network encoding: a storage Equal to the one before is written as a
// reference to it.
func (rs *rawStorage) appendBiomes(dst []byte, c *chunk.Chunk) []byte {
	var prev *chunk.PalettedStorage
	for _, s := range *(*[]*chunk.PalettedStorage)(unsafe.Add(unsafe.Pointer(c), rs.biomes)) {
		if s.Equal(prev) {
			dst = append(dst, 0x7f<<1|1)
		} else {
			dst = rs.appendStorage(dst, s)
		}
		prev = s
	}
	return dst
}

// appendStorage appends s in the network encoding: a header of the bits
// per index (which Dragonfly derives from the number of index words), the
// words, then the palette, its length first unless the bits are 0. That is
// what Dragonfly's decoder reads; its encoder writes the length when the
// palette's own size is not 0, which it keeps equal to the bits.
func (rs *rawStorage) appendStorage(dst []byte, s *chunk.PalettedStorage) []byte {
	idx := rs.indicesOf(s)
	bits := len(idx) / 128
	dst = append(dst, byte(bits<<1|1))
	if len(idx) > 0 {
		dst = append(dst, unsafe.Slice((*byte)(unsafe.Pointer(&idx[0])), 4*len(idx))...)
	}
	values := *(*[]uint32)(unsafe.Add(unsafe.Pointer(s.Palette()), rs.values))
	if bits != 0 {
		dst = appendVarint32(dst, uint64(len(values)))
	}
	for _, v := range values {
		dst = appendVarint32(dst, uint64(v))
	}
	return dst
}

// indicesOf returns s's index words, shared with s.
func (rs *rawStorage) indicesOf(s *chunk.PalettedStorage) []uint32 {
	return *(*[]uint32)(unsafe.Add(unsafe.Pointer(s), rs.indices))
}
