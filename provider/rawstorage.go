package provider

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"unsafe"

	"github.com/df-mc/dragonfly/server/block/cube"
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
// so nothing here is trusted before it is proved against Dragonfly itself:
// probeRawStorage finds the fields by name and type, then builds storages
// of every size both ways, all from one arena, and requires Dragonfly's
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

// columnArena hands out the parts of one column's storages (the storages,
// their palettes, palette values and index words, the sub-chunks and
// their lists of layers) from a few large allocations instead of five
// small ones per storage: allocating was a third of a decode. The parts of
// a column live and die together, so sharing allocations keeps little
// alive for longer: a storage the World replaces (when a Set outgrows its
// palette) stays in memory until the rest of its column is dropped. Every
// slice handed out has its capacity cut to its length, so an append (as
// Palette.Add does) moves it instead of writing into a neighbour's.
//
// A columnArena is not safe for concurrent use; one decode uses one.
type columnArena struct {
	storages  slab[chunk.PalettedStorage]
	palettes  slab[chunk.Palette]
	subs      slab[chunk.SubChunk]
	subList   slab[*chunk.SubChunk]
	layers    slab[*chunk.PalettedStorage]
	values    slab[uint32]
	words     slab[uint32]
	wordBlock int // the size of a new block of words
	// The sizes of new blocks of storages (and palettes), palette values,
	// sub-chunks and layer lists when not 0, for a caller that knows them.
	storageBlock, valueBlock, subBlock, layerBlock int
}

