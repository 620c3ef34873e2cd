package nbt

import (
	"encoding/binary"
	"math"
	"reflect"
	"slices"

	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// AppendCanonical appends m as canonical little-endian NBT (every
// compound's entries sorted by name), exactly as gophertunnel's encoder
// followed by Canonical gives it, or returns gophertunnel's error. A
// float32 keeps its bits (see appendCanonicalFast).
func AppendCanonical(dst []byte, m map[string]any) ([]byte, error) {
	if out, ok := appendCanonicalFast(dst, m); ok {
		return out, nil
	}
	v, err := slowCanonical(m)
	if err != nil {
		return dst, err
	}
	return append(dst, v...), nil
}

// slowCanonical encodes m through gophertunnel and Canonical: what
// appendCanonicalFast gives when it can.
func slowCanonical(m map[string]any) ([]byte, error) {
	v, err := nbt.MarshalEncoding(m, nbt.LittleEndian)
	if err != nil {
		return nil, err
	}
	return Canonical(v)
}

// appendCanonicalFast appends m as little-endian NBT exactly as
// Canonical(nbt.MarshalEncoding(m, nbt.LittleEndian)) gives it (every
// compound's entries sorted by name), in one pass and without reflection
// for everything but the array tags, with one difference: a float32 keeps
// its bits, where gophertunnel passes it through float64, which turns a
// signalling NaN into a quiet one. It spares a store gophertunnel's
// reflection and the sort after it (docs/BENCHMARKS.md).
//
// It knows the Go types gophertunnel encodes by their exact type: those
// NBT decoding produces, bool, and slices of them. Anything else (another
// type, a list whose elements differ in tag, a string too long for NBT,
// deep nesting) makes it report false, and the caller encodes m the slow
// way, which gives the exact result or error gophertunnel gives.
// FuzzCanonicalNBT and a test on the real worlds compare the two.
func appendCanonicalFast(dst []byte, m map[string]any) ([]byte, bool) {
	return appendCompound(append(dst, tagCompound, 0, 0), m, 0)
}

// maxFastNBTDepth bounds the nesting appendCanonicalFast encodes itself.
const maxFastNBTDepth = 64

func appendCompound(dst []byte, m map[string]any, depth int) ([]byte, bool) {
	if depth > maxFastNBTDepth {
		return dst, false
	}
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		t, ok := nbtTag(v)
		if !ok || len(k) > math.MaxInt16 {
			return dst, false
		}
		dst = append(dst, t)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(k)))
		dst = append(dst, k...)
		if dst, ok = appendPayload(dst, v, depth+1); !ok {
			return dst, false
		}
	}
	return append(dst, tagEnd), true
}

// nbtTag returns the tag gophertunnel writes for v, if v is of a type
// appendPayload encodes.
func nbtTag(v any) (byte, bool) {
	switch v.(type) {
	case uint8, bool:
		return tagByte, true
	case int16:
		return tagShort, true
	case int32:
		return tagInt, true
	case int64:
		return tagLong, true
	case float32:
		return tagFloat, true
	case float64:
		return tagDouble, true
	case string:
		return tagString, true
	case map[string]any:
		return tagCompound, true
	case []any, []byte, []int16, []int32, []int64, []float32, []float64, []string, []map[string]any:
		return tagList, true
	}
	if t := reflect.TypeOf(v); t != nil && t.Kind() == reflect.Array {
		switch t.Elem().Kind() {
		case reflect.Uint8:
			return tagByteArray, true
		case reflect.Int32:
			return tagIntArray, true
		case reflect.Int64:
			return tagLongArray, true
		}
	}
	return 0, false
}

