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
	// A chain of lists, each as long as the bytes after it allow: every
	// length fits the bytes left, not with its siblings' bytes owed. The
	// decoder allocated the square of the record's size for it.
	// 100 lists of lists, then 16 KiB of empty lists.
	chain := []byte{TagCompound, 0, 0, TagList, 0, 0}
	for range 100 {
		chain = append(chain, TagList, 0, 0, 0, 0) // its length set below
	}
	chain = append(chain, make([]byte, 16<<10)...)
	for off := 6; off+5 <= 6+100*5; off += 5 {
		binary.LittleEndian.PutUint32(chain[off+1:], uint32((len(chain)-off-5)/5))
	}
	refused["a chain of lists as long as the bytes allow"] = chain
	for name, b := range refused {
		if err := Check(b); !errors.Is(err, ErrBeyondBytes) {
			t.Errorf("%s: %v, want it refused", name, err)
		}
	}
	// Nesting deeper than the decoder follows compounds is refused, in
	// bounded depth: a few MiB of it overflowed the walk's stack.
	deep := bytes.Repeat([]byte{TagCompound, 0, 0}, 1<<20)
	if err := Check(deep); !errors.Is(err, ErrTooDeep) {
		t.Errorf("compounds nested 2^20 deep: %v, want ErrTooDeep", err)
	}
	lists := bytes.Repeat(binary.LittleEndian.AppendUint32([]byte{TagList}, 1), MaxDepth+1)
	if err := Check(append([]byte{TagList, 0, 0}, lists...)); !errors.Is(err, ErrTooDeep) {
		t.Errorf("lists nested %d deep: %v, want ErrTooDeep", MaxDepth+2, err)
	}
	// A tree cut short is never taken whole: refused where what is owed
	// no longer fits, else stopped.
	for n := range len(good) {
		if err := (&Walker{B: good[:n]}).Tree(); err == nil {
			t.Fatalf("the first %d of %d bytes walked as a tree", n, len(good))
		}
	}
	// Where the bytes stop making sense the decoder decides: no refusal.
	for name, b := range map[string][]byte{
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

// The walk refuses only trees gophertunnel's decoder fails on (but for
// lists nested too deep), and takes the bytes it takes of every tree both
// read. A tree the walk accepts is safe to decode: every length on the
// decoder's way was checked.
func FuzzTree(f *testing.F) {
	good, err := nbt.MarshalEncoding(map[string]any{"name": "minecraft:stone", "states": map[string]any{"x": int32(1), "l": []any{int64(2)}}, "version": int32(1)}, nbt.LittleEndian)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(tree(list(TagCompound, 1<<31-1, TagEnd)))
	f.Add(tree(list(TagList, 2, TagByte, 1, 0, 0, 0, 7, TagEnd, 0, 0, 0, 0)))
	f.Add(tree(list(TagInt, 2, 1, 2, 3, 4, 5)))                 // one int short
	f.Add(tree(list(TagList, 2, TagByte, 3, 0, 0, 0, 1, 2, 3))) // the second list missing
	f.Fuzz(func(t *testing.T, b []byte) {
		w := &Walker{B: b}
		err := w.Tree()
		refused := Refused(err)
		if refused {
			// The decoder reads on past the refused length, into elements
			// the walk never reached: an audited walk follows it there.
			audit := &Walker{B: b, Audit: true}
			if _ = audit.Tree(); audit.Declared > 1<<16 {
				return
			}
		}
		buf := bytes.NewBuffer(b)
		var m map[string]any
		decoded := nbt.NewDecoderWithEncoding(buf, nbt.LittleEndian).Decode(&m) == nil
		switch {
		case refused && decoded && !errors.Is(err, ErrTooDeep):
			t.Fatalf("refused %v, but the decoder reads it", err)
		case err == nil && decoded && len(b)-buf.Len() != w.Off:
			t.Fatalf("the walk took %d bytes, the decoder %d", w.Off, len(b)-buf.Len())
		}
	})
}
