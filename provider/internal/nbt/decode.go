package nbt

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"reflect"
	"sync"
	"sync/atomic"
)

// Decode decodes little-endian NBT whose root is a compound into the Go
// values gophertunnel's decoder gives for a map[string]any: uint8, int16,
// int32, int64, float32, float64, string, map[string]any, []any, []byte,
// []int32, []int64, and arrays ([N]byte, [N]int32, [N]int64) for the array
// tags. It accepts and refuses exactly what gophertunnel does, quirks
// included (a string of 32 KiB or more is refused, the nesting count is
// kept as gophertunnel keeps it); FuzzCanonicalNBT checks both agree. It
// needs no reflection but for the arrays (BenchmarkDecodeNBT;
// docs/BENCHMARKS.md).
//
// It is safe on any bytes: every length is checked against the bytes left,
// less those the elements still to come of the enclosing lists need,
// before anything is allocated for it (gophertunnel's decoder allocates
// what a damaged length declares, gigabytes if need be, which kills the
// process), and nesting is bounded.
func Decode(b []byte) (map[string]any, error) {
	d := nbtDecoders.Get().(*nbtDecoder)
	defer func() {
		clear(d.pairs[:cap(d.pairs)]) // keep no decoded value alive
		*d = nbtDecoder{pairs: d.pairs[:0]}
		nbtDecoders.Put(d)
	}()
	d.b = b
	t, _, err := d.tag()
	if err != nil {
		return nil, err
	}
	if t != tagCompound {
		return nil, fmt.Errorf("nbt: root tag %d is not a compound", t)
	}
	d.depth++
	m, err := d.compound()
	d.depth--
	return m, err
}

type nbtDecoder struct {
	b   []byte
	off int
	// depth counts open compounds and lists the way gophertunnel does: a
	// list of bytes, ints or longs is never closed.
	depth int
	// nest is the true nesting, which bounds the recursion.
	nest int
	// owed is the bytes the elements still to come of the lists being
	// decoded take at least (a byte each).
	owed int
	// pairs holds the entries of the compounds being decoded, innermost
	// last, so that each map is made once its size is known rather than
	// grown entry by entry.
	pairs []nbtPair
}

type nbtPair struct {
	name  string
	value any
}

var nbtDecoders = sync.Pool{New: func() any { return &nbtDecoder{} }}

var (
	byteType  = reflect.TypeOf(byte(0))
	int32Type = reflect.TypeOf(int32(0))
	int64Type = reflect.TypeOf(int64(0))
)

func (d *nbtDecoder) take(n int) ([]byte, error) {
	if n < 0 || n > len(d.b)-d.off {
		return nil, fmt.Errorf("nbt: truncated at %d", d.off)
	}
	d.off += n
	return d.b[d.off-n : d.off], nil
}

func (d *nbtDecoder) fixed(n int) (uint64, error) {
	p, err := d.take(n)
	if err != nil {
		return 0, err
	}
	switch n {
	case 1:
		return uint64(p[0]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(p)), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(p)), nil
	}
	return binary.LittleEndian.Uint64(p), nil
}

// length reads an int32 length, refusing negative ones.
func (d *nbtDecoder) length() (int, error) {
	v, err := d.fixed(4)
	if err != nil {
		return 0, err
	}
	if n := int32(v); n >= 0 {
		return int(n), nil
	}
	return 0, fmt.Errorf("nbt: negative length at %d", d.off)
}

func (d *nbtDecoder) string() (string, error) {
	p, err := d.stringBytes()
	if err != nil {
		return "", err
	}
	return interned.get(p), nil
}

// stringValue reads a string as an any: from the intern table already
// boxed, so that a string value found there costs no allocation at all.
func (d *nbtDecoder) stringValue() (any, error) {
	p, err := d.stringBytes()
	if err != nil {
		return "", err
	}
	return interned.getAny(p), nil
}

func (d *nbtDecoder) stringBytes() ([]byte, error) {
	v, err := d.fixed(2)
	if err != nil {
		return nil, err
	}
	if int16(v) < 0 {
		return nil, fmt.Errorf("nbt: string of %d bytes", v)
	}
	return d.take(int(v))
}

func (d *nbtDecoder) tag() (byte, string, error) {
	if d.depth >= maxNBTDepth {
		return 0, "", fmt.Errorf("nbt: nested too deeply")
	}
	t, err := d.fixed(1)
	if err != nil || byte(t) == tagEnd {
		return byte(t), "", err
	}
	name, err := d.string()
	return byte(t), name, err
}

func (d *nbtDecoder) compound() (map[string]any, error) {
	start := len(d.pairs)
	defer func() {
		clear(d.pairs[start:])
		d.pairs = d.pairs[:start]
	}()
	for {
		t, name, err := d.tag()
		if err != nil {
			return nil, err
		}
		if t == tagEnd {
			break
		}
		v, err := d.value(t)
		if err != nil {
			return nil, err
		}
		d.pairs = append(d.pairs, nbtPair{name, v})
	}
	m := make(map[string]any, len(d.pairs)-start)
	for _, p := range d.pairs[start:] {
		m[p.name] = p.value // in order: a repeated name keeps its last value
	}
	return m, nil
}

