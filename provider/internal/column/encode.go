package column

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider/internal/nbt"
	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

var scratchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// recBufs holds the buffers new records are built in; maxPooledRecord
// bounds what is kept.
var recBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const maxPooledRecord = 1 << 20

// Encode encodes col, compressing each frame with comp. When there is a
// prev (the same column's previous version), every part equal to prev's
// reuses prev's frame, and prev's copy of each equal sub-chunk; only
// changed parts are encoded, compressed and copied.
// SubEqual may call equal sub-chunks different, never the reverse, so
// reuse is always exact; and compression is deterministic, so the result
// equals a full encode byte for byte. When nothing differs, prev's record
// itself is returned and no record is built. A prev whose record is
// packed whole (version 3) has no frame to reuse: a changed column is
// then encoded in full, as without a prev.
func (c *Codec) Encode(col *chunk.Column, p Prev, comp blazedb.Compression) (*Encoded, error) {
	return c.encode(col, p, comp, false)
}

// EncodeOwned is Encode of a column whose sub-chunks the caller already
// owns, copies that nothing modifies (the store queue's snapshots): the
// Encoded holds those sub-chunks themselves where Encode would copy them.
func (c *Codec) EncodeOwned(col *chunk.Column, p Prev, comp blazedb.Compression) (*Encoded, error) {
	return c.encode(col, p, comp, true)
}

func (c *Codec) encode(col *chunk.Column, p Prev, comp blazedb.Compression, owned bool) (*Encoded, error) {
	if col == nil || col.Chunk == nil {
		return nil, errors.New("nil column or chunk")
	}
	if err := CheckShape(col.Chunk); err != nil {
		return nil, err
	}
	return c.encodeFrom(&source{col: col, subs: col.Chunk.Sub(), y0: col.Chunk.Range()[0] >> 4, owned: owned}, p, comp)
}

// source is what an encode reads: a column's chunk (Encode, EncodeOwned),
// or a store queue snapshot's parts (EncodeParts), whose changed
// sub-chunks are in their flat form and whose biomes are encoded already.
type source struct {
	col  *chunk.Column // the tick, entities and scheduled updates; Chunk is nil for parts
	subs []*chunk.SubChunk
	// flat, for parts, holds sub-chunk i in its flat form where subs[i] is
	// nil.
	flat   [][]byte
	biomes []byte // for parts: the network biome encoding
	y0     int    // the y of sub-chunk 0, as the encodings write it
	// owned: the sub-chunks are copies nothing modifies, which the Encoded
	// may hold themselves.
	owned bool
}

// flatAt returns sub-chunk i in its flat form if flat holds it so, else
// nil.
func flatAt(flat [][]byte, i int) []byte {
	if flat == nil {
		return nil
	}
	return flat[i]
}

