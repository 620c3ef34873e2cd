package rawchunk

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/df-mc/dragonfly/server/world/chunk"
)

// What the probe counts as agreement between a value the Builder built and
// the one Dragonfly's decoder built from the same bytes: every field
// equal, pointers compared by what they point at, and every method giving
// the same results.

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
