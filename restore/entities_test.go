package restore

import (
	"math"
	"testing"
)

// equalNBT compares lists of either kind element by element, floats by
// bits, and tells the two list types apart (issue 37: the two list cases
// share one helper, a pair duplicates found).
func TestEqualNBTLists(t *testing.T) {
	nan := math.Float32frombits(0x7fc00001)
	items := []map[string]any{{"Count": uint8(1), "Name": "minecraft:stone"}, {"Count": uint8(2), "f": nan}}
	for _, c := range []struct {
		a, b any
		want bool
	}{
		{items, []map[string]any{{"Count": uint8(1), "Name": "minecraft:stone"}, {"Count": uint8(2), "f": nan}}, true},
		{items, []map[string]any{{"Count": uint8(1), "Name": "minecraft:stone"}, {"Count": uint8(3), "f": nan}}, false},
		{items, items[:1], false},
		{items, []any{items[0], items[1]}, false},
		{[]any{int32(1), "a", []any{float32(0.5)}}, []any{int32(1), "a", []any{float32(0.5)}}, true},
		{[]any{int32(1), "a", []any{float32(0.5)}}, []any{int32(1), "a", []any{float32(-0.5)}}, false},
		{[]any{}, []any(nil), true},
		{[]any{int32(1)}, []int32{1}, false},
	} {
		if got := equalNBT(c.a, c.b); got != c.want {
			t.Errorf("equalNBT(%v, %v) = %v", c.a, c.b, got)
		}
	}
}
