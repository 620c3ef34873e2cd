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
		if !bytes.Equal(b.AppendSubChunk(nil, c, i), chunk.EncodeSubChunk(c, chunk.NetworkEncoding, i)) {
			return false
		}
	}
	return bytes.Equal(b.AppendBiomes(nil, c), chunk.EncodeBiomes(c, chunk.NetworkEncoding))
}

// agree collects the first difference between results of the same calls
// on the built value and on Dragonfly's.
type agree struct{ err error }

func (g *agree) eq(what string, x, y any) {
	if g.err == nil && !reflect.DeepEqual(x, y) {
		g.err = fmt.Errorf("%s gives %v, Dragonfly's %v", what, x, y)
	}
}

func (g *agree) fields(what string, x, y any) {
	if g.err == nil {
		g.err = same(what, reflect.ValueOf(x), reflect.ValueOf(y))
	}
}

// storagesAgree compares f, built, with s, Dragonfly's, in every field and
// every method of PalettedStorage and Palette. Add and Replace run on
// clones of the palettes, as they would break the storages' invariants.
func storagesAgree(b *Builder, f, s *chunk.PalettedStorage) error {
	g := &agree{}
	g.fields("storage", f, s)
	for p := range 4096 {
		x, y, z := byte(p>>8), byte(p&15), byte(p>>4&15)
		g.eq("At", f.At(x, y, z), s.At(x, y, z))
		g.eq("PaletteIndex", f.PaletteIndex(x, y, z), s.PaletteIndex(x, y, z))
	}
	g.eq("Equal", f.Equal(s), s.Equal(s.Clone()))
	g.eq("Equal", s.Equal(f), s.Equal(s.Clone()))
	g.fields("Clone", f.Clone(), s.Clone())
	fp, sp := f.Palette(), s.Palette()
	g.eq("Palette.Len", fp.Len(), sp.Len())
	for i := range sp.Len() {
		v := sp.Value(uint16(i))
		g.eq("Palette.Value", fp.Value(uint16(i)), v)
		g.eq("Palette.Index", fp.Index(v), sp.Index(v))
	}
	g.eq("Palette.Index of a missing value", fp.Index(1<<30), sp.Index(1<<30))
	fc, sc := fp.Clone(), sp.Clone()
	g.fields("Palette.Clone", fc, sc)
	fi, fr := fc.Add(123456)
	si, sr := sc.Add(123456)
	g.eq("Palette.Add", [2]any{fi, fr}, [2]any{si, sr})
	fc.Replace(func(v uint32) uint32 { return v + 1 })
	sc.Replace(func(v uint32) uint32 { return v + 1 })
	g.fields("Palette after Add and Replace", fc, sc)
	g.fields("storage after its methods", f, s)
	if g.err == nil && len(b.Words(f)) != len(b.Words(s)) {
		g.err = errors.New("Words differs")
	}
	return g.err
}

