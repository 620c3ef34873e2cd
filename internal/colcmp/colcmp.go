package colcmp

import (
	"fmt"
	"math"
	"reflect"

	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Compare reports the first difference between two columns: every block of
// every layer, every biome, then the block entities, entities, scheduled
// updates and tick by deep equality (nil and empty lists are equal), with
// floating-point values compared bit for bit, so that a NaN stored and read
// back equals itself. Chunk.Equals is not used: it compares
// representations, and calls some identical columns different.
func Compare(a, b *chunk.Column) error {
	ca, cb := a.Chunk, b.Chunk
	if ca.Range() != cb.Range() {
		return fmt.Errorf("ranges %v and %v", ca.Range(), cb.Range())
	}
	r := ca.Range()
	layers := 0
	for i := range ca.Sub() {
		layers = max(layers, len(ca.Sub()[i].Layers()), len(cb.Sub()[i].Layers()))
	}
	for y := r[0]; y <= r[1]; y++ {
		for x := uint8(0); x < 16; x++ {
			for z := uint8(0); z < 16; z++ {
				for l := 0; l < layers; l++ {
					if va, vb := ca.Block(x, int16(y), z, uint8(l)), cb.Block(x, int16(y), z, uint8(l)); va != vb {
						return fmt.Errorf("block %d,%d,%d layer %d: %d against %d", x, y, z, l, va, vb)
					}
				}
				if va, vb := ca.Biome(x, int16(y), z), cb.Biome(x, int16(y), z); va != vb {
					return fmt.Errorf("biome %d,%d,%d: %d against %d", x, y, z, va, vb)
				}
			}
		}
	}
	if a.Tick != b.Tick {
		return fmt.Errorf("tick %d against %d", a.Tick, b.Tick)
	}
	if !equalLists(a.BlockEntities, b.BlockEntities) {
		return fmt.Errorf("block entities differ: %d against %d", len(a.BlockEntities), len(b.BlockEntities))
	}
	if !equalLists(a.Entities, b.Entities) {
		return fmt.Errorf("entities differ: %d against %d", len(a.Entities), len(b.Entities))
	}
	if !equalLists(a.ScheduledBlocks, b.ScheduledBlocks) {
		return fmt.Errorf("scheduled updates differ: %d against %d", len(a.ScheduledBlocks), len(b.ScheduledBlocks))
	}
	return nil
}

func equalLists[T any](a, b []T) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return equal(reflect.ValueOf(a), reflect.ValueOf(b))
}

// equal is reflect.DeepEqual (without its cycle detection: NBT values hold
// no cycles) except that floats are equal when their bits are: an entity's
// NaN motion, stored exactly, is not a difference.
func equal(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.Interface, reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equal(a.Elem(), b.Elem())
	case reflect.Slice, reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		if a.Kind() == reflect.Map {
			for it := a.MapRange(); it.Next(); {
				if v := b.MapIndex(it.Key()); !v.IsValid() || !equal(it.Value(), v) {
					return false
				}
			}
			return true
		}
		fallthrough
	case reflect.Array:
		for i := range a.Len() {
			if !equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !equal(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.Pointer() == b.Pointer()
	}
	return a.Equal(b)
}