func (c *Codec) encodeFrom(src *source, p Prev, comp blazedb.Compression) (*Encoded, error) {
	var prev *Prev
	if p.Rec != nil {
		prev = &p
	}
	col, subs := src.col, src.subs
	e := &Encoded{}
	if prev != nil && (prev.Layout.version != recordVersion && prev.Layout.version != wholeVersion || len(prev.Subs) != len(subs) ||
		prev.Flat != nil && len(prev.Flat) != len(subs)) {
		prev = nil
	}

	if c.dict.Registry() == nil {
		return nil, errors.New("no block registry")
	}
	// toID takes the dictionary's lock for each id, never across the
	// encoding of a sub-chunk: the store worker's encoders run on every
	// core, and the rest of a sub-chunk's encoding (copying and checking
	// its index words) is theirs alone.
	toID := func(rid uint32) (uint64, error) {
		c.dict.Lock()
		id, fresh, err := c.dict.ID(rid)
		c.dict.Unlock()
		if err != nil {
			return 0, err
		}
		if fresh {
			e.Fresh = append(e.Fresh, id)
		}
		return uint64(id), nil
	}
	// Decide first what prev can supply, so that an unchanged column (what
	// every autosave stores) is recognised without building a record.
	sp := scratchBufs.Get().(*[]byte)
	defer scratchBufs.Put(sp)
	biomes := src.biomes
	if col.Chunk != nil {
		*sp = c.AppendBiomes((*sp)[:0], col.Chunk)
		biomes = *sp
	}
	sameSub := make([]bool, len(subs))
	sameBiomes, sameNBT, same := false, false, prev != nil
	if prev != nil {
		for i := range subs {
			sameSub[i] = c.subEqual(src, i, prev)
			same = same && sameSub[i]
		}
		sameBiomes = bytes.Equal(biomes, prev.Biomes)
		// Encoding NBT is slow and these rarely change: compare the values.
		sameNBT = nbt.EqualBlockEntities(col.BlockEntities, prev.BlockEntities) && nbt.EqualEntities(col.Entities, prev.Entities)
	}
	tail, err := appendTail(nil, col, toID)
	if err != nil {
		return nil, err
	}
	if same && sameBiomes && sameNBT && len(e.Fresh) == 0 && bytes.Equal(tail, prev.tail()) {
		return &Encoded{Rec: prev.Rec, Layout: prev.Layout, Subs: prev.Subs, Flat: prev.Flat, Biomes: prev.Biomes, SameNBT: true}, nil
	}
	if prev != nil && prev.Layout.version != recordVersion {
		// A whole record (version 3, packed by compaction) has no frame
		// of a part to reuse: every part is compressed, this once; the
		// next store reuses this one's.
		prev = nil
		clear(sameSub)
		sameBiomes, sameNBT = false, false
	}
	e.SameNBT = sameNBT
	// Something changed: build a record (not before, or every autosave of
	// an unchanged column would allocate one). A changed column's record
	// is about as long as prev's; a new one's size is unknown, so it is
	// built in a pooled buffer and copied out once at its length: grown by
	// appends from 8 KiB, a realistic record went through four more
	// buffers, each about a quarter larger than the last, and their copies.
	var b []byte
	if prev != nil {
		b = make([]byte, 0, len(prev.Rec)+2<<10) // most stores change little: no regrowth
	} else {
		rp := recBufs.Get().(*[]byte)
		defer func() {
			if cap(*rp) <= maxPooledRecord {
				recBufs.Put(rp)
			}
		}()
		defer func() { *rp = b[:0] }()
		b = (*rp)[:0]
	}
	b = append(b, recordSignature...)
	b = append(b, recordVersion, 0)
	b = binary.AppendUvarint(b, uint64(len(subs)))
	e.Subs = make([]*chunk.SubChunk, len(subs))
	e.Layout = Layout{version: recordVersion, subStart: len(b), subEnds: make([]int, len(subs))}
	switch {
	case sameBiomes:
		e.Biomes = prev.Biomes
	case col.Chunk == nil:
		e.Biomes = src.biomes // the snapshot's own, never modified
	default:
		e.Biomes = slices.Clone(biomes)
	}

	// The snapshot's copies of the changed sub-chunks come from one arena,
	// each of its blocks sized to hold all of theirs.
	var a *rawchunk.Arena
	if c.raw != nil && !src.owned {
		a = &rawchunk.Arena{}
		for i, sub := range subs {
			if sameSub[i] {
				continue
			}
			a.SubBlock++
			a.LayerBlock += len(sub.Layers())
			for _, l := range sub.Layers() {
				a.WordBlock += len(c.raw.Words(l))
				a.ValueBlock += l.Palette().Len()
			}
		}
		a.StorageBlock = a.LayerBlock
	}
	for i, sub := range subs {
		switch {
		case sameSub[i]:
			b = append(b, prev.Layout.sub(prev.Rec, i)...)
			if f := flatAt(prev.Flat, i); f != nil {
				e.setFlat(i, f)
			} else {
				e.Subs[i] = prev.Subs[i]
			}
			e.Layout.RawSize += prev.Layout.SubRaw(prev.Rec, i)
			e.Layout.subEnds[i] = len(b)
			continue
		case flatAt(src.flat, i) != nil:
			*sp, err = c.flatSubIDs((*sp)[:0], src.flat[i], src.y0+i, toID)
		case c.raw != nil:
			*sp, err = appendSubIDs((*sp)[:0], c.raw, sub, src.y0+i, toID)
		default:
			// Dragonfly's encoding, read back, checked and rewritten
			// with dictionary ids. (Parts always have the raw path:
			// checkParts refuses them otherwise.)
			*sp, err = rewriteNetSub((*sp)[:0], chunk.EncodeSubChunk(col.Chunk, chunk.NetworkEncoding, i), 0, toID)
		}
		if err != nil {
			return nil, fmt.Errorf("sub-chunk %d: %w", i, err)
		}
		if b, err = appendFrame(b, comp, *sp); err != nil {
			return nil, err
		}
		switch {
		case flatAt(src.flat, i) != nil:
			e.setFlat(i, src.flat[i])
		case src.owned:
			e.Subs[i] = sub
		case a != nil:
			e.Subs[i] = c.raw.Clone(a, sub)
		default:
			e.Subs[i] = sub.Clone()
		}
		e.Layout.RawSize += len(*sp)
		e.Layout.subEnds[i] = len(b)
	}

	e.Layout.biomeStart = len(b)
	if sameBiomes {
		b = append(b, prev.Rec[prev.Layout.biomeStart:prev.Layout.biomeEnd]...)
	} else {
		// What a load refuses is refused here, so that no store is
		// acknowledged that cannot be read back: Dragonfly's decoders take
		// a biome index beyond its palette (a damaged LevelDB world).
		if err := walkBiomes(e.Biomes, len(subs), nil); err != nil {
			return nil, fmt.Errorf("%w: biomes: %w", ErrCorrupt, err)
		}
		if b, err = appendFrame(b, comp, e.Biomes); err != nil {
			return nil, err
		}
	}
	e.Layout.biomeEnd = len(b)
	e.Layout.RawSize += len(e.Biomes)

	e.Layout.nbtStart = len(b)
	if sameNBT {
		b = append(b, prev.Rec[prev.Layout.nbtStart:prev.Layout.nbtEnd]...)
		e.Layout.RawSize += prev.Layout.NBTRaw(prev.Rec)
	} else {
		if *sp, err = appendEntities((*sp)[:0], col); err != nil {
			return nil, err
		}
		if b, err = appendFrame(b, comp, *sp); err != nil {
			return nil, err
		}
		e.Layout.RawSize += len(*sp)
	}
	e.Layout.nbtEnd = len(b)
	b = append(b, tail...)
	e.Layout.RawSize += e.Layout.subStart + len(tail)
	if prev == nil {
		e.Rec = slices.Clone(b)
	} else {
		e.Rec = b
	}
	return e, nil
}

