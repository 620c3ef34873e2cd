package rawchunk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Reaching into another package's fields breaks when that package changes,
// so no Builder is trusted before it is proved against Dragonfly itself.
// Probe proves construction, not samples of behaviour:
//
//   - The four types must have exactly the fields, in order, that the
//     Builder knows: a field it does not know could hold memory its copies
//     would share.
//   - Their exported methods must be exactly those the probe knows, so
//     that a method an upgrade adds is checked before it is relied on.
//   - For every bits per index, a storage the Builder builds must equal,
//     field by field (every field, written or copied from the template,
//     pointers followed), the one Dragonfly's decoder builds from the same
//     bytes, and every method must give the same results on both, also
//     after each is changed by Set, Add and Replace.
//   - The same of a sub-chunk of two layers and of a chunk of three
//     sub-chunks with biomes (one repeating the one below), before and
//     after blocks and biomes are set and the chunk is compacted; and the
//     Builder's encoders must give Dragonfly's encoders' bytes.
//   - Every storage built must be intact once all have grown (they come
//     from one arena, so a write into a neighbour would show), and every
//     template as Dragonfly's decoder made it.
//
// Any difference or panic refuses the Builder, with the reason.

// Probe returns a Builder proved to build exactly what Dragonfly's decoder
// builds, or the first difference found.
func Probe() (b *Builder, err error) {
	return probe(nil)
}

// probe is Probe; tamper, when not nil, changes the Builder's templates
// before it is proved, as an upgrade of Dragonfly might (tests only).
func probe(tamper func(*Builder)) (b *Builder, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("rawchunk: probe panicked: %v", r)
		}
	}()
	b, err = layout()
	if err != nil {
		return nil, err
	}
	for _, bits := range Bits {
		n, _ := IndexWords(bits)
		t, _, err := networkStorage(bits, make([]byte, 4*n), []uint32{1})
		if err != nil {
			return nil, fmt.Errorf("rawchunk: template of %d bits: %w", bits, err)
		}
		b.templates[bits] = t
	}
	if tamper != nil {
		tamper(b)
	}
	if err := b.prove(); err != nil {
		return nil, fmt.Errorf("rawchunk: the public path is used: %w", err)
	}
	return b, nil
}

