package nbt

import (
	"bytes"
	"maps"
	"math"
	"reflect"
	"slices"

	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Block entities and entities carry NBT decoded into Go values: maps of
// any, lists, numbers, strings and arrays. A snapshot needs deep copies of
// them (the World keeps mutating the column it stored), and the encoder
// needs to know whether they changed since the last store, so it can reuse
// their encoded bytes instead of encoding NBT again.

func CloneBlockEntities(in []chunk.BlockEntity) []chunk.BlockEntity {
	if in == nil {
		return nil
	}
	out := make([]chunk.BlockEntity, len(in))
	for i, be := range in {
		out[i] = chunk.BlockEntity{Pos: be.Pos, Data: cloneMap(be.Data)}
	}
	return out
}

func CloneEntities(in []chunk.Entity) []chunk.Entity {
	if in == nil {
		return nil
	}
	out := make([]chunk.Entity, len(in))
	for i, e := range in {
		out[i] = chunk.Entity{ID: e.ID, Data: cloneMap(e.Data)}
	}
	return out
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	// maps.Clone copies the table without hashing a key again; only the
	// mutable values (compounds, lists, arrays) need copies of their own.
	out := maps.Clone(m)
	for k, v := range out {
		if !immutable(v) {
			out[k] = cloneValue(v)
		}
	}
	return out
}

// immutable reports whether v is one of the NBT values that cannot be
// changed in place (a number or a string), which copies may share.
func immutable(v any) bool {
	switch v.(type) {
	case nil, bool, uint8, int8, int16, int32, int64, float32, float64, string:
		return true
	}
	return false
}

// immutableKind reports whether values of kind k hold no reference to
// memory that could be changed in place (numbers, booleans, strings).
func immutableKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	}
	return false
}

// cloneValue deep-copies the values NBT decoding produces; anything else
// that is mutable is copied through reflection.
func cloneValue(v any) any {
	if immutable(v) {
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		return cloneMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = cloneValue(e)
		}
		return out
	case []byte:
		return slices.Clone(t)
	case []int32:
		return slices.Clone(t)
	case []int64:
		return slices.Clone(t)
	case []float32: // what Dragonfly's entities encode positions and motion as
		return slices.Clone(t)
	case []string:
		return slices.Clone(t)
	case []map[string]any: // Dragonfly's lists of compounds (items, effects)
		if t == nil {
			return t
		}
		out := make([]map[string]any, len(t))
		for i, m := range t {
			out[i] = cloneMap(m)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice:
		if rv.IsNil() {
			return v
		}
		out := reflect.MakeSlice(rv.Type(), rv.Len(), rv.Len())
		if immutableKind(rv.Type().Elem().Kind()) {
			reflect.Copy(out, rv)
			return out.Interface()
		}
		for i := 0; i < rv.Len(); i++ {
			out.Index(i).Set(reflect.ValueOf(cloneValue(rv.Index(i).Interface())).Convert(rv.Type().Elem()))
		}
		return out.Interface()
	case reflect.Array:
		if immutableKind(rv.Type().Elem().Kind()) {
			return v // an array held in an interface cannot be changed in place
		}
		out := reflect.New(rv.Type()).Elem()
		for i := 0; i < rv.Len(); i++ {
			out.Index(i).Set(reflect.ValueOf(cloneValue(rv.Index(i).Interface())).Convert(rv.Type().Elem()))
		}
		return out.Interface()
	case reflect.Map:
		if rv.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(rv.Type(), rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), reflect.ValueOf(cloneValue(iter.Value().Interface())).Convert(rv.Type().Elem()))
		}
		return out.Interface()
	}
	return v
}

// EqualBlockEntities reports whether a and b would encode to the same
// bytes. It may call equal lists different (then they are encoded again),
// never the reverse.
func EqualBlockEntities(a, b []chunk.BlockEntity) bool {
	return slices.EqualFunc(a, b, func(x, y chunk.BlockEntity) bool { return x.Pos == y.Pos && equalMap(x.Data, y.Data) })
}

// EqualEntities is EqualBlockEntities for entities.
func EqualEntities(a, b []chunk.Entity) bool {
	return slices.EqualFunc(a, b, func(x, y chunk.Entity) bool { return x.ID == y.ID && equalMap(x.Data, y.Data) })
}

func equalMap(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !EqualValue(va, vb) {
			return false
		}
	}
	return true
}

// EqualValue compares NBT values by type and exact value: int32(1) and
// int64(1) differ, and so do 0.0 and -0.0 (which reflect.DeepEqual calls
// equal although they encode differently). Types NBT decoding does not
// produce fall back to reflect.DeepEqual.
func EqualValue(a, b any) bool {
	switch x := a.(type) {
	case uint8:
		y, ok := b.(uint8)
		return ok && x == y
	case int16:
		y, ok := b.(int16)
		return ok && x == y
	case int32:
		y, ok := b.(int32)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case string:
		y, ok := b.(string)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && equalMap(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !EqualValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case []int32:
		y, ok := b.([]int32)
		return ok && slices.Equal(x, y)
	case []int64:
		y, ok := b.([]int64)
		return ok && slices.Equal(x, y)
	}
	return reflect.DeepEqual(a, b)
}
