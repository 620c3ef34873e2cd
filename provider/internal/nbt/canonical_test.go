package nbt

import (
	"bytes"
	"testing"

	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// The same map always encodes to the same bytes, and decodes back equal.
func TestCanonicalNBT(t *testing.T) {
	m := map[string]any{"id": "Chest", "x": int32(1), "y": int32(2), "z": int32(3), "b": uint8(1), "s": int16(-4),
		"l": int64(1 << 40), "f": float32(1.5), "d": 2.25, "list": []any{map[string]any{"k": "v", "a": int32(1)}},
		"nested": map[string]any{"q": int32(1), "p": []any{int32(1), int32(2)}}, "ints": [2]int32{1, 2}, "bytes": [3]byte{1, 2, 3}}
	var first []byte
	for i := 0; i < 50; i++ {
		raw, err := nbt.MarshalEncoding(m, nbt.LittleEndian)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Canonical(raw)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = c
		} else if !bytes.Equal(first, c) {
			t.Fatal("canonical encoding differs between calls")
		}
	}
	var back map[string]any
	if err := nbt.UnmarshalEncoding(first, &back, nbt.LittleEndian); err != nil {
		t.Fatal(err)
	}
	if back["nested"].(map[string]any)["q"] != int32(1) || back["id"] != "Chest" || len(back) != len(m) {
		t.Fatalf("round trip: %v", back)
	}
}

func FuzzCanonicalNBT(f *testing.F) {
	raw, _ := nbt.MarshalEncoding(map[string]any{"a": int32(1), "b": []any{"x"}, "c": map[string]any{"d": int64(2)}}, nbt.LittleEndian)
	f.Add(raw)
	rich, _ := nbt.MarshalEncoding(map[string]any{
		"byte": uint8(1), "short": int16(-2), "float": float32(1.5), "double": float64(-2.25), "string": "chest",
		"bytes": [3]byte{1, 2, 3}, "ints": [2]int32{-1, 7}, "longs": [1]int64{1 << 40},
		"byteList": []byte{4, 5}, "intList": []int32{6}, "longList": []int64{7}, "empty": []any{},
		"items": []any{map[string]any{"Name": "minecraft:stick", "Count": uint8(3)}}, "names": []any{"a", "b"},
		"nested": []any{[]any{int16(1)}, []any{int16(2)}},
	}, nbt.LittleEndian)
	f.Add(rich)
	f.Fuzz(func(t *testing.T, b []byte) {
		// Decode never allocates more than the bytes justify, whatever
		// they are.
		ours, oerr := Decode(b)
		c, err := Canonical(b)
		if err != nil {
			return
		}
		// On well-formed NBT (what the canonicaliser accepts, and so what
		// gophertunnel's decoder can be given without exhausting memory),
		// Decode gives exactly what gophertunnel's decoder gives.
		var m map[string]any
		gerr := nbt.UnmarshalEncoding(b, &m, nbt.LittleEndian)
		if (gerr == nil) != (oerr == nil) {
			t.Fatalf("gophertunnel says %v, Decode %v", gerr, oerr)
		}
		if gerr == nil && !EqualValue(m, ours) {
			t.Fatalf("Decode gives %#v, gophertunnel %#v", ours, m)
		}
		// appendCanonicalFast encodes what was decoded exactly as the
		// slow way does.
		if oerr == nil {
			agreeEncoding(t, "decoded", ours)
		}
		again, err := Canonical(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("canonical form is not stable: %v", err)
		}
		if len(c) != len(b) {
			t.Fatalf("canonical form changed the length: %d -> %d", len(b), len(c))
		}
	})
}