// setFlat records that the Encoded holds sub-chunk i in its flat form f.
func (e *Encoded) setFlat(i int, f []byte) {
	if e.Flat == nil {
		e.Flat = make([][]byte, len(e.Subs))
	}
	e.Flat[i] = f
}

// subEqual reports whether sub-chunk i of src equals prev's, each a
// SubChunk or in its flat form: SubEqual between two SubChunks, otherwise
// their flat forms compared byte for byte (SubEqualFlat for a SubChunk's),
// which calls equal sub-chunks different at most, never the reverse.
func (c *Codec) subEqual(src *source, i int, prev *Prev) bool {
	f, pf := flatAt(src.flat, i), flatAt(prev.Flat, i)
	switch {
	case f == nil && pf == nil:
		return SubEqual(src.subs[i], prev.Subs[i])
	case f != nil && pf != nil:
		return bytes.Equal(f, pf)
	case c.raw == nil:
		return false
	case f == nil:
		return c.SubEqualFlat(src.subs[i], src.y0+i, pf)
	default:
		return c.SubEqualFlat(prev.Subs[i], src.y0+i, f)
	}
}

// tail returns the tick and scheduled updates of p's record.
func (p *Prev) tail() []byte {
	if p.Layout.version == wholeVersion {
		return p.Layout.tail
	}
	return p.Rec[p.Layout.nbtEnd:]
}