// layout finds the fields the Builder writes, by name and type, and checks
// that the types have no others and the methods the probe knows.
func layout() (*Builder, error) {
	b := &Builder{}
	for _, err := range []error{
		fieldsAre[chunk.PalettedStorage]("bitsPerIndex", "filledBitsPerIndex", "indexMask", "indicesStart", "palette", "indices"),
		fieldsAre[chunk.Palette]("last", "lastIndex", "size", "values"),
		fieldsAre[chunk.SubChunk]("air", "storages", "blockLight", "skyLight"),
		fieldsAre[chunk.Chunk]("r", "br", "air", "recalculateHeightMap", "heightMap", "sub", "biomes"),
		methodsAre[*chunk.PalettedStorage]("At", "Clone", "Equal", "Palette", "PaletteIndex", "Set"),
		methodsAre[*chunk.Palette]("Add", "Clone", "Index", "Len", "Replace", "Value"),
		methodsAre[*chunk.SubChunk]("Block", "BlockLight", "Clone", "Empty", "Equals", "Layer", "Layers",
			"SetBlock", "SetBlockLight", "SetSkyLight", "SkyLight"),
		methodsAre[*chunk.Chunk]("Biome", "Block", "Clone", "Compact", "Equals", "HeightMap", "HighestBlock",
			"HighestFilledSubChunk", "HighestLightBlocker", "Light", "Range", "SetBiome", "SetBlock", "SkyLight",
			"Sub", "SubChunk", "SubIndex", "SubY"),
		fieldOffset[chunk.PalettedStorage, []uint32](&b.indices, "indices"),
		fieldOffset[chunk.PalettedStorage, unsafe.Pointer](&b.indicesStart, "indicesStart"),
		fieldOffset[chunk.PalettedStorage, *chunk.Palette](&b.palette, "palette"),
		fieldOffset[chunk.Palette, []uint32](&b.values, "values"),
		fieldOffset[chunk.SubChunk, []*chunk.PalettedStorage](&b.storages, "storages"),
		fieldOffset[chunk.Chunk, chunk.HeightMap](&b.heightMap, "heightMap"),
		fieldOffset[chunk.Chunk, []*chunk.SubChunk](&b.chunkSubs, "sub"),
		fieldOffset[chunk.Chunk, []*chunk.PalettedStorage](&b.biomes, "biomes"),
	} {
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// fieldsAre checks that T's fields are exactly names, in order.
func fieldsAre[T any](names ...string) error {
	t := reflect.TypeFor[T]()
	return namesAre(t, "fields", t.NumField(), func(i int) string { return t.Field(i).Name }, names)
}

// methodsAre checks that T's exported methods are exactly names, sorted.
func methodsAre[T any](names ...string) error {
	t := reflect.TypeFor[T]()
	return namesAre(t, "methods", t.NumMethod(), func(i int) string { return t.Method(i).Name }, names)
}

// namesAre checks that the n names name(i) of t's what are exactly want.
func namesAre(t reflect.Type, what string, n int, name func(int) string, want []string) error {
	got := make([]string, n)
	for i := range got {
		got[i] = name(i)
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("rawchunk: %v has %s %v, the probe knows %v", t, what, got, want)
	}
	return nil
}

// fieldOffset sets *off to the offset of T's field name, which must exist
// with type F.
func fieldOffset[T, F any](off *uintptr, name string) error {
	f, ok := reflect.TypeFor[T]().FieldByName(name)
	if !ok || f.Type != reflect.TypeFor[F]() || len(f.Index) != 1 {
		return fmt.Errorf("rawchunk: %v has no field %s of type %v", reflect.TypeFor[T](), name, reflect.TypeFor[F]())
	}
	*off = f.Offset
	return nil
}

// prove builds storages of every size, a sub-chunk and a chunk with b and
// with Dragonfly's decoder from the same bytes, and requires them to agree
// in every field and every method (see above).
func (b *Builder) prove() error {
	// Every storage comes from one arena, in one block each, so that a
	// storage writing into its neighbour's memory would show.
	a := &Arena{WordBlock: 1 << 16}
	type built struct {
		s    *chunk.PalettedStorage
		want []uint32
	}
	var all []built
	intact := func() error {
		for _, x := range all {
			if !sameValues(x.s, x.want) {
				return errors.New("a built storage changed when another grew")
			}
		}
		return nil
	}
	seed := uint32(2463534242)
	for _, bits := range Bits {
		words, palette, want := probeLayer(&seed, bits)
		slow, c, err := networkStorage(bits, words, palette)
		if err != nil {
			return err
		}
		if !b.encodesLike(c) {
			return fmt.Errorf("%d bits: the encoders differ from Dragonfly's", bits)
		}
		fast := b.Storage(a, bits, words, a.Palette(palette))
		if err := storagesAgree(b, fast, slow); err != nil {
			return fmt.Errorf("%d bits: %w", bits, err)
		}
		// A new value makes both grow their palette, and perhaps resize.
		fast.Set(1, 2, 3, 99999)
		slow.Set(1, 2, 3, 99999)
		want[1<<8|3<<4|2] = 99999
		if err := storagesAgree(b, fast, slow); err != nil {
			return fmt.Errorf("%d bits, after Set: %w", bits, err)
		}
		if !b.encodesLike(c) || !sameValues(slow, want) {
			return fmt.Errorf("%d bits, after Set: the encoders differ from Dragonfly's", bits)
		}
		all = append(all, built{fast, want})
	}
	if err := intact(); err != nil {
		return err
	}
	// A sub-chunk of two layers, built as the decoder builds one, is the
	// network decoder's, also once both gain a third layer and a block.
	enc, layers := probeLayers(&seed, 5, 1)
	sub := append([]byte{chunk.SubChunkVersion, 2, 0}, enc...)
	slowCol, err := chunk.NetworkDecode(probeRegistry{}, append(slices.Clone(sub), 1, 0), 1, cube.Range{0, 15})
	if err != nil {
		return err
	}
	slowSub := slowCol.Sub()[0]
	fastSub := b.probeSub(a, layers)
	if err := subsAgree(b, fastSub, slowSub); err != nil {
		return fmt.Errorf("sub-chunk: %w", err)
	}
	for _, s := range []*chunk.SubChunk{fastSub, slowSub} {
		s.Layer(2)
		s.SetBlock(4, 5, 6, 2, 424242)
		s.SetBlock(4, 5, 6, 0, 434343)
	}
	if err := subsAgree(b, fastSub, slowSub); err != nil {
		return fmt.Errorf("sub-chunk, after SetBlock: %w", err)
	}
	if err := intact(); err != nil {
		return err
	}
	// A chunk of three sub-chunks: the first the two-layer one above, the
	// others empty; biomes: two storages, the third repeating the second.
	rng := cube.Range{0, 47}
	benc, blayers := probeLayers(&seed, 2, 4)
	benc = append(benc, 0x7f<<1|1)
	slow, err := chunk.NetworkDecode(probeRegistry{}, append(slices.Clone(sub), benc...), 1, rng)
	if err != nil {
		return err
	}
	if !b.encodesLike(slow) {
		return errors.New("chunk: the encoders differ from Dragonfly's")
	}
	// NetworkDecode makes the third biome storage the second itself; the
	// Builder's caller gives it a copy, as Chunk.Clone does, so they are
	// compared against a clone.
	slow = slow.Clone()
	tmpl := chunk.New(probeRegistry{}, rng)
	biomes := a.Layers(3)
	for i, l := range blayers {
		biomes[i] = b.Storage(a, l.bits, l.words, a.Palette(l.palette))
	}
	biomes[2] = b.CopyOf(a, biomes[1])
	fast, err := b.Chunk(a, tmpl, []*chunk.SubChunk{b.probeSub(a, layers)}, []byte{0}, biomes)
	if err != nil {
		return err
	}
	if !bytes.Equal(b.AppendBiomes(nil, fast), benc) {
		return errors.New("chunk: biomes encode differently")
	}
	if err := chunksAgree(b, fast, slow); err != nil {
		return fmt.Errorf("chunk: %w", err)
	}
	for _, c := range []*chunk.Chunk{fast, slow} {
		c.HeightMap()
		c.SetBlock(3, 40, 5, 0, 3) // a light blocker: the height map moves
		c.SetBlock(3, 20, 5, 1, 6)
		c.SetBiome(3, 40, 5, 17)
	}
	if err := chunksAgree(b, fast, slow); err != nil {
		return fmt.Errorf("chunk, after SetBlock and SetBiome: %w", err)
	}
	fast.Compact()
	slow.Compact()
	if err := chunksAgree(b, fast, slow); err != nil {
		return fmt.Errorf("chunk, after Compact: %w", err)
	}
	if err := intact(); err != nil {
		return err
	}
	for _, s := range tmpl.Sub() {
		if !s.Empty() {
			return errors.New("the template chunk changed")
		}
	}
	for _, bits := range Bits {
		n, _ := IndexWords(bits)
		t, _, err := networkStorage(bits, make([]byte, 4*n), []uint32{1})
		if err != nil {
			return err
		}
		if err := same("template", reflect.ValueOf(b.templates[bits]), reflect.ValueOf(t)); err != nil {
			return fmt.Errorf("%d bits: %w", bits, err)
		}
	}
	return nil
}

// probeSub builds a sub-chunk of layers as a decode does.
func (b *Builder) probeSub(a *Arena, layers []probeLayerData) *chunk.SubChunk {
	storages := a.Layers(len(layers))
	for i, l := range layers {
		storages[i] = b.Storage(a, l.bits, l.words, a.Palette(l.palette))
	}
	return b.SubChunk(a, 0, storages)
}

// encodesLike reports whether AppendSubChunk and AppendBiomes encode every
// sub-chunk and the biomes of c exactly as Dragonfly does.
func (b *Builder) encodesLike(c *chunk.Chunk) bool {
	for i := range c.Sub() {
		if !bytes.Equal(b.AppendSubChunk(nil, c.Sub()[i], i+(c.Range()[0]>>4)), chunk.EncodeSubChunk(c, chunk.NetworkEncoding, i)) {
			return false
		}
	}
	return bytes.Equal(b.AppendBiomes(nil, c), chunk.EncodeBiomes(c, chunk.NetworkEncoding))
}

// probeLayerData is one layer as the probe makes it.
type probeLayerData struct {
	bits    byte
	words   []byte
	palette []uint32
}

// probeLayers returns a layer for each of bits, as probeLayer makes them,
// and their network encoding (header, words, palette).
func probeLayers(seed *uint32, bits ...byte) (enc []byte, layers []probeLayerData) {
	for _, b := range bits {
		words, palette, _ := probeLayer(seed, b)
		layers = append(layers, probeLayerData{b, words, palette})
		enc = append(append(enc, b<<1|1), words...)
		enc = AppendVarint32(enc, uint32(len(palette)))
		for _, v := range palette {
			enc = AppendVarint32(enc, v)
		}
	}
	return enc, layers
}

// probeLayer returns the index words of a layer of bits bits per index
// holding pseudo-random indices (drawn from *seed) into palette, and the
// value at each position (x<<8 | z<<4 | y), packed as Dragonfly packs
// them: 32/bits indices a word, from the low bits up.
func probeLayer(seed *uint32, bits byte) (words []byte, palette, want []uint32) {
	n, _ := IndexWords(bits)
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

// networkStorage decodes one layer with Dragonfly's network decoder, as
// the only layer of a one-sub-chunk chunk, which it returns too.
func networkStorage(bits byte, words []byte, palette []uint32) (*chunk.PalettedStorage, *chunk.Chunk, error) {
	b := []byte{chunk.SubChunkVersion, 1, 0, bits<<1 | 1}
	b = append(b, words...)
	if bits > 0 {
		b = AppendVarint32(b, uint32(len(palette)))
	}
	for _, v := range palette {
		b = AppendVarint32(b, v)
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
