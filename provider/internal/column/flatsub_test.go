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
