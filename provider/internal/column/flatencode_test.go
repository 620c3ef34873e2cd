package column

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// orderDict is a Dictionary that assigns ids as the provider's does: in
// the order runtime ids are first asked for, each fresh when assigned, so
// that two encodes give the same ids only if they ask in the same order.
type orderDict struct {
	*testDict
	ids map[uint32]int32
}

func (d *orderDict) ID(rid uint32) (int32, bool, error) {
	if _, _, err := d.testDict.ID(rid); err != nil {
		return 0, false, err
	}
	if id, ok := d.ids[rid]; ok {
		return id, false, nil
	}
	id := int32(len(d.ids))
	d.ids[rid] = id
	return id, true, nil
}

// orderCodec returns a codec of a new orderDict, building through rawchunk.
func orderCodec(t testing.TB) *Codec {
	t.Helper()
	_, c := testCodec()
	if c.raw == nil {
		t.Skip("no raw path (blaze_safe)")
	}
	return New(&orderDict{testDict: c.dict.(*testDict), ids: map[uint32]int32{}}, c.raw)
}

// partsOf returns col as a store queue's snapshot holds it: every
// sub-chunk for which flat says so in its flat form, the others as
// clones.
func partsOf(c *Codec, col *chunk.Column, flat func(i int) bool) *Parts {
	subs := col.Chunk.Sub()
	p := &Parts{Range: col.Chunk.Range(), Subs: make([]*chunk.SubChunk, len(subs)), Flat: make([][]byte, len(subs)),
		Biomes: c.AppendBiomes(nil, col.Chunk), Tick: col.Tick, BlockEntities: col.BlockEntities, Entities: col.Entities,
		ScheduledBlocks: col.ScheduledBlocks}
	for i, sub := range subs {
		if flat(i) {
			p.Flat[i] = c.AppendFlatSub(nil, col.Chunk, i)
		} else {
			p.Subs[i] = sub.Clone()
		}
	}
	return p
}

func allFlat(int) bool { return true }

// sameEncoded fails unless got is want's record, layout, biomes and fresh
// ids.
func sameEncoded(got, want *Encoded) error {
	switch {
	case !bytes.Equal(got.Rec, want.Rec):
		return fmt.Errorf("records differ (%d and %d bytes)", len(got.Rec), len(want.Rec))
	case !reflect.DeepEqual(got.Layout, want.Layout):
		return fmt.Errorf("layouts differ: %+v, %+v", got.Layout, want.Layout)
	case !bytes.Equal(got.Biomes, want.Biomes):
		return fmt.Errorf("biomes differ")
	case !slices.Equal(got.Fresh, want.Fresh):
		return fmt.Errorf("fresh ids %v, want %v", got.Fresh, want.Fresh)
	}
	return nil
}

// sharesFlat fails unless e holds sub-chunk i as the very flat copy f.
func sharesFlat(e *Encoded, i int, f []byte) error {
	if e.Flat == nil || len(e.Flat[i]) != len(f) || len(f) > 0 && &e.Flat[i][0] != &f[0] || e.Subs[i] != nil {
		return fmt.Errorf("sub-chunk %d is not the flat copy it was encoded from or equals", i)
	}
	return nil
}

