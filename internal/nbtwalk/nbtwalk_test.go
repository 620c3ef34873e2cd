package nbtwalk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// tree is a named root compound holding the tags given, already encoded.
func tree(tags ...[]byte) []byte {
	b := []byte{TagCompound, 0, 0}
	for _, t := range tags {
		b = append(b, t...)
	}
	return append(b, TagEnd)
}

// list is a named list tag of element type et declaring n elements,
// followed by the bytes given.
func list(et byte, n int32, rest ...byte) []byte {
	b := []byte{TagList, 1, 0, 'l', et}
	return append(binary.LittleEndian.AppendUint32(b, uint32(n)), rest...)
}

// Every length a decoder would allocate beyond the record is refused,
// however deep, and trees the decoder reads are walked to their end.
func TestCheck(t *testing.T) {
	good, err := nbt.MarshalEncoding(map[string]any{
		"name": "minecraft:chest", "items": []any{map[string]any{"Count": byte(1)}},
		"ints": []int32{1, 2}, "longs": []int64{3}, "bytes": []byte{4}, "f": float32(1), "d": 2.0,
		"nested": map[string]any{"s": []any{"a", "b"}, "short": int16(5), "long": int64(6)},
	}, nbt.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(append(bytes.Clone(good), good...)); err != nil {
		t.Fatalf("two good trees: %v", err)
	}
	w := &Walker{B: append(bytes.Clone(good), 9, 9)}
	if err := w.Tree(); err != nil || w.Off != len(good) {
		t.Fatalf("walked %d of %d bytes: %v", w.Off, len(good), err)
	}
	intArray := binary.LittleEndian.AppendUint32([]byte{TagIntArray, 1, 0, 'a'}, 1<<30)
	refused := map[string][]byte{
		"a list of compounds":    tree(list(TagCompound, 1<<31-1, TagEnd, TagEnd)),
		"a list of end tags":     tree(list(TagEnd, 1<<30)),
		"an int array":           tree(intArray),
		"a list inside a list":   tree(list(TagList, 1, append([]byte{TagLong}, binary.LittleEndian.AppendUint32(nil, 1<<28)...)...)),
		"the second tree":        append(bytes.Clone(good), tree(list(TagString, 1<<20))...),
		"a list after good tags": tree(good[3:len(good)-1], list(TagInt, 5, 1, 2, 3)),
	}
	for name, b := range refused {
		if err := Check(b); !errors.Is(err, ErrBeyondBytes) {
			t.Errorf("%s: %v, want it refused", name, err)
		}
	}
	// Where the bytes stop making sense the decoder decides: no refusal.
	for name, b := range map[string][]byte{
		"short":          good[:len(good)/2],
		"unknown tag":    tree([]byte{13, 0, 0}),
		"negative list":  tree(list(TagCompound, -1)),
		"empty":          nil,
		"a lone end tag": {TagEnd},
	} {
		if err := Check(b); err != nil {
			t.Errorf("%s: %v, want no refusal", name, err)
		}
	}
}

// The walk refuses only trees gophertunnel's decoder fails on, and takes
// the bytes it takes of every tree both read. A tree the walk accepts is
// safe to decode: every length on the decoder's way was checked.
func FuzzTree(f *testing.F) {
	good, err := nbt.MarshalEncoding(map[string]any{"name": "minecraft:stone", "states": map[string]any{"x": int32(1), "l": []any{int64(2)}}, "version": int32(1)}, nbt.LittleEndian)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(tree(list(TagCompound, 1<<31-1, TagEnd)))
	f.Add(tree(list(TagList, 2, TagByte, 1, 0, 0, 0, 7, TagEnd, 0, 0, 0, 0)))
	f.Fuzz(func(t *testing.T, b []byte) {
		w := &Walker{B: b}
		err := w.Tree()
		var beyond *BeyondBytesError
		if errors.As(err, &beyond) && AnyLengthOver(b, 1<<16) {
			return
		}
		buf := bytes.NewBuffer(b)
		var m map[string]any
		decoded := nbt.NewDecoderWithEncoding(buf, nbt.LittleEndian).Decode(&m) == nil
		switch {
		case beyond != nil && decoded:
			t.Fatalf("refused %v, but the decoder reads it", err)
		case err == nil && decoded && len(b)-buf.Len() != w.Off:
			t.Fatalf("the walk took %d bytes, the decoder %d", w.Off, len(b)-buf.Len())
		}
	})
}