// CheckShape refuses a chunk with a sub-chunk, a layer or a layer's palette
// missing, which encoding would dereference. Dragonfly's World never makes
// one, but its LevelDB decoder does from a damaged sub-chunk: it reads a
// layer written as the marker of a repeated biome storage as a nil layer,
// without an error. Encode checks it; the provider's store queue checks
// it before it snapshots a column, which copies the same layers.
func CheckShape(c *chunk.Chunk) error {
	for i, sub := range c.Sub() {
		if sub == nil {
			return fmt.Errorf("sub-chunk %d is missing", i)
		}
		for j, l := range sub.Layers() {
			if l == nil || l.Palette() == nil {
				return fmt.Errorf("sub-chunk %d: layer %d is missing", i, j)
			}
		}
	}
	return nil
}

// AppendBiomes appends the biomes of c in Dragonfly's network encoding,
// the form Prev.Biomes and Encoded.Biomes hold (the store queue's
// snapshots hold the same).
func (c *Codec) AppendBiomes(dst []byte, ch *chunk.Chunk) []byte {
	if c.raw != nil {
		return c.raw.AppendBiomes(dst, ch)
	}
	return append(dst, chunk.EncodeBiomes(ch, chunk.NetworkEncoding)...)
}

// EqualBiomes reports whether enc is what AppendBiomes appends for the
// biomes of ch: in place on the raw path, by encoding them otherwise.
func (c *Codec) EqualBiomes(enc []byte, ch *chunk.Chunk) bool {
	if c.raw != nil {
		return c.raw.EqualBiomes(enc, ch)
	}
	return bytes.Equal(enc, chunk.EncodeBiomes(ch, chunk.NetworkEncoding))
}

// appendTail appends the tick and the scheduled updates, their blocks as
// dictionary ids (toID).
func appendTail(b []byte, col *chunk.Column, toID func(uint32) (uint64, error)) ([]byte, error) {
	b = binary.AppendVarint(b, col.Tick)
	b = binary.AppendUvarint(b, uint64(len(col.ScheduledBlocks)))
	for _, sb := range col.ScheduledBlocks {
		b = appendPos(b, sb.Pos)
		id, err := toID(sb.Block)
		if err != nil {
			return nil, fmt.Errorf("scheduled update at %v: %w", sb.Pos, err)
		}
		b = binary.AppendUvarint(b, id)
		b = binary.AppendVarint(b, sb.Tick)
	}
	return b, nil
}

// SubEqual reports whether two sub-chunks of the same registry hold the
// same blocks. SubChunk.Equals calls every uniform layer (one block state
// throughout, such as the air above the ground: most sub-chunks of most
// columns) different from everything, itself included, so those were
// encoded, compressed and cloned again at every store. A layer whose
// palette has one entry is uniform (every index must be 0), so two such
// layers with the same entry are equal. Layers Equal calls different for
// its other reason (a palette starting with runtime id 0) stay different:
// that only costs a re-encode. The store queue shares a snapshot's
// sub-chunk with the previous snapshot's by the same rule.
func SubEqual(a, b *chunk.SubChunk) bool {
	if a.Equals(b) {
		return true
	}
	la, lb := a.Layers(), b.Layers()
	if len(la) != len(lb) {
		return false
	}
	for i := range la {
		if la[i].Equal(lb[i]) {
			continue
		}
		pa, pb := la[i].Palette(), lb[i].Palette()
		if pa.Len() != 1 || pb.Len() != 1 || pa.Value(0) != pb.Value(0) {
			return false
		}
	}
	return true
}

// appendEntities appends the block entities and entities of col, their NBT
// canonical.
func appendEntities(b []byte, col *chunk.Column) ([]byte, error) {
	var err error
	b = binary.AppendUvarint(b, uint64(len(col.BlockEntities)))
	for _, be := range col.BlockEntities {
		b = appendPos(b, be.Pos)
		if b, err = appendNBT(b, be.Data); err != nil {
			return nil, fmt.Errorf("block entity at %v: %w", be.Pos, err)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(col.Entities)))
	for _, en := range col.Entities {
		b = binary.AppendVarint(b, en.ID)
		if b, err = appendNBT(b, en.Data); err != nil {
			return nil, fmt.Errorf("entity %d: %w", en.ID, err)
		}
	}
	return b, nil
}