// array reads an array tag's elements into [n]elem, as gophertunnel does.
func (d *nbtDecoder) array(elem reflect.Type, size int) (any, error) {
	n, err := d.length()
	if err != nil {
		return nil, err
	}
	p, err := d.take(n * size)
	if err != nil {
		return nil, err
	}
	a := reflect.New(reflect.ArrayOf(n, elem)).Elem()
	for i := 0; i < n; i++ {
		switch size {
		case 1:
			a.Index(i).SetUint(uint64(p[i]))
		case 4:
			a.Index(i).SetInt(int64(int32(binary.LittleEndian.Uint32(p[i*4:]))))
		default:
			a.Index(i).SetInt(int64(binary.LittleEndian.Uint64(p[i*8:])))
		}
	}
	return a.Interface(), nil
}

func (d *nbtDecoder) value(t byte) (any, error) {
	switch t {
	case tagByte:
		v, err := d.fixed(1)
		return uint8(v), err
	case tagShort:
		v, err := d.fixed(2)
		return int16(v), err
	case tagInt:
		v, err := d.fixed(4)
		return int32(v), err
	case tagLong:
		v, err := d.fixed(8)
		return int64(v), err
	case tagFloat:
		v, err := d.fixed(4)
		return math.Float32frombits(uint32(v)), err
	case tagDouble:
		v, err := d.fixed(8)
		return math.Float64frombits(v), err
	case tagString:
		return d.stringValue()
	case tagByteArray:
		return d.array(byteType, 1)
	case tagIntArray:
		return d.array(int32Type, 4)
	case tagLongArray:
		return d.array(int64Type, 8)
	case tagCompound, tagList:
		if d.nest++; d.nest > maxNBTDepth {
			return nil, fmt.Errorf("nbt: nested too deeply")
		}
		defer func() { d.nest-- }()
		if t == tagList {
			return d.list()
		}
		d.depth++
		m, err := d.compound()
		d.depth--
		return m, err
	}
	return nil, fmt.Errorf("nbt: unknown tag type %d", t)
}

func (d *nbtDecoder) list() (any, error) {
	d.depth++
	et, err := d.fixed(1)
	if err != nil {
		return nil, err
	}
	if et > tagLongArray {
		return nil, fmt.Errorf("nbt: list of unknown tag type %d", et)
	}
	n, err := d.length()
	if err != nil {
		return nil, err
	}
	switch byte(et) {
	case tagByte:
		if n == 0 {
			return []any{}, nil
		}
		p, err := d.take(n)
		return append([]byte(nil), p...), err
	case tagInt, tagLong:
		size := 4
		if byte(et) == tagLong {
			size = 8
		}
		p, err := d.take(n * size)
		if err != nil {
			return nil, err
		}
		if size == 4 {
			s := make([]int32, n)
			for i := range s {
				s[i] = int32(binary.LittleEndian.Uint32(p[i*4:]))
			}
			return s, nil
		}
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(binary.LittleEndian.Uint64(p[i*8:]))
		}
		return s, nil
	}
	// Every element takes at least a byte, and so does every element of
	// the enclosing lists still to come (owed): checked against the bytes
	// left alone, a chain of lists each as long as the bytes after it
	// allow would have this allocate the square of the record's size.
	if n > len(d.b)-d.off-d.owed {
		return nil, fmt.Errorf("nbt: list of %d runs past the end", n)
	}
	s := make([]any, n)
	owed := d.owed
	for i := range s {
		if byte(et) == tagEnd {
			return nil, fmt.Errorf("nbt: list of end tags")
		}
		d.owed = owed + n - 1 - i
		if s[i], err = d.value(byte(et)); err != nil {
			return nil, err
		}
	}
	d.owed = owed
	d.depth--
	return s, nil
}

// interned holds recently decoded short NBT strings: the names of a
// compound's entries and ids repeat in every block entity and entity, and
// a string found here is not allocated again.
var interned internTable

// internTable is a fixed-size, lossy cache of strings: a slot keeps the
// last string hashed to it. It is safe for concurrent use, without locks.
type internTable struct {
	seed  maphash.Seed
	slots [1024]atomic.Pointer[internEntry]
}

// internEntry is a string of the table, and the same string as an any.
type internEntry struct {
	s string
	v any
}

func init() { interned.seed = maphash.MakeSeed() }

// maxInterned is the longest string interned: longer ones (text, books)
// rarely repeat.
const maxInterned = 48

// get returns p as a string, from the table if it holds it.
func (t *internTable) get(p []byte) string {
	if e := t.entry(p); e != nil {
		return e.s
	}
	return string(p)
}

// getAny returns p as a string in an any, from the table if it holds it.
func (t *internTable) getAny(p []byte) any {
	if e := t.entry(p); e != nil {
		return e.v
	}
	return string(p)
}

// entry returns p's entry, adding it unless p is too short or too long to
// intern (then nil).
func (t *internTable) entry(p []byte) *internEntry {
	if len(p) == 0 || len(p) > maxInterned {
		return nil
	}
	slot := &t.slots[maphash.Bytes(t.seed, p)%uint64(len(t.slots))]
	if e := slot.Load(); e != nil && e.s == string(p) {
		return e
	}
	e := &internEntry{s: string(p)}
	e.v = e.s
	slot.Store(e)
	return e
}