// checkFlatEncode fails unless encoding col from its flat sub-chunks gives
// what encoding the built column gives, byte for byte with the same ids,
// alone and after a previous version (prev, which differs from col in
// sub-chunk changed, or nil), and unless each sub-chunk equal to the
// previous version's is recognised as such, whichever form each holds it
// in: every sub-chunk flat, then a mix of flat sub-chunks and SubChunks;
// and a live column (the direct path) against a previous version held
// flat.
func checkFlatEncode(t *testing.T, what string, prev *chunk.Column, col *chunk.Column, changed int) {
	t.Helper()
	comp := blazedb.CompressionLZ4
	fail := func(how string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %s: %v", what, how, err)
		}
	}
	// Built: the old path, the reference.
	ref := orderCodec(t)
	var refPrev Prev
	var refPrevEnc *Encoded
	if prev != nil {
		e, err := ref.EncodeOwned(prev, Prev{}, comp)
		fail("reference of the previous version", err)
		refPrev = Prev{Rec: e.Rec, Layout: e.Layout, Subs: e.Subs, Biomes: e.Biomes, BlockEntities: prev.BlockEntities, Entities: prev.Entities}
		refPrevEnc = e
	}
	want, err := ref.EncodeOwned(col, refPrev, comp)
	fail("reference", err)

	for _, mixed := range []bool{false, true} {
		prevFlat, colFlat := allFlat, allFlat
		if mixed {
			prevFlat, colFlat = func(i int) bool { return i%2 == 0 }, func(i int) bool { return i%3 == 0 }
		}
		how := fmt.Sprintf("parts (mixed %v)", mixed)
		c := orderCodec(t)
		var p Prev
		if prev != nil {
			e, err := c.EncodeParts(partsOf(c, prev, prevFlat), Prev{}, comp)
			fail("previous version's "+how, err)
			fail("previous version's "+how, sameEncoded(e, refPrevEnc))
			p = Prev{Rec: e.Rec, Layout: e.Layout, Subs: e.Subs, Flat: e.Flat, Biomes: e.Biomes, BlockEntities: prev.BlockEntities, Entities: prev.Entities}
		}
		// The parts of col: its own flat copies where colFlat says so; the
		// others SubChunks, the previous version's where it holds one (as
		// snapshotOf shares them).
		parts := partsOf(c, col, colFlat)
		for i := range parts.Subs {
			if prev != nil && i != changed && parts.Subs[i] != nil && p.Subs[i] != nil {
				parts.Subs[i] = p.Subs[i]
			}
		}
		got, err := c.EncodeParts(parts, p, comp)
		fail(how, err)
		fail(how, sameEncoded(got, want))
		for i := range parts.Subs {
			switch {
			case prev != nil && i != changed && p.Flat[i] != nil:
				err = sharesFlat(got, i, p.Flat[i])
			case prev != nil && i != changed:
				if got.Subs[i] != p.Subs[i] {
					err = fmt.Errorf("sub-chunk %d is not the previous version's", i)
				}
			case parts.Flat[i] != nil:
				err = sharesFlat(got, i, parts.Flat[i])
			case got.Subs[i] != parts.Subs[i]:
				err = fmt.Errorf("sub-chunk %d is not the one encoded", i)
			}
			fail(how+": the encoded sub-chunks", err)
		}
		if prev != nil {
			// The ids are assigned already: none is fresh.
			live, err := c.Encode(col, p, comp)
			fail("live against "+how, err)
			w := *want
			w.Fresh = nil
			fail("live against "+how, sameEncoded(live, &w))
			for i := range p.Flat {
				if i != changed && p.Flat[i] != nil {
					fail("live against "+how, sharesFlat(live, i, p.Flat[i]))
				}
			}
		}
	}
}

// widthsColumn returns a column whose sub-chunks hold palettes of every
// size Dragonfly gives each bits-per-index width (and one past it), some a
// layer-1 storage too, one empty, one of another air; compacted (as the
// World stores them: palettes of exactly the blocks used, uniform layers
// at 0 bits) or as SetBlock leaves them (air kept in every palette).
func widthsColumn(br world.BlockRegistry, compact bool) *chunk.Column {
	c := chunk.New(br, world.Overworld.Range())
	r := c.Range()
	sizes := []int{1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65, 256, 257, 4096}
	for s, n := range sizes {
		if !compact {
			n = min(n, 4095) // and air
		}
		for j := range 4096 {
			x, y, z := uint8(j&15), int16(r[0]+s*16+j>>8), uint8(j>>4&15)
			c.SetBlock(x, y, z, 0, uint32(1+(j*7919)%n))
			if s%3 == 1 && j%5 == 0 {
				c.SetBlock(x, y, z, 1, uint32(2+j%n))
			}
		}
	}
	c.Sub()[len(sizes)+1] = chunk.NewSubChunk(777)
	c.SetBiome(0, 0, 0, 3)
	if compact {
		c.Compact()
	}
	return &chunk.Column{Chunk: c, Tick: 5}
}

// Issue 42 item 4: the store worker encodes a queued column straight from
// the flat copies the tick made (EncodeParts), never building SubChunks;
// its record is byte for byte the one encoding the built column gives,
// with the same dictionary ids in the same order, on synthetic columns of
// every dimension, on one of every bits-per-index width, with water in
// layer 1, empty sub-chunks and one of another air, new and changed, and
// on every column of the real worlds (TestFlatEncodeRealWorlds).
func TestFlatEncodeMatchesBuilt(t *testing.T) {
	br, _ := testCodec()
	check := func(what string, col *chunk.Column, changed bool) {
		checkFlatEncode(t, what, nil, col, -1)
		if !changed {
			return
		}
		next := &chunk.Column{Chunk: col.Chunk.Clone(), Tick: col.Tick + 1, BlockEntities: col.BlockEntities, Entities: col.Entities, ScheduledBlocks: col.ScheduledBlocks}
		worldtest.ChangeOneBlock(next, 70)
		r := col.Chunk.Range()
		checkFlatEncode(t, what+" changed", col, next, (70%r.Height())>>4)
	}
	for _, dim := range []world.Dimension{world.Overworld, world.Nether, world.End} {
		check(fmt.Sprint(dim), worldtest.Synthetic(1, dim, br), dim == world.Overworld)
	}
	for _, compact := range []bool{false, true} {
		col := widthsColumn(br, compact)
		bits := map[int]bool{}
		_, c := testCodec()
		needRaw(t, c)
		for _, sub := range col.Chunk.Sub() {
			for _, l := range sub.Layers() {
				bits[len(c.raw.WordBytes(l))/512] = true
			}
		}
		for _, b := range []int{1, 2, 3, 4, 5, 6, 8, 16} {
			if !bits[b] || compact && !bits[0] {
				t.Fatalf("the column of every width has widths %v", bits)
			}
		}
		check(fmt.Sprintf("every width (compacted %v)", compact), col, compact)
	}
}

