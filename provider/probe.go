package provider

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"unsafe"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// The probe that proves rawStorage (rawstorage.go) against Dragonfly
// before anything trusts it, and the helpers it builds its cases with.

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
