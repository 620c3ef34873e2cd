package nbt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// agree checks that Decode and gophertunnel's decoder agree on b: both
// fail, or both give equal values.
func agree(t *testing.T, what string, b []byte) {
	t.Helper()
	var want map[string]any
	werr := nbt.UnmarshalEncoding(b, &want, nbt.LittleEndian)
	got, err := Decode(b)
	if (werr == nil) != (err == nil) {
		t.Fatalf("%s: gophertunnel says %v, Decode %v", what, werr, err)
	}
	if werr == nil && !EqualValue(want, got) {
		t.Fatalf("%s: Decode gives %#v, gophertunnel %#v", what, got, want)
	}
}

// realWorldNBT returns the NBT of every block entity and entity of the
// real worlds, by world; it fails if there is none.
func realWorldNBT(t testing.TB) map[string][]map[string]any {
	out, n := map[string][]map[string]any{}, 0
	for _, w := range worldtest.Worlds(t) {
		cols, err := worldtest.ReadAll(worldtest.UnpackTemp(t, w), world.DefaultBlockRegistry)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			for _, be := range c.Col.BlockEntities {
				out[worldtest.Name(w)] = append(out[worldtest.Name(w)], be.Data)
			}
			for _, e := range c.Col.Entities {
				out[worldtest.Name(w)] = append(out[worldtest.Name(w)], e.Data)
			}
			n += len(c.Col.BlockEntities) + len(c.Col.Entities)
		}
	}
	if n == 0 {
		t.Fatal("no block entities or entities in the real worlds")
	}
	return out
}

// Decode decodes every block entity and entity of the real worlds as
// gophertunnel does, and refuses what gophertunnel refuses.
func TestDecodeNBTMatchesGophertunnel(t *testing.T) {
	for name, all := range realWorldNBT(t) {
		for _, m := range all {
			b, err := nbt.MarshalEncoding(m, nbt.LittleEndian)
			if err != nil {
				t.Fatal(err)
			}
			agree(t, name, b)
		}
	}

	// gophertunnel's quirks: strings of 32 KiB or more are refused, and a
	// list of bytes, ints or longs never closes its nesting level, so 600
	// of them in one compound are too deep.
	long, _ := nbt.MarshalEncoding(map[string]any{"s": string(bytes.Repeat([]byte("a"), 30000))}, nbt.LittleEndian)
	agree(t, "30000-byte string", long)
	// A compound holding a string of 40,000 bytes, written by hand (the
	// encoder refuses it).
	tooLong := []byte{tagCompound, 0, 0, tagString, 1, 0, 's', 0, 0}
	binary.LittleEndian.PutUint16(tooLong[7:], 40000)
	tooLong = append(append(tooLong, bytes.Repeat([]byte("a"), 40000)...), tagEnd)
	if _, err := Canonical(tooLong); err != nil {
		t.Fatal(err)
	}
	agree(t, "40000-byte string", tooLong)
	if _, err := Decode(tooLong); err == nil {
		t.Fatal("a 40000-byte string decoded; gophertunnel refuses it")
	}
	lists := map[string]any{}
	for i := range 600 {
		lists[string(rune('a'+i%26))+string(rune('a'+i/26))] = []byte{1}
	}
	deep, _ := nbt.MarshalEncoding(lists, nbt.LittleEndian)
	agree(t, "600 byte lists", deep)
	if _, err := Decode(deep); err == nil {
		t.Fatal("600 byte lists decoded; gophertunnel refuses them")
	}
}

// A damaged length never makes Decode allocate what it declares (the
// crash gophertunnel's decoder has): a list claiming 1.7 billion compounds
// in 13 bytes is refused.
func TestDecodeNBTBoundsLengths(t *testing.T) {
	for _, b := range [][]byte{
		{tagCompound, 0, 0, tagList, 1, 0, 'l', tagCompound, 0x69, 0x69, 0x69, 0x69, tagEnd},
		{tagCompound, 0, 0, tagIntArray, 1, 0, 'a', 0x69, 0x69, 0x69, 0x69, tagEnd},
		{tagCompound, 0, 0, tagList, 1, 0, 'l', tagInt, 0x69, 0x69, 0x69, 0x69, tagEnd},
	} {
		if _, err := Decode(b); err == nil {
			t.Fatalf("%x decoded", b)
		}
	}
	// Well-formed but 100,000 lists deep: refused, so recursion is bounded.
	deep := []byte{tagCompound, 0, 0, tagList, 1, 0, 'l'}
	for range 100000 {
		deep = append(deep, tagList, 1, 0, 0, 0)
	}
	deep = append(deep, tagEnd, 0, 0, 0, 0, tagEnd)
	if _, err := Decode(deep); err == nil {
		t.Fatal("100,000 nested lists decoded")
	}
	// 100 lists, each as long as the bytes after it allow, then 16 KiB of
	// empty lists: every length fits the bytes left, none with the
	// elements the enclosing lists still owe. Refused before it allocates
	// the 100 lists (5 MB): what is allocated stays near the record's size.
	chain := []byte{tagCompound, 0, 0, tagList, 0, 0}
	for range 100 {
		chain = append(chain, tagList, 0, 0, 0, 0)
	}
	chain = append(chain, make([]byte, 16<<10)...)
	for off := 6; off+5 <= 6+100*5; off += 5 {
		binary.LittleEndian.PutUint32(chain[off+1:], uint32((len(chain)-off-5)/5))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Decode(chain)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a chain of lists longer than their bytes decoded")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("allocated %d bytes for a %d-byte record", n, len(chain))
	}
}

// BenchmarkDecodeNBT decodes every block entity and entity of the real
// worlds, as a cold load of their columns does.
func BenchmarkDecodeNBT(b *testing.B) {
	var all [][]byte
	size := 0
	for _, ms := range realWorldNBT(b) {
		for _, m := range ms {
			enc, ok := appendCanonicalFast(nil, m)
			if !ok {
				b.Fatal("not encodable in one pass")
			}
			all = append(all, enc)
			size += len(enc)
		}
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, enc := range all {
			if _, err := Decode(enc); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// The intern table returns each string's own value, also when goroutines
// race for the same slots with different strings.
func TestInternTable(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20000 {
				want := fmt.Sprintf("key-%d", (i*7+g)%3000)
				if got := interned.get([]byte(want)); got != want {
					t.Errorf("got %q, want %q", got, want)
					return
				}
				if got := interned.getAny([]byte(want)); got != any(want) {
					t.Errorf("got %v, want %q", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	long := bytes.Repeat([]byte("x"), maxInterned+1)
	if interned.get(long) != string(long) || interned.get(nil) != "" ||
		interned.getAny(long) != any(string(long)) || interned.getAny(nil) != any("") {
		t.Fatal("strings outside the interned range changed")
	}
	// A string value the table holds costs no allocation, boxed or not.
	p := []byte("minecraft:chest")
	interned.getAny(p)
	if n := testing.AllocsPerRun(100, func() { interned.getAny(p); interned.get(p) }); n != 0 {
		t.Fatalf("%v allocations for an interned string", n)
	}
}