// blockOr returns n, or def when n is 0.
func blockOr(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// palette returns a copy of values taken from a.
func (a *columnArena) palette(values []uint32) []uint32 {
	p := a.values.take(len(values), blockOr(a.valueBlock, 256))
	copy(p, values)
	return p
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

// encodesLike reports whether appendSubChunk and appendBiomes encode every
// sub-chunk and the biomes of c exactly as Dragonfly does.
func (rs *rawStorage) encodesLike(c *chunk.Chunk) bool {
	for i := range c.Sub() {
		if !bytes.Equal(rs.appendSubChunk(nil, c, i), chunk.EncodeSubChunk(c, chunk.NetworkEncoding, i)) {
			return false
		}
	}
	return bytes.Equal(rs.appendBiomes(nil, c), chunk.EncodeBiomes(c, chunk.NetworkEncoding))
}

// indicesOf returns s's index words, shared with s.
func (rs *rawStorage) indicesOf(s *chunk.PalettedStorage) []uint32 {
	return *(*[]uint32)(unsafe.Add(unsafe.Pointer(s), rs.indices))
}

// fieldsAre reports whether T's fields are exactly names, in order.
func fieldsAre[T any](names ...string) bool {
	t := reflect.TypeFor[T]()
	if t.NumField() != len(names) {
		return false
	}
	for i, name := range names {
		if t.Field(i).Name != name {
			return false
		}
	}
	return true
}

// fieldOffset sets *off to the offset of T's field name and reports
// whether that field exists with type F.
func fieldOffset[T, F any](off *uintptr, name string) bool {
	f, ok := reflect.TypeFor[T]().FieldByName(name)
	if !ok || f.Type != reflect.TypeFor[F]() || len(f.Index) != 1 {
		return false
	}
	*off = f.Offset
	return true
}

// probeRawStorage returns a rawStorage proved to build exactly what
// Dragonfly's decoder builds, or nil.
func probeRawStorage() (rs *rawStorage) {
	defer func() {
		if recover() != nil {
			rs = nil
		}
	}()
	// A decoded chunk's parts are copies of templates: a field this does not
	// know could hold memory the copies would share, so the types must
	// have exactly the fields it knows.
	rs = &rawStorage{}
	for _, ok := range []bool{
		fieldsAre[chunk.PalettedStorage]("bitsPerIndex", "filledBitsPerIndex", "indexMask", "indicesStart", "palette", "indices"),
		fieldsAre[chunk.Palette]("last", "lastIndex", "size", "values"),
		fieldsAre[chunk.SubChunk]("air", "storages", "blockLight", "skyLight"),
		fieldsAre[chunk.Chunk]("r", "br", "air", "recalculateHeightMap", "heightMap", "sub", "biomes"),
		fieldOffset[chunk.PalettedStorage, []uint32](&rs.indices, "indices"),
		fieldOffset[chunk.PalettedStorage, unsafe.Pointer](&rs.indicesStart, "indicesStart"),
		fieldOffset[chunk.PalettedStorage, *chunk.Palette](&rs.palette, "palette"),
		fieldOffset[chunk.Palette, []uint32](&rs.values, "values"),
		fieldOffset[chunk.SubChunk, []*chunk.PalettedStorage](&rs.storages, "storages"),
		fieldOffset[chunk.Chunk, chunk.HeightMap](&rs.heightMap, "heightMap"),
		fieldOffset[chunk.Chunk, []*chunk.SubChunk](&rs.chunkSubs, "sub"),
		fieldOffset[chunk.Chunk, []*chunk.PalettedStorage](&rs.biomes, "biomes"),
	} {
		if !ok {
			return nil
		}
	}
	for _, bits := range storageBits {
		n, _ := indexWords(bits)
		t, _, err := networkStorage(bits, make([]byte, 4*n), []uint32{1})
		if err != nil {
			return nil
		}
		rs.templates[bits] = t
	}
	// Every storage comes from one arena, in one block each, so that a
	// storage writing into its neighbour's memory would show.
	a := &columnArena{wordBlock: 1 << 16}
	type built struct {
		s    *chunk.PalettedStorage
		want []uint32
	}
	var all []built
	intact := func() bool {
		for _, b := range all {
			if !sameValues(b.s, b.want) {
				return false
			}
		}
		return true
	}
	seed := uint32(2463534242)
	for _, bits := range storageBits {
		words, palette, want := probeLayer(&seed, bits)
		slow, c, err := networkStorage(bits, words, palette)
		if err != nil || !rs.encodesLike(c) {
			return nil
		}
		fast := rs.storage(a, bits, words, a.palette(palette))
		if bits > 0 && !fast.Equal(slow) {
			return nil
		}
		got := rs.indicesOf(slow)
		for i := range got {
			if got[i] != binary.LittleEndian.Uint32(words[4*i:]) {
				return nil
			}
		}
		// A new value makes both grow their palette, and perhaps resize.
		fast.Set(1, 2, 3, 99999)
		slow.Set(1, 2, 3, 99999)
		want[1<<8|3<<4|2] = 99999
		if fast.Palette().Len() != slow.Palette().Len() || !rs.encodesLike(c) || !sameValues(slow, want) {
			return nil
		}
		all = append(all, built{fast, want})
	}
	if !intact() {
		return nil
	}
	// A sub-chunk of two layers, read as the decoder reads one, is the
	// network decoder's, also once both gain a third layer and a block.
	sub := appendProbeLayers([]byte{chunk.SubChunkVersion, 2, 0}, &seed, 5, 1)
	slowSub, err := chunk.NetworkDecode(probeRegistry{}, append(slices.Clone(sub), 1, 0), 1, cube.Range{0, 15})
	if err != nil {
		return nil
	}
	fastSub, _, err := rs.sub(a, &reader{b: sub}, 0, readVarint32, sameID)
	if err != nil || !fastSub.Equals(slowSub.Sub()[0]) {
		return nil
	}
	for _, s := range []*chunk.SubChunk{fastSub, slowSub.Sub()[0]} {
		s.Layer(2)
		s.SetBlock(4, 5, 6, 2, 424242)
		s.SetBlock(4, 5, 6, 0, 434343)
	}
	if len(fastSub.Layers()) != 3 {
		return nil
	}
	for p := range 3 * 4096 { // not Equals: it calls palettes holding id 0 different
		x, y, z, l := byte(p>>8&15), byte(p&15), byte(p>>4&15), uint8(p>>12)
		if fastSub.Block(x, y, z, l) != slowSub.Sub()[0].Block(x, y, z, l) {
			return nil
		}
	}
	if !intact() {
		return nil
	}
	// A chunk of three sub-chunks: the first the two-layer one above, the
	// others empty; biomes: two storages, the third repeating the second.
	// Dragonfly's decoder and chunk must agree on every block, biome and
	// encoding and on the height map, also after a block is set in an
	// empty sub-chunk, and the template must stay empty.
	rng := cube.Range{0, 47}
	enc := append(appendProbeLayers(nil, &seed, 2, 4), 0x7f<<1|1)
	slow, err := chunk.NetworkDecode(probeRegistry{}, append(slices.Clone(sub), enc...), 1, rng)
	if err != nil {
		return nil
	}
	tmpl := chunk.New(probeRegistry{}, rng)
	first, _, err := rs.sub(a, &reader{b: sub}, 0, readVarint32, sameID)
	if err != nil {
		return nil
	}
	fast, err := rs.chunk(a, tmpl, []*chunk.SubChunk{first}, []byte{0}, enc)
	if err != nil || !bytes.Equal(chunk.EncodeBiomes(fast, chunk.NetworkEncoding), enc) || !rs.encodesLike(slow) || !chunksAgree(fast, slow) {
		return nil
	}
	// NetworkDecode made the third biome storage the second itself; Blaze
	// gives it a copy, as Chunk.Clone does, so they agree after a SetBiome
	// only against a clone.
	slow = slow.Clone()
	for _, c := range []*chunk.Chunk{fast, slow} {
		c.HeightMap()
		c.SetBlock(3, 40, 5, 0, 3) // a light blocker: the height map moves
		c.SetBiome(3, 40, 5, 17)
	}
	if !chunksAgree(fast, slow) {
		return nil
	}
	for _, s := range tmpl.Sub() {
		if !s.Empty() {
			return nil
		}
	}
	return rs
}

// chunksAgree reports whether a and b, of the probe's registry, hold the
// same blocks in both layers, biomes, height map and encodings.
func chunksAgree(a, b *chunk.Chunk) bool {
	if a.Range() != b.Range() || len(a.Sub()) != len(b.Sub()) || !slices.Equal(a.HeightMap(), b.HeightMap()) ||
		!bytes.Equal(chunk.EncodeBiomes(a, chunk.NetworkEncoding), chunk.EncodeBiomes(b, chunk.NetworkEncoding)) {
		return false
	}
	for i := range a.Sub() {
		if !bytes.Equal(chunk.EncodeSubChunk(a, chunk.NetworkEncoding, i), chunk.EncodeSubChunk(b, chunk.NetworkEncoding, i)) {
			return false
		}
	}
	r := a.Range()
	for y := r[0]; y <= r[1]; y++ {
		for p := range 256 {
			x, z := uint8(p>>4), uint8(p&15)
			if a.Block(x, int16(y), z, 0) != b.Block(x, int16(y), z, 0) || a.Block(x, int16(y), z, 1) != b.Block(x, int16(y), z, 1) ||
				a.Biome(x, int16(y), z) != b.Biome(x, int16(y), z) {
				return false
			}
		}
	}
	return true
}

// sameID translates a palette entry to itself.
func sameID(id uint32) (uint64, error) { return uint64(id), nil }

// appendProbeLayers appends a layer in the network encoding (header,
// words, palette) for each of bits, as probeLayer makes them.
func appendProbeLayers(dst []byte, seed *uint32, bits ...byte) []byte {
	for _, b := range bits {
		words, palette, _ := probeLayer(seed, b)
		dst = append(append(dst, b<<1|1), words...)
		dst = appendVarint32(dst, uint64(len(palette)))
		for _, v := range palette {
			dst = appendVarint32(dst, uint64(v))
		}
	}
	return dst
}

// sameValues reports whether s holds want[x<<8|z<<4|y] at every x, y, z.
func sameValues(s *chunk.PalettedStorage, want []uint32) bool {
	for p := range 4096 {
		if s.At(byte(p>>8), byte(p&15), byte(p>>4&15)) != want[p] {
			return false
		}
	}
	return true
}

// probeLayer returns the index words of a layer of bits bits per index
// holding pseudo-random indices (drawn from *seed) into palette, and the
// value at each position (x<<8 | z<<4 | y), packed as Dragonfly packs
// them: 32/bits indices a word, from the low bits up.
func probeLayer(seed *uint32, bits byte) (words []byte, palette, want []uint32) {
	n, _ := indexWords(bits)
	palette = make([]uint32, min(1<<bits, 37))
	for i := range palette {
		palette[i] = uint32(100 + 7*i) // non-zero: Equal calls id 0 different
	}
	words, want = make([]byte, 4*n), make([]uint32, 4096)
	for p := range want {
		v := uint32(0)
		if bits > 0 {
			*seed ^= *seed << 13
			*seed ^= *seed >> 17
			*seed ^= *seed << 5
			v = *seed % uint32(len(palette))
			per := 32 / int(bits)
			w := binary.LittleEndian.Uint32(words[p/per*4:])
			binary.LittleEndian.PutUint32(words[p/per*4:], w|v<<(uint(p%per)*uint(bits)))
		}
		want[p] = palette[v]
	}
	return words, palette, want
}

// storageBits are the bits per index a paletted storage may have.
var storageBits = []byte{0, 1, 2, 3, 4, 5, 6, 8, 16}

// networkStorage decodes one layer with Dragonfly's network decoder, as
// the only layer of a one-sub-chunk chunk, which it returns too.
func networkStorage(bits byte, words []byte, palette []uint32) (*chunk.PalettedStorage, *chunk.Chunk, error) {
	b := []byte{chunk.SubChunkVersion, 1, 0, bits<<1 | 1}
	b = append(b, words...)
	if bits > 0 {
		b = appendVarint32(b, uint64(len(palette)))
	}
	for _, v := range palette {
		b = appendVarint32(b, uint64(v))
	}
	b = append(b, 1, 0) // one biome storage: 0 bits, palette {0}
	c, err := chunk.NetworkDecode(probeRegistry{}, b, 1, cube.Range{0, 15})
	if err != nil {
		return nil, nil, err
	}
	if len(c.Sub()) != 1 || len(c.Sub()[0].Layers()) != 1 {
		return nil, nil, errors.New("not one layer")
	}
	return c.Sub()[0].Layers()[0], c, nil
}

// probeRegistry is the registry the probe decodes with: the network
// decoder asks only for air. Any other call panics, and the probe fails.
type probeRegistry struct{ chunk.BlockRegistry }

func (probeRegistry) AirRuntimeID() uint32 { return 0 }

// FilteringBlock makes every third runtime id block light, for height maps.
func (probeRegistry) FilteringBlock(rid uint32) uint8 {
	if rid%3 == 0 && rid != 0 {
		return 15
	}
	return 0
}
