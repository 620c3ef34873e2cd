package colcmp

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"reflect"
	"slices"

	"github.com/df-mc/dragonfly/server/world/chunk"
)

// A Summer digests columns so that what Compare would compare can be
// checked without keeping the column: two columns whose Sums are equal
// hold the same blocks in every layer (a missing layer reads as air, as
// Compare reads it), the same biomes, tick, block entities, entities and
// scheduled updates, as Compare decides equality, but for a chance of
// 2^-128. Sums of one Summer are comparable with each other only: its
// seeds are random. A Summer is safe for concurrent use.
type Summer struct {
	seeds [2]maphash.Seed
}

// Sum is a column's digest (Summer).
type Sum [2]uint64

// NewSummer returns a Summer with seeds of its own.
func NewSummer() *Summer {
	return &Summer{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

// Sum returns col's digest.
func (s *Summer) Sum(col *chunk.Column) Sum {
	var d digest
	d.h[0].SetSeed(s.seeds[0])
	d.h[1].SetSeed(s.seeds[1])
	c := col.Chunk
	d.u64(uint64(int64(c.Range()[0])))
	d.u64(uint64(int64(c.Range()[1])))
	buf := make([]uint32, 4096)
	for _, sub := range c.Sub() {
		layers := sub.Layers()
		// Trailing layers of air only are what a missing layer reads as.
		n := len(layers)
		for n > 0 && uniform(layers[n-1], buf) && buf[0] == sub.Block(0, 0, 0, 255) {
			n--
		}
		d.u64(uint64(n))
		for _, l := range layers[:n] {
			if uniform(l, buf) {
				d.u64(1)
				d.u64(uint64(buf[0]))
				continue
			}
			d.u64(2)
			d.u32s(buf)
		}
	}
	d.biomes(chunk.EncodeBiomes(c, chunk.NetworkEncoding))
	d.u64(uint64(col.Tick))
	d.value(reflect.ValueOf(emptyNil(col.BlockEntities)))
	d.value(reflect.ValueOf(emptyNil(col.Entities)))
	d.value(reflect.ValueOf(emptyNil(col.ScheduledBlocks)))
	return Sum{d.h[0].Sum64(), d.h[1].Sum64()}
}

// emptyNil makes an empty list nil: Compare takes nil and empty lists for
// equal.
func emptyNil[T any](l []T) []T {
	if len(l) == 0 {
		return nil
	}
	return l
}

// uniform reports whether every block of l is the same; otherwise it
// fills buf with l's 4096 blocks. Either way buf[0] is the first.
func uniform(l *chunk.PalettedStorage, buf []uint32) bool {
	if l.Palette().Len() == 1 {
		buf[0] = l.Palette().Value(0)
		return true
	}
	same := true
	i := 0
	for x := byte(0); x < 16; x++ {
		for z := byte(0); z < 16; z++ {
			for y := byte(0); y < 16; y++ {
				buf[i] = l.At(x, y, z)
				same = same && buf[i] == buf[0]
				i++
			}
		}
	}
	return same
}

type digest struct {
	h [2]maphash.Hash
	b [8]byte
}

func (d *digest) write(p []byte) {
	d.h[0].Write(p)
	d.h[1].Write(p)
}

func (d *digest) u64(v uint64) {
	binary.LittleEndian.PutUint64(d.b[:], v)
	d.write(d.b[:])
}

func (d *digest) u32s(v []uint32) {
	var b [4096 * 4]byte
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	d.write(b[:4*len(v)])
}

// biomes digests a chunk's biomes in Dragonfly's network encoding by
// value: each sub-chunk's 4096 biomes, however its palette is ordered and
// packed. An encoding it does not understand is digested as its bytes.
func (d *digest) biomes(enc []byte) {
	prev := []uint32(nil)
	cur := make([]uint32, 4096)
	for off := 0; off < len(enc); {
		if enc[off] == 0x7f<<1|1 { // the same as the storage below
			if prev == nil {
				d.raw(enc)
				return
			}
			off++
		} else {
			n, ok := readStorage(enc[off:], cur)
			if !ok {
				d.raw(enc)
				return
			}
			off += n
			prev = append(prev[:0], cur...)
		}
		if u := !slices.ContainsFunc(prev, func(v uint32) bool { return v != prev[0] }); u {
			d.u64(1)
			d.u64(uint64(prev[0]))
		} else {
			d.u64(2)
			d.u32s(prev)
		}
	}
}

func (d *digest) raw(enc []byte) {
	d.u64(3)
	d.u64(uint64(len(enc)))
	d.write(enc)
}

// readStorage reads one paletted storage of the network encoding at the
// start of b into out (its 4096 values), reporting the bytes it took.
func readStorage(b []byte, out []uint32) (int, bool) {
	if len(b) == 0 || b[0]&1 != 1 {
		return 0, false
	}
	bits := int(b[0] >> 1)
	off := 1
	if bits == 0 {
		v, n := binary.Varint(b[off:])
		if n <= 0 {
			return 0, false
		}
		for i := range out {
			out[i] = uint32(v)
		}
		return off + n, true
	}
	if bits > 16 {
		return 0, false
	}
	perWord := 32 / bits
	words := (4096 + perWord - 1) / perWord
	if len(b) < off+4*words {
		return 0, false
	}
	w := b[off : off+4*words]
	off += 4 * words
	count, n := binary.Varint(b[off:])
	if n <= 0 || count < 1 || count > 4096 {
		return 0, false
	}
	off += n
	palette := make([]uint32, count)
	for i := range palette {
		v, n := binary.Varint(b[off:])
		if n <= 0 {
			return 0, false
		}
		palette[i] = uint32(v)
		off += n
	}
	mask := uint32(1)<<bits - 1
	for i := range out {
		word := binary.LittleEndian.Uint32(w[4*(i/perWord):])
		idx := word >> (uint(i%perWord) * uint(bits)) & mask
		if int(idx) >= len(palette) {
			return 0, false
		}
		out[i] = palette[idx]
	}
	return off, true
}

// value digests v as equal compares it: the type, then the content, with
// floats by their bits and a map's entries in any order.
func (d *digest) value(v reflect.Value) {
	if !v.IsValid() {
		d.u64(0)
		return
	}
	d.str(v.Type().String())
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		d.u64(math.Float64bits(v.Float()))
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			d.u64(0)
			return
		}
		d.u64(1)
		d.value(v.Elem())
	case reflect.Map:
		if v.IsNil() {
			d.u64(0)
			return
		}
		d.u64(uint64(v.Len()) + 1)
		// The entries' own digests, added: the same in any order.
		var sum [2]uint64
		for it := v.MapRange(); it.Next(); {
			var e digest
			e.h[0].SetSeed(d.h[0].Seed())
			e.h[1].SetSeed(d.h[1].Seed())
			e.value(it.Key())
			e.value(it.Value())
			sum[0] += e.h[0].Sum64()
			sum[1] += e.h[1].Sum64()
		}
		d.u64(sum[0])
		d.u64(sum[1])
	case reflect.Slice:
		if v.IsNil() {
			d.u64(0)
			return
		}
		d.u64(uint64(v.Len()) + 1)
		d.elems(v)
	case reflect.Array:
		d.elems(v)
	case reflect.Struct:
		for i := range v.NumField() {
			d.value(v.Field(i))
		}
	case reflect.String:
		d.str(v.String())
	case reflect.Bool:
		if v.Bool() {
			d.u64(1)
		} else {
			d.u64(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.u64(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		d.u64(v.Uint())
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		d.u64(math.Float64bits(real(c)))
		d.u64(math.Float64bits(imag(c)))
	default: // funcs, channels, unsafe pointers: by address, as equal compares them
		d.u64(uint64(v.Pointer()))
	}
}

func (d *digest) elems(v reflect.Value) {
	if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
		d.write(v.Bytes())
		return
	}
	for i := range v.Len() {
		d.value(v.Index(i))
	}
}

func (d *digest) str(s string) {
	d.u64(uint64(len(s)))
	d.h[0].WriteString(s)
	d.h[1].WriteString(s)
}