// Issue 42 item 4: TestFlatEncodeMatchesBuilt and TestBuildParts over
// every column of the real worlds.
func TestFlatEncodeRealWorlds(t *testing.T) {
	br, c := testCodec()
	needRaw(t, c)
	for _, path := range worldtest.Worlds(t) {
		cols, err := worldtest.ReadAll(worldtest.UnpackTemp(t, path), br)
		if err != nil {
			t.Fatal(err)
		}
		for _, col := range cols {
			what := fmt.Sprintf("%s %v %v", worldtest.Name(path), col.Pos, col.Dim)
			checkFlatEncode(t, what, nil, col.Col, -1)
			checkBuildParts(t, c, br, what, col.Col, allFlat, false)
		}
	}
}

// Issue 42 item 4: SubEqualFlat, which compares the World's sub-chunks with
// the flat copies of the queue's and the cache's snapshots, says equal
// exactly when the sub-chunk's flat form is the copy byte for byte: any
// byte changed, missing or added, or another y, is different.
func TestSubEqualFlat(t *testing.T) {
	br, c := testCodec()
	needRaw(t, c)
	for _, col := range []*chunk.Column{worldtest.Synthetic(3, world.Overworld, br), widthsColumn(br, true)} {
		y0 := col.Chunk.Range()[0] >> 4
		for i, sub := range col.Chunk.Sub() {
			f := c.AppendFlatSub(nil, col.Chunk, i)
			if !c.SubEqualFlat(sub, y0+i, f) {
				t.Fatalf("sub-chunk %d differs from its own flat form", i)
			}
			if c.SubEqualFlat(sub, y0+i+1, f) || c.SubEqualFlat(sub, y0+i, f[:len(f)-1]) || c.SubEqualFlat(sub, y0+i, append(slices.Clip(f), 0)) {
				t.Fatalf("sub-chunk %d equals a flat form at another y, or cut, or longer", i)
			}
			for j := 0; j < len(f); j += max(1, len(f)/23) {
				g := slices.Clone(f)
				g[j] ^= 0x10
				if c.SubEqualFlat(sub, y0+i, g) {
					t.Fatalf("sub-chunk %d equals its flat form with byte %d changed", i, j)
				}
			}
		}
	}
}