// appendPayload appends the payload of v, of a type nbtTag accepts.
func appendPayload(dst []byte, v any, depth int) ([]byte, bool) {
	le := binary.LittleEndian
	switch t := v.(type) {
	case uint8:
		return append(dst, t), true
	case bool:
		if t {
			return append(dst, 1), true
		}
		return append(dst, 0), true
	case int16:
		return le.AppendUint16(dst, uint16(t)), true
	case int32:
		return le.AppendUint32(dst, uint32(t)), true
	case int64:
		return le.AppendUint64(dst, uint64(t)), true
	case float32:
		return le.AppendUint32(dst, math.Float32bits(t)), true
	case float64:
		return le.AppendUint64(dst, math.Float64bits(t)), true
	case string:
		if len(t) > math.MaxInt16 {
			return dst, false
		}
		return append(le.AppendUint16(dst, uint16(len(t))), t...), true
	case map[string]any:
		return appendCompound(dst, t, depth)
	case []any:
		// gophertunnel takes the list's tag from its first element (an
		// empty list has tag End) and then writes every element as its
		// own type: only lists whose elements share that tag are
		// encoded here.
		tag := byte(tagEnd)
		if len(t) > 0 {
			var ok bool
			if tag, ok = nbtTag(t[0]); !ok {
				return dst, false
			}
		}
		return appendList(dst, tag, t, depth)
	case []byte:
		return append(listHeader(dst, tagByte, len(t)), t...), true
	case []int16:
		return appendFixed(dst, tagShort, t, func(b []byte, e int16) []byte { return le.AppendUint16(b, uint16(e)) })
	case []int32:
		return appendFixed(dst, tagInt, t, func(b []byte, e int32) []byte { return le.AppendUint32(b, uint32(e)) })
	case []int64:
		return appendFixed(dst, tagLong, t, func(b []byte, e int64) []byte { return le.AppendUint64(b, uint64(e)) })
	case []float32:
		return appendFixed(dst, tagFloat, t, func(b []byte, e float32) []byte { return le.AppendUint32(b, math.Float32bits(e)) })
	case []float64:
		return appendFixed(dst, tagDouble, t, func(b []byte, e float64) []byte { return le.AppendUint64(b, math.Float64bits(e)) })
	case []string:
		dst = listHeader(dst, tagString, len(t))
		for _, e := range t {
			var ok bool
			if dst, ok = appendPayload(dst, e, depth); !ok {
				return dst, false
			}
		}
		return dst, true
	case []map[string]any:
		dst = listHeader(dst, tagCompound, len(t))
		for _, e := range t {
			var ok bool
			if dst, ok = appendCompound(dst, e, depth+1); !ok {
				return dst, false
			}
		}
		return dst, true
	}
	rv := reflect.ValueOf(v)
	n := rv.Len()
	dst = le.AppendUint32(dst, uint32(int32(n)))
	for i := range n {
		switch e := rv.Index(i); e.Kind() {
		case reflect.Uint8:
			dst = append(dst, byte(e.Uint()))
		case reflect.Int32:
			dst = le.AppendUint32(dst, uint32(e.Int()))
		default:
			dst = le.AppendUint64(dst, uint64(e.Int()))
		}
	}
	return dst, true
}

// listHeader appends the header of a list of n elements of tag tag.
func listHeader(dst []byte, tag byte, n int) []byte {
	return binary.LittleEndian.AppendUint32(append(dst, tag), uint32(int32(n)))
}

// appendFixed appends a list of tag tag of numbers, each written by put.
func appendFixed[T any](dst []byte, tag byte, elems []T, put func([]byte, T) []byte) ([]byte, bool) {
	dst = listHeader(dst, tag, len(elems))
	for _, e := range elems {
		dst = put(dst, e)
	}
	return dst, true
}

// appendList appends a list of tag tag holding elems, each of which must
// have that tag.
func appendList(dst []byte, tag byte, elems []any, depth int) ([]byte, bool) {
	if depth > maxFastNBTDepth {
		return dst, false
	}
	dst = listHeader(dst, tag, len(elems))
	for _, e := range elems {
		if t, ok := nbtTag(e); !ok || t != tag {
			return dst, false
		}
		var ok bool
		if dst, ok = appendPayload(dst, e, depth+1); !ok {
			return dst, false
		}
	}
	return dst, true
}