// subsAgree compares f, built, with s, Dragonfly's, in every field and
// every method of SubChunk. The light methods are not called: neither a
// decoded sub-chunk nor a built one has light (the World fills it), which
// comparing the fields checks.
func subsAgree(b *Builder, f, s *chunk.SubChunk) error {
	g := &agree{}
	g.fields("sub-chunk", f, s)
	g.eq("Equals", f.Equals(s), s.Equals(s.Clone()))
	g.eq("Equals", s.Equals(f), s.Equals(s.Clone()))
	g.eq("Empty", f.Empty(), s.Empty())
	g.eq("Layers", len(f.Layers()), len(s.Layers()))
	g.fields("Clone", f.Clone(), s.Clone())
	for l := range len(s.Layers()) + 1 {
		for p := range 4096 {
			x, y, z := byte(p>>8), byte(p&15), byte(p>>4&15)
			g.eq("Block", f.Block(x, y, z, uint8(l)), s.Block(x, y, z, uint8(l)))
		}
	}
	if g.err != nil {
		return g.err
	}
	for i := range s.Layers() {
		if err := storagesAgree(b, f.Layer(uint8(i)), s.Layer(uint8(i))); err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return nil
}

// chunksAgree compares f, built, with s, Dragonfly's, in every field and
// every method of Chunk (the light methods as subsAgree says).
func chunksAgree(b *Builder, f, s *chunk.Chunk) error {
	g := &agree{}
	g.fields("chunk", f, s)
	g.eq("Range", f.Range(), s.Range())
	g.eq("Equals", f.Equals(s), s.Equals(s.Clone()))
	g.eq("Equals", s.Equals(f), s.Equals(s.Clone()))
	g.fields("Clone", f.Clone(), s.Clone())
	g.eq("HighestFilledSubChunk", f.HighestFilledSubChunk(), s.HighestFilledSubChunk())
	r := s.Range()
	for y := r[0]; y <= r[1]; y++ {
		g.eq("SubIndex", f.SubIndex(int16(y)), s.SubIndex(int16(y)))
		g.eq("SubY", f.SubY(int16(y>>4)), s.SubY(int16(y>>4)))
		for p := range 256 {
			x, z := uint8(p>>4), uint8(p&15)
			for l := range uint8(3) {
				g.eq("Block", f.Block(x, int16(y), z, l), s.Block(x, int16(y), z, l))
			}
			g.eq("Biome", f.Biome(x, int16(y), z), s.Biome(x, int16(y), z))
		}
	}
	for p := range 256 {
		x, z := uint8(p>>4), uint8(p&15)
		g.eq("HighestBlock", f.HighestBlock(x, z), s.HighestBlock(x, z))
		g.eq("HighestLightBlocker", f.HighestLightBlocker(x, z), s.HighestLightBlocker(x, z))
	}
	g.eq("HeightMap", f.HeightMap(), s.HeightMap())
	g.fields("chunk after HeightMap", f, s)
	if g.err == nil && !b.encodesLike(f) {
		g.err = errors.New("the encoders differ from Dragonfly's")
	}
	if g.err != nil {
		return g.err
	}
	for i := range s.Sub() {
		if f.SubChunk(int16(s.SubY(int16(i)))) != f.Sub()[i] {
			return errors.New("SubChunk finds another sub-chunk than Sub")
		}
		if err := subsAgree(b, f.Sub()[i], s.Sub()[i]); err != nil {
			return fmt.Errorf("sub-chunk %d: %w", i, err)
		}
	}
	return nil
}

// same compares x and y, of one type, field by field, unexported fields
// included, following pointers and slices (a nil slice is an empty one). An unsafe.Pointer is compared
// by what it points at within its struct: both nil, or both the start of
// the same slice field's array. Kinds the types here do not hold refuse.
func same(path string, x, y reflect.Value) error {
	switch x.Kind() {
	case reflect.Pointer:
		if x.IsNil() != y.IsNil() {
			return fmt.Errorf("%s: nil in one only", path)
		}
		if x.IsNil() {
			return nil
		}
		return same(path, x.Elem(), y.Elem())
	case reflect.Struct:
		for i := range x.NumField() {
			fx, fy := field(x, i), field(y, i)
			name := path + "." + x.Type().Field(i).Name
			if fx.Kind() == reflect.UnsafePointer {
				if ix, iy := pointsAt(x, fx), pointsAt(y, fy); ix != iy || ix == -1 {
					return fmt.Errorf("%s points at field %d, Dragonfly's at %d", name, ix, iy)
				}
				continue
			}
			if err := same(name, fx, fy); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		// A nil slice and an empty one behave alike (Clone makes the one
		// from the other); where an array is pointed at, pointsAt tells.
		if x.Len() != y.Len() {
			return fmt.Errorf("%s: length %d, Dragonfly's %d", path, x.Len(), y.Len())
		}
		fallthrough
	case reflect.Array:
		for i := range x.Len() {
			if err := same(fmt.Sprintf("%s[%d]", path, i), x.Index(i), y.Index(i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Interface:
		if x.IsNil() != y.IsNil() || (!x.IsNil() && x.Elem().Type() != y.Elem().Type()) {
			return fmt.Errorf("%s: the dynamic types differ", path)
		}
		return nil
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		if !x.Equal(y) {
			return fmt.Errorf("%s is %v, Dragonfly's %v", path, x, y)
		}
		return nil
	}
	return fmt.Errorf("%s: a %v, which the probe does not compare", path, x.Kind())
}

// field returns s's field i, unexported or not, readable.
func field(s reflect.Value, i int) reflect.Value {
	f := s.Field(i)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// pointsAt returns the index of the slice field of struct s whose array p
// starts, -2 if p is nil, or -1.
func pointsAt(s, p reflect.Value) int {
	ptr := p.UnsafePointer()
	if ptr == nil {
		return -2
	}
	for i := range s.NumField() {
		if f := field(s, i); f.Kind() == reflect.Slice && f.UnsafePointer() == ptr {
			return i
		}
	}
	return -1
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