func appendPos(b []byte, p cube.Pos) []byte {
	b = binary.AppendVarint(b, int64(p[0]))
	b = binary.AppendVarint(b, int64(p[1]))
	return binary.AppendVarint(b, int64(p[2]))
}

// appendNBT appends m's canonical NBT, its length first.
func appendNBT(b []byte, m map[string]any) ([]byte, error) {
	sp := scratchBufs.Get().(*[]byte)
	defer scratchBufs.Put(sp)
	v, err := nbt.AppendCanonical((*sp)[:0], m)
	if err != nil {
		return nil, err
	}
	*sp = v
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...), nil
}

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// appendVarint32 writes v as the network encoding's zig-zag varint32.
func appendVarint32(b []byte, v uint64) []byte {
	return binary.AppendVarint(b, int64(int32(uint32(v))))
}

// rewriteNetSub appends the sub-chunk in network encoding b holds from off
// to its end, its palette entries translated by tr (rewriteSub), and
// refuses bytes after it.
func rewriteNetSub(dst, b []byte, off int, tr func(uint32) (uint64, error)) ([]byte, error) {
	r := &reader{b: b, off: off}
	dst, err := rewriteSub(dst, r, readVarint32, appendUvarint, tr)
	if err == nil && r.off != len(b) {
		err = fmt.Errorf("%w: %d bytes after a sub-chunk", ErrCorrupt, len(b)-r.off)
	}
	return dst, err
}

// rewriteSub copies one sub-chunk in the shared layout from r to dst,
// reading palette entries with read, translating them with tr and writing
// them with write. The encoder reads runtime ids as network varint32s and
// writes dictionary ids as uvarints; the decoder does the reverse.
func rewriteSub(dst []byte, r *reader, read func(*reader) uint64, write func([]byte, uint64) []byte, tr func(uint32) (uint64, error)) ([]byte, error) {
	ver, layers, y, err := readSubHeader(r)
	if err != nil {
		return nil, err
	}
	dst = append(dst, ver, layers, y)
	err = walkLayers(r, int(layers), read, tr, func(hdr byte, words []byte, n int) {
		dst = append(dst, hdr)
		dst = append(dst, words...)
		if hdr>>1 != 0 {
			dst = write(dst, uint64(n))
		}
	}, func(_ int, t uint64) { dst = write(dst, t) })
	return dst, err
}

// readSubHeader reads a sub-chunk's version, layer count and y.
func readSubHeader(r *reader) (ver, layers, y byte, err error) {
	ver, layers, y = r.byte(), r.byte(), r.byte()
	if r.err != nil {
		return 0, 0, 0, fmt.Errorf("%w: %v", ErrCorrupt, r.err)
	}
	if ver != chunk.SubChunkVersion {
		return 0, 0, 0, fmt.Errorf("%w: sub-chunk version %d", ErrCorrupt, ver)
	}
	return ver, layers, y, nil
}

// walkLayers reads the layers of a sub-chunk in the shared layout, checking
// each: valid bits per index, a palette of 1 to 4096 entries, every index
// inside it. For each it calls layer with the header byte, the index words
// and the palette length, then entry with each palette entry, read with
// read and translated with tr.
func walkLayers(r *reader, layers int, read func(*reader) uint64, tr func(uint32) (uint64, error),
	layer func(hdr byte, words []byte, n int), entry func(i int, t uint64)) error {
	for l := 0; l < layers && r.err == nil; l++ {
		hdr := r.byte()
		bits, idx := storageWords(r, "layer", l, hdr)
		n := 1
		if bits != 0 {
			n = paletteLen(r, "layer", l, read(r))
		}
		if bits != 0 && r.err == nil && !indicesBelow(idx, bits, n) {
			r.fail("layer %d has an index beyond its palette of %d", l, n)
		}
		if r.err != nil {
			break
		}
		layer(hdr, idx, n)
		for i := 0; i < n && r.err == nil; i++ {
			v := read(r)
			if r.err != nil || v > 1<<31 {
				r.fail("palette entry out of range")
				break
			}
			t, err := tr(uint32(v))
			if err != nil {
				return err
			}
			entry(i, t)
		}
	}
	if r.err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, r.err)
	}
	return nil
}
