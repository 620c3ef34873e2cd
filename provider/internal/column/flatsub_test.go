package column

import (
	"bytes"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Issue 42: a sub-chunk's flat form builds a sub-chunk of the same
// layers, words, palettes and air, within its bound; and DecodeFlatSub
// refuses, never panics on, bytes that do not hold one.
func FuzzDecodeFlatSub(f *testing.F) {
	br, c := testCodec()
	if !c.FlatSubs() {
		f.Skip("no raw path (blaze_safe)")
	}
	col := worldtest.Synthetic(2, world.Overworld, br)
	col.Chunk.Sub()[0] = chunk.NewSubChunk(777)
	for i := range col.Chunk.Sub() {
		b := c.AppendFlatSub(nil, col.Chunk, i)
		if len(b) > c.FlatSubBound(col.Chunk.Sub()[i]) {
			f.Fatalf("sub-chunk %d: %d bytes over its bound of %d", i, len(b), c.FlatSubBound(col.Chunk.Sub()[i]))
		}
		sub, err := c.DecodeFlatSub(&rawchunk.Arena{}, b)
		if err != nil {
			f.Fatalf("sub-chunk %d: %v", i, err)
		}
		ch := chunk.New(br, col.Chunk.Range())
		ch.Sub()[i] = sub
		if again := c.AppendFlatSub(nil, ch, i); !bytes.Equal(again, b) {
			f.Fatalf("sub-chunk %d does not survive its flat form", i)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c.DecodeFlatSub(&rawchunk.Arena{}, b)
	})
}

// Issue 42: the store queue compares a World's sub-chunks and biomes with
// a queued copy in place (SubEqualFlat, EqualBiomes): equal exactly when
// encoding them again would give the copy's bytes, so a change of one
// block or one biome, or a copy cut short or run on, is never shared.
func TestEqualInPlace(t *testing.T) {
	br, c := testCodec()
	if !c.FlatSubs() {
		t.Skip("no raw path (blaze_safe)")
	}
	cols := []*chunk.Column{worldtest.Synthetic(3, world.Overworld, br), worldtest.Synthetic(4, world.Nether, br)}
	cols[0].Chunk.Sub()[1] = chunk.NewSubChunk(br.AirRuntimeID())
	for _, path := range worldtest.Worlds(t) {
		real, err := worldtest.ReadAll(worldtest.UnpackTemp(t, path), br)
		if err != nil {
			t.Fatal(err)
		}
		for _, rc := range real[:min(len(real), 4)] {
			cols = append(cols, rc.Col)
		}
	}
	stone, _ := br.StateToRuntimeID("minecraft:stone", map[string]any{})
	for n, col := range cols {
		ch := col.Chunk
		for i := range ch.Sub() {
			flat := c.AppendFlatSub(nil, ch, i)
			if !c.SubEqualFlat(ch.Sub()[i], i+int(ch.Range()[0]>>4), flat) {
				t.Fatalf("column %d sub-chunk %d: unequal to its own flat form", n, i)
			}
			if c.SubEqualFlat(ch.Sub()[i], i+int(ch.Range()[0]>>4), flat[:len(flat)-1]) || c.SubEqualFlat(ch.Sub()[i], i+int(ch.Range()[0]>>4), append(flat[:len(flat):len(flat)], 0)) {
				t.Fatalf("column %d sub-chunk %d: equal to a flat form cut short or run on", n, i)
			}
		}
		biomes := c.AppendBiomes(nil, ch)
		if !c.EqualBiomes(biomes, ch) || c.EqualBiomes(biomes[:len(biomes)-1], ch) || c.EqualBiomes(append(biomes, 0x7f<<1|1), ch) {
			t.Fatalf("column %d: biomes against their own encoding, cut short, run on", n)
		}
		// One block and one biome changed in the middle sub-chunk.
		i := len(ch.Sub()) / 2
		y := int(ch.Range()[0]) + i*16 + 5
		before := c.AppendFlatSub(nil, ch, i)
		old := ch.Block(3, int16(y), 4, 0)
		nb := stone
		if old == stone {
			nb = br.AirRuntimeID()
		}
		ch.SetBlock(3, int16(y), 4, 0, nb)
		if c.SubEqualFlat(ch.Sub()[i], i+int(ch.Range()[0]>>4), before) {
			t.Fatalf("column %d: a changed block went unseen", n)
		}
		ch.SetBlock(3, int16(y), 4, 0, old)
		ch.SetBiome(3, int16(y), 4, ch.Biome(3, int16(y), 4)+1)
		if c.EqualBiomes(biomes, ch) {
			t.Fatalf("column %d: a changed biome went unseen", n)
		}
	}
}

// Issue 42: EqualBiomes reads any bytes without panicking, and calls
// equal only the biomes' own encoding.
func FuzzEqualBiomes(f *testing.F) {
	br, c := testCodec()
	if !c.FlatSubs() {
		f.Skip("no raw path (blaze_safe)")
	}
	ch := worldtest.Synthetic(5, world.Overworld, br).Chunk
	own := c.AppendBiomes(nil, ch)
	f.Add(own)
	f.Fuzz(func(t *testing.T, b []byte) {
		if c.EqualBiomes(b, ch) != bytes.Equal(b, own) {
			t.Fatal("EqualBiomes and the bytes disagree")
		}
	})
}
