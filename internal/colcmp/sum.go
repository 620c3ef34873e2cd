package colcmp

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"reflect"
	"slices"
	"unsafe"

	"github.com/df-mc/dragonfly/server/world/chunk"
)

// A Summer digests columns so that what Compare would compare can be
// checked without keeping the column: two columns whose Sums are equal
// hold the same blocks in every layer (a missing layer reads as air, as
// Compare reads it), the same biomes, tick, block entities, entities and
// scheduled updates, as Compare decides equality, but for a chance of
// about 2^-64. Blocks and biomes are digested by value, however their
// palettes are ordered and packed. Sums of one Summer are comparable with
// each other only: its seed is random. A Summer is safe for concurrent
// use.
type Summer struct {
	seed maphash.Seed
}

// Sum is a column's digest (Summer).
type Sum uint64

// NewSummer returns a Summer with a seed of its own.
func NewSummer() *Summer { return &Summer{seed: maphash.MakeSeed()} }

// Sum returns col's digest.
func (s *Summer) Sum(col *chunk.Column) Sum {
	d := digest{seed: s.seed, buf: make([]uint32, 4096)}
	d.h.SetSeed(s.seed)
	c := col.Chunk
	d.u64(uint64(int64(c.Range()[0])))
	d.u64(uint64(int64(c.Range()[1])))
	var layers []uint64
	for i, sub := range c.Sub() {
		// Dragonfly's network encoding of the sub-chunk: a version, the
		// number of layers and the sub-chunk's index, then each layer.
		enc := chunk.EncodeSubChunk(c, chunk.NetworkEncoding, i)
		if len(enc) < 3 {
			d.raw(enc)
			continue
		}
		layers = layers[:0]
		off := 3
		for range int(enc[1]) {
			n, h, ok := d.storage(enc[off:])
			if !ok {
				layers = append(layers[:0], d.rawSum(enc))
				break
			}
			off += n
			layers = append(layers, h)
		}
		// Trailing layers of air only are what a missing layer reads as.
		air := uniformSum(sub.Block(0, 0, 0, 255))
		for len(layers) > 0 && layers[len(layers)-1] == air {
			layers = layers[:len(layers)-1]
		}
		d.u64(uint64(len(layers)))
		for _, h := range layers {
			d.u64(h)
		}
	}
	enc := chunk.EncodeBiomes(c, chunk.NetworkEncoding)
	prev, ok := uint64(0), true
	for off := 0; off < len(enc) && ok; {
		if enc[off] == 0x7f<<1|1 { // the same as the storage below
			ok = off > 0
			off++
		} else {
			var n int
			n, prev, ok = d.storage(enc[off:])
			off += n
		}
		d.u64(prev)
	}
	if !ok {
		d.raw(enc)
	}
	d.u64(uint64(col.Tick))
	d.value(reflect.ValueOf(emptyNil(col.BlockEntities)))
	d.value(reflect.ValueOf(emptyNil(col.Entities)))
	d.value(reflect.ValueOf(emptyNil(col.ScheduledBlocks)))
	return Sum(d.h.Sum64())
}

// emptyNil makes an empty list nil: Compare takes nil and empty lists for
// equal.
func emptyNil[T any](l []T) []T {
	if len(l) == 0 {
		return nil
	}
	return l
}

type digest struct {
	h    maphash.Hash
	seed maphash.Seed
	buf  []uint32
	b    [8]byte
}

func (d *digest) u64(v uint64) {
	binary.LittleEndian.PutUint64(d.b[:], v)
	d.h.Write(d.b[:])
}

// uniformSum is a storage's digest when all of it is v: v itself, tagged
// apart from the hashes of storages that are not.
func uniformSum(v uint32) uint64 { return 1<<63 | uint64(v) }

// storage reads one paletted storage of the network encoding at the start
// of b and returns the bytes it took and its digest by value: uniformSum
// when all 4096 values are one, else the hash of the values, position by
// position. ok is false for an encoding it does not understand.
func (d *digest) storage(b []byte) (n int, sum uint64, ok bool) {
	if len(b) == 0 || b[0]&1 != 1 {
		return 0, 0, false
	}
	bits := int(b[0] >> 1)
	off := 1
	if bits == 0 {
		v, n := binary.Varint(b[off:])
		if n <= 0 {
			return 0, 0, false
		}
		return off + n, uniformSum(uint32(v)), true
	}
	if bits > 16 {
		return 0, 0, false
	}
	perWord := 32 / bits
	words := (4096 + perWord - 1) / perWord
	if len(b) < off+4*words {
		return 0, 0, false
	}
	w := b[off : off+4*words]
	off += 4 * words
	count, k := binary.Varint(b[off:])
	if k <= 0 || count < 1 || count > 4096 {
		return 0, 0, false
	}
	off += k
	var small [256]uint32
	palette := small[:0]
	if count > int64(len(small)) {
		palette = make([]uint32, 0, count)
	}
	for range count {
		v, k := binary.Varint(b[off:])
		if k <= 0 {
			return 0, 0, false
		}
		palette = append(palette, uint32(v))
		off += k
	}
	mask := uint32(1)<<bits - 1
	out := d.buf[:4096]
	i := 0
	for wi := 0; wi < words && i < 4096; wi++ {
		word := binary.LittleEndian.Uint32(w[4*wi:])
		for j := 0; j < perWord && i < 4096; j++ {
			idx := word & mask
			if int(idx) >= len(palette) {
				return 0, 0, false
			}
			out[i] = palette[idx]
			word >>= uint(bits)
			i++
		}
	}
	if !slices.ContainsFunc(out, func(v uint32) bool { return v != out[0] }) {
		return off, uniformSum(out[0]), true
	}
	return off, maphash.Bytes(d.seed, unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), 4*len(out))) &^ (1 << 63), true
}

func (d *digest) rawSum(enc []byte) uint64 { return maphash.Bytes(d.seed, enc) &^ (1 << 63) }

func (d *digest) raw(enc []byte) {
	d.u64(3)
	d.u64(uint64(len(enc)))
	d.h.Write(enc)
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
		var sum uint64
		for it := v.MapRange(); it.Next(); {
			e := digest{seed: d.seed}
			e.h.SetSeed(d.seed)
			e.value(it.Key())
			e.value(it.Value())
			sum += e.h.Sum64()
		}
		d.u64(sum)
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
		d.h.Write(v.Bytes())
		return
	}
	for i := range v.Len() {
		d.value(v.Index(i))
	}
}

func (d *digest) str(s string) {
	d.u64(uint64(len(s)))
	d.h.WriteString(s)
}