// Issue 42 item 4: a snapshot whose sub-chunks the worker left flat is
// built on its first load (BuildParts) into the chunk the parts were taken
// from: every sub-chunk encoding the same, the same biomes, and growing
// alike when blocks are set; its SubChunks are the parts' own. Parts at
// another y or with biomes that do not decode are refused.
func TestBuildParts(t *testing.T) {
	br, c := testCodec()
	needRaw(t, c)
	checkBuildParts(t, c, br, "overworld", worldtest.Synthetic(5, world.Overworld, br), allFlat, true)
	checkBuildParts(t, c, br, "every width, mixed", widthsColumn(br, true), func(i int) bool { return i%3 != 0 }, true)
	col := worldtest.Synthetic(6, world.Overworld, br)
	for name, spoil := range map[string]func(p *Parts){
		"another y": func(p *Parts) { p.Flat[3] = p.Flat[4] },
		"biomes":    func(p *Parts) { p.Biomes = p.Biomes[:len(p.Biomes)/2] },
		"a flat":    func(p *Parts) { p.Flat[3] = p.Flat[3][:len(p.Flat[3])-1] },
		"neither":   func(p *Parts) { p.Flat[3] = nil },
	} {
		p := partsOf(c, col, allFlat)
		spoil(p)
		if _, err := c.BuildParts(p, br); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}

// checkBuildParts fails unless BuildParts of col's parts (flat where flat
// says so) gives col's chunk, sharing the parts' SubChunks, each built one
// of the same flat form; with grow, also growing alike when blocks are set
// (sameChunk).
func checkBuildParts(t *testing.T, c *Codec, br world.BlockRegistry, what string, col *chunk.Column, flat func(int) bool, grow bool) {
	t.Helper()
	p := partsOf(c, col, flat)
	got, err := c.BuildParts(p, br)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for i, sub := range p.Subs {
		if sub != nil && got.Sub()[i] != sub {
			t.Fatalf("%s: sub-chunk %d is not the parts' own", what, i)
		}
	}
	if err := worldtest.Compare(col, &chunk.Column{Chunk: got, Tick: col.Tick, BlockEntities: col.BlockEntities, Entities: col.Entities, ScheduledBlocks: col.ScheduledBlocks}); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for i, f := range p.Flat {
		if f != nil && !bytes.Equal(c.AppendFlatSub(nil, got, i), f) {
			t.Fatalf("%s: sub-chunk %d is built with other words or palettes", what, i)
		}
	}
	if !grow {
		return
	}
	if err := sameChunk(col.Chunk.Clone(), got); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// EncodeParts refuses parts that do not make a column: a sub-chunk in
// neither form or in both, too few, a flat copy at another y or with bytes
// after it, biomes that do not decode.
func TestEncodePartsRefuses(t *testing.T) {
	br, _ := testCodec()
	c := orderCodec(t)
	col := worldtest.Synthetic(2, world.Overworld, br)
	for name, spoil := range map[string]func(p *Parts){
		"neither":     func(p *Parts) { p.Flat[3] = nil },
		"both":        func(p *Parts) { p.Subs[3] = col.Chunk.Sub()[3] },
		"too few":     func(p *Parts) { p.Subs, p.Flat = p.Subs[1:], p.Flat[1:] },
		"another y":   func(p *Parts) { p.Flat[3] = p.Flat[4] },
		"bytes after": func(p *Parts) { p.Flat[3] = append(slices.Clip(p.Flat[3]), 0) },
		"short":       func(p *Parts) { p.Flat[3] = p.Flat[3][:5] },
		"biomes":      func(p *Parts) { p.Biomes = p.Biomes[:len(p.Biomes)/2] },
	} {
		p := partsOf(c, col, allFlat)
		spoil(p)
		if _, err := c.EncodeParts(p, Prev{}, blazedb.CompressionNone); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
}

// Issue 42 item 4: the flat encoder refuses, never panics on, bytes that
// do not hold a flat sub-chunk, accepts exactly what DecodeFlatSub builds
// a sub-chunk from (at the right y), and then gives the record encoding
// that sub-chunk gives.
func FuzzEncodeFlatSub(f *testing.F) {
	br, c := testCodec()
	if c.raw == nil {
		f.Skip("no raw path (blaze_safe)")
	}
	rng := cube.Range{0, 15}
	seed := func(col *chunk.Column) {
		for i := range col.Chunk.Sub() {
			b := c.AppendFlatSub(nil, col.Chunk, i)
			b[4+2] = 0 // the y of the one sub-chunk of rng
			f.Add(b)
		}
	}
	seed(worldtest.Synthetic(2, world.Overworld, br))
	seed(widthsColumn(br, true))
	biomes := c.AppendBiomes(nil, chunk.New(br, rng))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := c.EncodeParts(&Parts{Range: rng, Subs: make([]*chunk.SubChunk, 1), Flat: [][]byte{b}, Biomes: biomes}, Prev{}, blazedb.CompressionNone)
		sub, derr := c.DecodeFlatSub(&rawchunk.Arena{}, b)
		if derr != nil || b[4+2] != 0 {
			if err == nil {
				t.Fatalf("encoded a flat sub-chunk DecodeFlatSub refuses (%v) or at another y", derr)
			}
			return
		}
		if c.SubEqualFlat(sub, 0, b) != bytes.Equal(c.appendFlat(nil, sub, 0), b) {
			t.Fatal("SubEqualFlat disagrees with the flat form's bytes")
		}
		ch := chunk.New(br, rng)
		ch.Sub()[0] = sub
		want, werr := c.EncodeOwned(&chunk.Column{Chunk: ch}, Prev{}, blazedb.CompressionNone)
		if (err == nil) != (werr == nil) {
			t.Fatalf("flat: %v; built: %v", err, werr)
		}
		if err == nil && !bytes.Equal(got.Rec, want.Rec) {
			t.Fatal("the flat sub-chunk encodes differently from the one it builds")
		}
	})
}
