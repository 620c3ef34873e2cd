package nbt

import (
	"math"
	"reflect"
	"testing"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// EqualValue may only call values equal that encode to the same NBT: the
// encoder then reuses the old bytes.
func TestEqualValue(t *testing.T) {
	chest := func() map[string]any {
		return map[string]any{
			"id": "Chest", "x": int32(1), "y": int32(64), "z": int32(-3), "Findable": uint8(0),
			"Items": []any{
				map[string]any{"Name": "minecraft:diamond", "Count": uint8(3), "Slot": uint8(0), "Damage": int16(0)},
				map[string]any{"Name": "minecraft:stick", "Count": uint8(64), "Slot": uint8(1), "Damage": int16(0)},
			},
			"Pos": []float32{1.5, 64, -2.5}, "Motion": []any{float64(0), float64(0), float64(0)},
			"Bytes": []byte{1, 2}, "Ints": []int32{7}, "Longs": []int64{8}, "UniqueID": int64(42),
		}
	}
	if !EqualValue(chest(), chest()) {
		t.Fatal("equal compounds called different")
	}
	differ := []struct {
		name string
		edit func(m map[string]any)
	}{
		{"int32 becomes int64", func(m map[string]any) { m["x"] = int64(1) }},
		{"value changes", func(m map[string]any) { m["y"] = int32(65) }},
		{"entry added", func(m map[string]any) { m["CustomName"] = "box" }},
		{"entry removed", func(m map[string]any) { delete(m, "Findable") }},
		{"nested item count", func(m map[string]any) { m["Items"].([]any)[1].(map[string]any)["Count"] = uint8(63) }},
		{"list shortened", func(m map[string]any) { m["Items"] = m["Items"].([]any)[:1] }},
		{"zero becomes minus zero", func(m map[string]any) { m["Motion"].([]any)[0] = math.Copysign(0, -1) }},
		{"typed slice (reflect path)", func(m map[string]any) { m["Pos"].([]float32)[0] = 2 }},
		{"byte array", func(m map[string]any) { m["Bytes"] = []byte{1, 3} }},
		{"int array", func(m map[string]any) { m["Ints"] = []int32{7, 7} }},
		{"long array", func(m map[string]any) { m["Longs"] = []int64{9} }},
	}
	for _, d := range differ {
		m := chest()
		d.edit(m)
		if EqualValue(chest(), m) || EqualValue(m, chest()) {
			t.Errorf("%s: called equal", d.name)
		}
		// Whatever EqualValue calls equal, the NBT encoder writes the same.
		a, _ := nbt.MarshalEncoding(chest(), nbt.LittleEndian)
		b, _ := nbt.MarshalEncoding(m, nbt.LittleEndian)
		ca, _ := Canonical(a)
		cb, _ := Canonical(b)
		if reflect.DeepEqual(ca, cb) {
			t.Errorf("%s: the edit does not change the encoding, the test proves nothing", d.name)
		}
	}

	bes := []chunk.BlockEntity{{Pos: cube.Pos{1, 64, -3}, Data: chest()}}
	if !EqualBlockEntities(bes, CloneBlockEntities(bes)) {
		t.Fatal("a block entity differs from its clone")
	}
	moved := CloneBlockEntities(bes)
	moved[0].Pos[1]++
	if EqualBlockEntities(bes, moved) {
		t.Fatal("moved block entity called equal")
	}
	es := []chunk.Entity{{ID: 5, Data: chest()}}
	other := CloneEntities(es)
	other[0].ID = 6
	if !EqualEntities(es, CloneEntities(es)) || EqualEntities(es, other) || EqualEntities(es, nil) {
		t.Fatal("entity equality wrong")
	}
}

// cloneMap's copy equals its original and shares nothing that can change:
// editing any compound, list or array inside the copy leaves the original
// as it was.
func TestCloneMapDeep(t *testing.T) {
	orig := func() map[string]any {
		return map[string]any{
			"id": "Chest", "x": int32(1), "Findable": uint8(0), "UniqueID": int64(42),
			"Items": []any{
				map[string]any{"Name": "minecraft:diamond", "Count": uint8(3), "tag": map[string]any{"Damage": int32(0)}},
			},
			"Pos": []float32{1.5, 64, -2.5}, "Bytes": []byte{1, 2}, "Ints": []int32{7}, "Longs": []int64{8},
			"Nested": map[string]any{"Deeper": map[string]any{"v": int16(1)}, "List": []any{int32(1), int32(2)}},
			// Typed lists, as Dragonfly's own NBT encoding makes them
			// (an inventory is a []map[string]any).
			"Inventory": []map[string]any{{"Slot": uint8(0), "tag": map[string]any{"Name": "a"}}, nil},
			"Names":     []string{"a", "b"},
			"Lists":     [][]int32{{1}, {2, 3}},
			// Issue 42: lists of numbers of other types are copied whole,
			// arrays of slices deeply.
			"Shorts":  []int16{1, 2},
			"Doubles": []float64{0.5},
			"Arrays":  [2][]int32{{1}, {2}},
			"Fixed":   [3]int32{1, 2, 3},
		}
	}
	edits := []func(m map[string]any){
		func(m map[string]any) { m["x"] = int32(2) },
		func(m map[string]any) { m["Items"].([]any)[0].(map[string]any)["Count"] = uint8(4) },
		func(m map[string]any) {
			m["Items"].([]any)[0].(map[string]any)["tag"].(map[string]any)["Damage"] = int32(5)
		},
		func(m map[string]any) { m["Items"].([]any)[0] = "replaced" },
		func(m map[string]any) { m["Pos"].([]float32)[0] = 9 },
		func(m map[string]any) { m["Bytes"].([]byte)[0] = 9 },
		func(m map[string]any) { m["Ints"].([]int32)[0] = 9 },
		func(m map[string]any) { m["Longs"].([]int64)[0] = 9 },
		func(m map[string]any) { m["Nested"].(map[string]any)["Deeper"].(map[string]any)["v"] = int16(2) },
		func(m map[string]any) { m["Nested"].(map[string]any)["List"].([]any)[1] = int32(3) },
		func(m map[string]any) { delete(m["Nested"].(map[string]any), "List") },
		func(m map[string]any) { m["Inventory"].([]map[string]any)[0]["Slot"] = uint8(1) },
		func(m map[string]any) {
			m["Inventory"].([]map[string]any)[0]["tag"].(map[string]any)["Name"] = "b"
		},
		func(m map[string]any) { m["Inventory"].([]map[string]any)[1] = map[string]any{} },
		func(m map[string]any) { m["Names"].([]string)[0] = "c" },
		func(m map[string]any) { m["Lists"].([][]int32)[1][0] = 9 },
		func(m map[string]any) { m["Shorts"].([]int16)[0] = 9 },
		func(m map[string]any) { m["Doubles"].([]float64)[0] = 9 },
		func(m map[string]any) { m["Arrays"].([2][]int32)[1][0] = 9 },
	}
	for i, edit := range edits {
		src := orig()
		cp := cloneMap(src)
		if !EqualValue(cp, src) {
			t.Fatalf("edit %d: the copy differs from its original before any edit", i)
		}
		edit(cp)
		if !EqualValue(src, orig()) {
			t.Fatalf("edit %d: editing the copy changed the original", i)
		}
	}
}
