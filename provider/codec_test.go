package provider

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// permuted is a registry whose runtime ids are a permutation of another's:
// what an upgrade of Dragonfly (or another set of plugin blocks) does to ids.
type permuted struct {
	chunk.BlockRegistry
	perm, inv []uint32
}

func newPermuted(br chunk.BlockRegistry, seed uint64) *permuted {
	n := br.BlockCount()
	p := &permuted{BlockRegistry: br, perm: make([]uint32, n), inv: make([]uint32, n)}
	for i, v := range rand.New(rand.NewPCG(seed, 1)).Perm(n) {
		p.perm[i], p.inv[v] = uint32(v), uint32(i)
	}
	return p
}

func (p *permuted) AirRuntimeID() uint32 { return p.perm[p.BlockRegistry.AirRuntimeID()] }
func (p *permuted) RuntimeIDToState(rid uint32) (string, map[string]any, bool) {
	if int(rid) >= len(p.inv) {
		return "", nil, false
	}
	return p.BlockRegistry.RuntimeIDToState(p.inv[rid])
}
func (p *permuted) StateToRuntimeID(name string, props map[string]any) (uint32, bool) {
	rid, ok := p.BlockRegistry.StateToRuntimeID(name, props)
	if !ok {
		return 0, false
	}
	return p.perm[rid], true
}
func (p *permuted) FilteringBlock(rid uint32) uint8 {
	return p.BlockRegistry.FilteringBlock(p.inv[rid])
}
func (p *permuted) LightBlock(rid uint32) uint8 { return p.BlockRegistry.LightBlock(p.inv[rid]) }
func (p *permuted) RandomTickBlock(rid uint32) bool {
	return p.BlockRegistry.RandomTickBlock(p.inv[rid])
}
func (p *permuted) NBTBlock(rid uint32) bool { return p.BlockRegistry.NBTBlock(p.inv[rid]) }
func (p *permuted) LiquidDisplacingBlock(rid uint32) bool {
	return p.BlockRegistry.LiquidDisplacingBlock(p.inv[rid])
}
func (p *permuted) LiquidBlock(rid uint32) bool { return p.BlockRegistry.LiquidBlock(p.inv[rid]) }

// Columns written under one registry load with the right blocks under
// another whose runtime ids have all moved.
func TestRuntimeIDsMove(t *testing.T) {
	br := world.DefaultBlockRegistry
	br.Finalize()
	d := newDictionary()
	d.setRegistry(br)
	col := worldtest.Synthetic(11, world.Overworld, br)
	enc, err := d.encodeColumn(col, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := enc.rec
	for _, e := range d.entries {
		e.persisted = true
	}
	moved := newPermuted(br, 5)
	d.setRegistry(moved)
	got, err := d.decodeColumn(rec, world.Overworld.Range())
	if err != nil {
		t.Fatal(err)
	}
	r := world.Overworld.Range()
	for y := r[0]; y <= r[1]; y += 3 {
		for x := uint8(0); x < 16; x++ {
			for z := uint8(0); z < 16; z += 5 {
				for l := uint8(0); l < 2; l++ {
					if want := moved.perm[col.Chunk.Block(x, int16(y), z, l)]; got.Chunk.Block(x, int16(y), z, l) != want {
						t.Fatalf("block %d,%d,%d/%d: %d, want %d", x, y, z, l, got.Chunk.Block(x, int16(y), z, l), want)
					}
				}
			}
		}
	}
	for i, s := range col.ScheduledBlocks {
		if got.ScheduledBlocks[i].Block != moved.perm[s.Block] {
			t.Fatal("scheduled update block not remapped")
		}
	}
}

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
		c, err := canonicalNBT(raw)
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
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := canonicalNBT(b)
		if err != nil {
			return
		}
		again, err := canonicalNBT(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("canonical form is not stable: %v", err)
		}
		if len(c) != len(b) {
			t.Fatalf("canonical form changed the length: %d -> %d", len(b), len(c))
		}
	})
}

// FuzzDecodeColumn: any bytes either decode or fail with ErrColumnCorrupt
// or ErrUnknownState; never a panic. What decodes re-encodes to a record
// that decodes to the same column.
func FuzzDecodeColumn(f *testing.F) {
	br := world.DefaultBlockRegistry
	br.Finalize()
	d := newDictionary()
	d.setRegistry(br)
	for i := uint64(0); i < 3; i++ {
		enc, err := d.encodeColumn(worldtest.Synthetic(i, world.Overworld, br), nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc.rec)
	}
	empty, _ := d.encodeColumn(&chunk.Column{Chunk: chunk.New(br, world.Overworld.Range())}, nil)
	f.Add(empty.rec)
	f.Fuzz(func(t *testing.T, b []byte) {
		col, err := d.decodeColumn(b, world.Overworld.Range())
		if err != nil {
			if !errors.Is(err, ErrColumnCorrupt) && !errors.Is(err, ErrUnknownState) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		enc, err := d.encodeColumn(col, nil)
		if err != nil {
			t.Fatalf("a decoded column does not encode: %v", err)
		}
		col2, err := d.decodeColumn(enc.rec, world.Overworld.Range())
		if err != nil {
			t.Fatalf("re-encoded column does not decode: %v", err)
		}
		if err := worldtest.Compare(col, col2); err != nil {
			t.Fatalf("round trip changed the column: %v", err)
		}
	})
}

// The word-at-a-time index check agrees with a plain one on random words.
func TestIndicesBelowMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	scalar := func(words []byte, bits byte, n int) bool {
		per, mask := 32/int(bits), uint32(1)<<bits-1
		seen := 0
		for i := 0; i+4 <= len(words) && seen < 4096; i += 4 {
			w := uint32(words[i]) | uint32(words[i+1])<<8 | uint32(words[i+2])<<16 | uint32(words[i+3])<<24
			for j := 0; j < per && seen < 4096; j++ {
				if w&mask >= uint32(n) {
					return false
				}
				w >>= bits
				seen++
			}
		}
		return true
	}
	for _, bits := range []byte{1, 2, 3, 4, 5, 6, 8, 16} {
		words, _ := indexWords(bits)
		for trial := 0; trial < 300; trial++ {
			n := 1 + rng.IntN(1<<bits)
			buf := make([]byte, words*4)
			// Mostly valid indices, sometimes one bad one anywhere.
			per := 32 / int(bits)
			for f := 0; f < 4096; f++ {
				v := uint32(rng.IntN(n))
				if trial%3 == 0 && rng.IntN(4096) == 0 {
					v = uint32(n + rng.IntN(1<<bits-n+1))
					if v >= 1<<bits {
						v = 1<<bits - 1
					}
				}
				w, at := f/per, uint(f%per)*uint(bits)
				x := uint32(buf[w*4]) | uint32(buf[w*4+1])<<8 | uint32(buf[w*4+2])<<16 | uint32(buf[w*4+3])<<24
				x |= v << at
				buf[w*4], buf[w*4+1], buf[w*4+2], buf[w*4+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
			}
			if got, want := indicesBelow(buf, bits, n), scalar(buf, bits, n); got != want {
				t.Fatalf("bits %d n %d: %v, scalar %v", bits, n, got, want)
			}
		}
	}
}
