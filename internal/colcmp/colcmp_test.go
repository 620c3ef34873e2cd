package colcmp

import (
	"math"
	"testing"

	_ "github.com/df-mc/dragonfly/server/block" // registers the blocks
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

func column(motion float32, extra map[string]any) *chunk.Column {
	world.DefaultBlockRegistry.Finalize()
	data := map[string]any{
		"identifier": "minecraft:item",
		"Motion":     []any{motion, float32(0), float32(0)},
		"Item":       map[string]any{"Name": "minecraft:apple", "Count": byte(1)},
	}
	for k, v := range extra {
		data[k] = v
	}
	return &chunk.Column{
		Chunk:         chunk.New(world.DefaultBlockRegistry, world.Overworld.Range()),
		Entities:      []chunk.Entity{{ID: 7, Data: data}},
		BlockEntities: []chunk.BlockEntity{{Pos: cube.Pos{1, 2, 3}, Data: map[string]any{"id": "Chest", "Items": []any{}}}},
	}
}

// A NaN read back with the same bits is the same value; anything else that
// differs, in value or in type, is a difference.
func TestCompareNBT(t *testing.T) {
	nan := math.Float32frombits(0x7fc00001)
	if err := Compare(column(nan, nil), column(nan, nil)); err != nil {
		t.Fatalf("the same NaN compared different: %v", err)
	}
	for name, b := range map[string]*chunk.Column{
		"another NaN":      column(math.Float32frombits(0x7fc00002), nil),
		"another value":    column(1, nil),
		"an extra key":     column(nan, map[string]any{"Age": int16(3)}),
		"another type":     column(nan, map[string]any{"Item": map[string]any{"Name": "minecraft:apple", "Count": int32(1)}}),
		"a nil list":       column(nan, map[string]any{"Motion": []any(nil)}),
		"a shorter list":   column(nan, map[string]any{"Motion": []any{nan}}),
		"a different item": column(nan, map[string]any{"Item": map[string]any{"Name": "minecraft:stick", "Count": byte(1)}}),
	} {
		a := column(nan, nil)
		if name == "an extra key" {
			a = column(nan, map[string]any{"Age": int16(4)})
		}
		if err := Compare(a, b); err == nil {
			t.Errorf("%s: compared equal", name)
		}
	}
}
