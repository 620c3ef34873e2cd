package column

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// A flat sub-chunk is how the store queue copies a changed sub-chunk on
// the World's tick (issue 42): one byte string where a SubChunk copy is a
// storage, a palette and a slice of index words for every layer. It costs
// one allocation for all of a column's changed sub-chunks, holds no
// pointers for the garbage collector to follow, and is never modified.
// The store worker encodes the column's record straight from it
// (EncodeParts), and the cache's snapshot keeps it in that form; a
// SubChunk is built from it (DecodeFlatSub) only when the column is loaded.
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
	return c.appendFlat(dst, ch.Sub()[i], i+ch.Range()[0]>>4)
}

// appendFlat appends sub in its flat form, its y as sub-chunk y's.
func (c *Codec) appendFlat(dst []byte, sub *chunk.SubChunk, y int) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, sub.Block(0, 0, 0, 255))
	return c.raw.AppendSubChunk(dst, sub, y)
}

// SubEqualFlat reports whether sub, as sub-chunk y of its column, has the
// flat form f, byte for byte, without making it: what comparing
// AppendFlatSub's bytes with f reports. The codec must make flat
// sub-chunks (FlatSubs).
func (c *Codec) SubEqualFlat(sub *chunk.SubChunk, y int, f []byte) bool {
	return len(f) >= 4 && binary.LittleEndian.Uint32(f) == sub.Block(0, 0, 0, 255) && c.raw.EqualSubChunk(f[4:], sub, y)
}

// flatSubIDs appends the sub-chunk f holds in its flat form to dst in the
// record's shared layout, its palette entries as dictionary ids (toID,
// which locks the dictionary itself): the bytes appendSubIDs gives of
// the sub-chunk DecodeFlatSub builds from f, without building it. Both
// are Dragonfly's network encoding with the palette entries rewritten, and
// a flat form holds that encoding as the raw Builder writes it from the
// same words and palettes. It refuses, with ErrCorrupt, what DecodeFlatSub
// refuses, and a y other than y (the sub-chunk's place in its column).
func (c *Codec) flatSubIDs(dst, f []byte, y int, toID func(uint32) (uint64, error)) ([]byte, error) {
	if len(f) < 4+3 {
		return nil, fmt.Errorf("%w: flat sub-chunk of %d bytes", ErrCorrupt, len(f))
	}
	if f[4+2] != uint8(y) {
		return nil, fmt.Errorf("%w: flat sub-chunk at y %d in place of %d", ErrCorrupt, int8(f[4+2]), int8(y))
	}
	return rewriteNetSub(dst, f, 4, toID)
}

// Parts is a column as the store queue's snapshots hold it (issue 42):
// each sub-chunk a SubChunk nothing modifies (Subs[i]) or in its flat form
// (Flat[i]), exactly one of the two; the biomes in Dragonfly's network
// encoding; and the rest as a Column holds it. Nothing in it is modified
// by EncodeParts, and the Encoded may hold its parts themselves.
type Parts struct {
	Range           cube.Range
	Subs            []*chunk.SubChunk
	Flat            [][]byte
	Biomes          []byte
	Tick            int64
	BlockEntities   []chunk.BlockEntity
	Entities        []chunk.Entity
	ScheduledBlocks []chunk.ScheduledBlockUpdate
}

// EncodeParts is EncodeOwned of a column given as its Parts: the record is
// byte for byte the one EncodeOwned gives of the column the parts build,
// with the same dictionary ids assigned in the same order, but a sub-chunk
// in flat form is encoded straight from it, never built, and stays in that
// form in the Encoded (Flat). The codec must make flat sub-chunks
// (FlatSubs). Bytes that do not hold a flat sub-chunk, or biomes that do
// not hold the range's, are refused.
func (c *Codec) EncodeParts(p *Parts, prev Prev, comp blazedb.Compression) (*Encoded, error) {
	if _, err := c.checkParts(p); err != nil {
		return nil, err
	}
	// Biomes that changed are checked where every encoding writes them
	// (encodeFrom), as the built path's are.
	col := &chunk.Column{Tick: p.Tick, BlockEntities: p.BlockEntities, Entities: p.Entities, ScheduledBlocks: p.ScheduledBlocks}
	return c.encodeFrom(&source{col: col, subs: p.Subs, flat: p.Flat, biomes: p.Biomes, y0: p.Range[0] >> 4, owned: true}, prev, comp)
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

// checkParts checks what EncodeParts and BuildParts need of p: the raw
// path, one sub-chunk for each of the range's places, each in exactly one
// form, no layer missing. It returns the number of sub-chunks.
func (c *Codec) checkParts(p *Parts) (int, error) {
	if c.raw == nil {
		return 0, errors.New("a column's parts without the raw path")
	}
	n := p.Range.Height()>>4 + 1
	if len(p.Subs) != n || len(p.Flat) != n {
		return 0, fmt.Errorf("%d sub-chunks and %d flat ones for a range of %d", len(p.Subs), len(p.Flat), n)
	}
	for i, sub := range p.Subs {
		if (sub == nil) == (p.Flat[i] == nil) {
			return 0, fmt.Errorf("sub-chunk %d is in neither form or in both", i)
		}
		if sub == nil {
			continue
		}
		for j, l := range sub.Layers() {
			if l == nil || l.Palette() == nil {
				return 0, fmt.Errorf("sub-chunk %d: layer %d is missing", i, j)
			}
		}
	}
	return n, nil
}

// BuildParts builds the chunk p holds, under registry br (p's other parts
// are not read): its SubChunks themselves, shared, and new ones from its
// flat copies (DecodeFlatSub), with the biomes built through the raw path
// as a record's decode builds them, not through NetworkDecode. A flat copy
// at another y, or bytes that do not hold the parts, are refused with
// ErrCorrupt.
func (c *Codec) BuildParts(p *Parts, br chunk.BlockRegistry) (*chunk.Chunk, error) {
	n, err := c.checkParts(p)
	if err != nil {
		return nil, err
	}
	if br == nil {
		return nil, errors.New("no block registry")
	}
	// The dictionary's empty chunk of the range, if it is of br (the
	// provider compares registries so too); only read.
	tbr, _, tmpl := c.dict.Decoding(p.Range, true)
	if tmpl == nil || tbr != br {
		tmpl = chunk.New(br, p.Range)
	}
	a := &rawchunk.Arena{WordBlock: len(p.Biomes) / 4}
	for _, f := range p.Flat {
		a.WordBlock += len(f) / 4 // the words are most of it
	}
	subs, ys := make([]*chunk.SubChunk, n), make([]byte, n)
	y0 := p.Range[0] >> 4
	for i, f := range p.Flat {
		ys[i] = uint8(y0 + i)
		if f == nil {
			subs[i] = p.Subs[i]
			continue
		}
		if len(f) >= 4+3 && f[4+2] != ys[i] {
			return nil, fmt.Errorf("%w: flat sub-chunk %d at y %d", ErrCorrupt, i, int8(f[4+2]))
		}
		if subs[i], err = c.DecodeFlatSub(a, f); err != nil {
			return nil, fmt.Errorf("sub-chunk %d: %w", i, err)
		}
	}
	ch, err := buildChunk(c.raw, a, tmpl, subs, ys, p.Biomes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return ch, nil
}
