package column

import (
	"encoding/binary"
	"fmt"

	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// A flat sub-chunk is how the store queue copies a changed sub-chunk on
// the World's tick (issue 42): one byte string where a SubChunk copy is a
// storage, a palette and a slice of index words for every layer. It costs
// one allocation for all of a column's changed sub-chunks, holds no
// pointers for the garbage collector to follow, and is never modified;
// the store worker builds the SubChunk from it (DecodeFlatSub).
//
//	| field   | bytes    | meaning                                          |
//	|---------|----------|--------------------------------------------------|
//	| air     | 4 (LE)   | the sub-chunk's own air runtime id               |
//	| version | 1        | chunk.SubChunkVersion                            |
//	| layers  | 1        | number of layers                                 |
//	| y       | 1        | the sub-chunk's y, as the network encoding has it |
//	| layer…  | variable | Dragonfly's network encoding of each layer: bits |
//	|         |          | header, index words, palette (zig-zag varint32)  |
//
// It exists only in memory (never written), so it carries no signature or
// version of its own; only a Codec with a raw Builder makes or reads one.

// FlatSubs reports whether the codec makes flat sub-chunks: only through
// its raw Builder, which reads a storage's words and palette in place.
func (c *Codec) FlatSubs() bool { return c.raw != nil }

// FlatSubBound returns an upper bound of the length of sub-chunk sub's
// flat form.
func (c *Codec) FlatSubBound(sub *chunk.SubChunk) int {
	n := 4 + 3
	for _, l := range sub.Layers() {
		n += 1 + 4*len(c.raw.Words(l)) + binary.MaxVarintLen32*(1+l.Palette().Len())
	}
	return n
}

// AppendFlatSub appends sub-chunk i of ch in its flat form. The codec must
// make flat sub-chunks (FlatSubs).
func (c *Codec) AppendFlatSub(dst []byte, ch *chunk.Chunk, i int) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, ch.Sub()[i].Block(0, 0, 0, 255))
	return c.raw.AppendSubChunk(dst, ch, i)
}

// DecodeFlatSub builds the sub-chunk b holds in its flat form from a, with
// the checks of a record's decode: b is the provider's own, but a
// SubChunk built from bytes that do not hold one would break the World.
func (c *Codec) DecodeFlatSub(a *rawchunk.Arena, b []byte) (*chunk.SubChunk, error) {
	if c.raw == nil {
		return nil, fmt.Errorf("%w: a flat sub-chunk without the raw path", ErrCorrupt)
	}
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: flat sub-chunk of %d bytes", ErrCorrupt, len(b))
	}
	r := &reader{b: b, off: 4}
	sub, _, err := buildSub(c.raw, a, r, binary.LittleEndian.Uint32(b), readVarint32, func(rid uint32) (uint64, error) { return uint64(rid), nil })
	if err != nil {
		return nil, err
	}
	if r.off != len(b) {
		return nil, fmt.Errorf("%w: %d bytes after a flat sub-chunk", ErrCorrupt, len(b)-r.off)
	}
	return sub, nil
}

// EqualFlatSub reports whether flat is sub-chunk i of ch in its flat form,
// as AppendFlatSub would append it, comparing in place. The codec must
// make flat sub-chunks (FlatSubs).
func (c *Codec) EqualFlatSub(flat []byte, ch *chunk.Chunk, i int) bool {
	return len(flat) >= 4 && binary.LittleEndian.Uint32(flat) == ch.Sub()[i].Block(0, 0, 0, 255) &&
		c.raw.EqualSubChunk(flat[4:], ch, i)
}
