package nbt

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// agreeEncoding fails unless appendCanonicalFast either declines m or gives
// exactly what gophertunnel's encoder and Canonical give; it reports
// whether it encoded m itself.
func agreeEncoding(t testing.TB, what string, m map[string]any) bool {
	t.Helper()
	fast, ok := appendCanonicalFast(nil, m)
	if !ok {
		return false
	}
	// Its bytes decode, and the values decoded encode to them again.
	back, err := Decode(fast)
	if err != nil {
		t.Fatalf("%s: appendCanonicalFast's bytes do not decode: %v", what, err)
	}
	if again, ok := appendCanonicalFast(nil, back); !ok || !bytes.Equal(again, fast) {
		t.Fatalf("%s: appendCanonicalFast's bytes decode to values that encode differently", what)
	}
	// gophertunnel passes a float32 through float64, which quiets a
	// signalling NaN; with those quieted, the two ways agree byte for byte.
	slow, err := slowCanonical(m)
	if err != nil {
		t.Fatalf("%s: appendCanonicalFast encoded what gophertunnel refuses: %v", what, err)
	}
	quiet, _ := appendCanonicalFast(nil, quietNaNs(m).(map[string]any))
	if !bytes.Equal(quiet, slow) {
		t.Fatalf("%s: appendCanonicalFast gives\n%x\ngophertunnel and Canonical\n%x", what, quiet, slow)
	}
	return true
}

// quietNaNs returns a copy of v with every float32 passed through float64,
// as gophertunnel's encoder passes it.
func quietNaNs(v any) any {
	switch t := v.(type) {
	case float32:
		return float32(widen(t))
	case []float32:
		out := make([]float32, len(t))
		for i, f := range t {
			out[i] = float32(widen(f))
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = quietNaNs(e)
		}
		return out
	case []map[string]any:
		out := make([]map[string]any, len(t))
		for i, e := range t {
			out[i] = quietNaNs(e).(map[string]any)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = quietNaNs(e)
		}
		return out
	}
	return v
}

//go:noinline
func widen(f float32) float64 { return float64(f) }

// appendCanonicalFast encodes every block entity and entity of the real
// worlds itself, exactly as the slow way does, and every Go type it knows.
func TestAppendCanonicalNBTMatchesSlowWay(t *testing.T) {
	for name, all := range realWorldNBT(t) {
		for _, m := range all {
			if !agreeEncoding(t, name, m) {
				t.Fatalf("%s: a block entity or entity took the slow way: %#v", name, m)
			}
		}
	}
	every := map[string]any{
		"byte": uint8(200), "bool": true, "false": false, "short": int16(-2), "int": int32(-3), "long": int64(1) << 40,
		"float": float32(math.Copysign(0, -1)), "double": 2.5, "string": "chest", "empty": "",
		"bytes": [3]byte{1, 2, 3}, "ints": [2]int32{-1, 7}, "longs": [1]int64{-1}, "noBytes": [0]byte{},
		"byteList": []byte{4, 5}, "shorts": []int16{-1}, "intList": []int32{6}, "longList": []int64{7},
		"floats": []float32{1, 2}, "doubles": []float64{3}, "strings": []string{"a", ""}, "compounds": []map[string]any{{"b": uint8(1), "a": uint8(2)}},
		"anyEmpty": []any{}, "anyNil": []any(nil), "anyBools": []any{true, uint8(3)}, "nested": []any{[]any{int16(1)}, []int32{2}},
		"items":       []any{map[string]any{"Name": "minecraft:stick", "Count": uint8(3)}, map[string]any{}},
		"sub":         map[string]any{"z": int32(1), "a": map[string]any{"y": "x"}, "": uint8(0)},
		"long string": strings.Repeat("é", 16383),
	}
	if !agreeEncoding(t, "every type", every) {
		t.Fatal("every type took the slow way")
	}
	// What it declines, the slow way handles (or refuses) as before.
	type named int32
	for what, m := range map[string]map[string]any{
		"named type":         {"n": named(1)},
		"mixed list":         {"l": []any{int32(1), "x"}},
		"string too long":    {"s": strings.Repeat("a", 1<<15)},
		"name too long":      {strings.Repeat("a", 1<<15): uint8(1)},
		"unsupported type":   {"u": uint32(1)},
		"list of named type": {"l": []named{1}},
	} {
		if agreeEncoding(t, what, m) {
			t.Fatalf("%s: encoded by appendCanonicalFast", what)
		}
	}
}
