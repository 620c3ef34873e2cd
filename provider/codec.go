package provider

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

// A column record is the engine value of one chunk column. Block data keeps
// the layout of Dragonfly's network encoding (which decodes about twenty
// times faster than the disk encoding, whose palettes are NBT), except that
// palette entries are dictionary ids (dictionary.go) instead of runtime ids.
// Each part of the column is a frame, compressed on its own, so that
// storing a column again compresses only the parts that changed:
//
//	+-------+------------------------------------------------------------+
//	| bytes | field                                                      |
//	+-------+------------------------------------------------------------+
//	|     3 | signature "BZC"                                            |
//	|     1 | record version (2)                                         |
//	|     1 | flags (0)                                                  |
//	|  uvar | n, number of sub-chunks (every one of the dimension's)     |
//	|     … | n frames, one per sub-chunk: version 9, layer count, y;   |
//	|       |   per layer: header byte (bits per index << 1 | 1), the   |
//	|       |   index words as in the network encoding, then (bits > 0) |
//	|       |   uvar palette length, then palette entries as uvar       |
//	|       |   dictionary ids                                          |
//	|     … | frame: the network biome encoding                         |
//	|     … | frame: uvar block entities, each: svar x, y, z; uvar      |
//	|       |   length; NBT (LE); then uvar entities, each: svar id;    |
//	|       |   uvar length; NBT (LE)                                   |
//	|  svar | current tick of the scheduled updates                      |
//	|  uvar | scheduled updates; each: svar x, y, z; uvar dictionary id; |
//	|       |   svar tick                                                |
//	+-------+------------------------------------------------------------+
//
//	frame:
//	+-------+------------------------------------------------------------+
//	|     1 | codec: the engine's id, blazedb.Compression.CodecID        |
//	|  uvar | raw length                                                 |
//	|  uvar | stored length, then the stored bytes                       |
//	+-------+------------------------------------------------------------+
//
// uvar/svar are Go's unsigned/zig-zag varints. Only version 2 is read:
// version 1 (unframed) was never released. Part of the on-disk format.
const (
	recordSignature = "BZC"
	recordVersion   = 2
	maxSubChunks    = 64
	maxListLen      = 1 << 20
	maxFrameLen     = 16 << 20
)

// layout locates the parts of a record: subEnds[i] is where sub-chunk i
// ends (sub-chunk 0 starts at subStart). In a version 2 record each span
// is a whole frame, so an unchanged part is reused by copying its bytes.
type layout struct {
	version  int
	subStart int
	subEnds  []int
	// biomeStart and biomeEnd bound the biome frame (version 2).
	biomeStart, biomeEnd int
	// nbtStart and nbtEnd bound the block entities and entities.
	nbtStart, nbtEnd int
	// rawSize is the record's size with every frame decompressed.
	rawSize int
}

func (l layout) sub(rec []byte, i int) []byte {
	start := l.subStart
	if i > 0 {
		start = l.subEnds[i-1]
	}
	return rec[start:l.subEnds[i]]
}

// encoded is the result of encoding a column.
type encoded struct {
	rec    []byte
	lay    layout
	subs   []*chunk.SubChunk // private snapshot of the sub-chunks
	biomes []byte            // the network biome encoding, uncompressed
	fresh  []int32           // dictionary ids not yet on disk
	// sameNBT reports that the block entities and entities equal prev's,
	// whose copies the new snapshot may then share.
	sameNBT bool
}

var scratchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// encodeColumn encodes col, compressing each frame with comp. When prev
// (the cached snapshot of the same column) is a version 2 record, every
// part equal to prev's reuses prev's frame, and prev's snapshot of each
// equal sub-chunk; only changed parts are encoded, compressed and cloned.
// subEqual may call equal sub-chunks different, never the reverse, so
// reuse is always exact; and compression is deterministic, so the result
// equals a full encode byte for byte. When nothing differs, prev's record
// itself is returned and no record is built.
func (d *dictionary) encodeColumn(col *chunk.Column, prev *snapshot, comp blazedb.Compression) (*encoded, error) {
	if col == nil || col.Chunk == nil {
		return nil, errors.New("nil column or chunk")
	}
	if err := checkShape(col.Chunk); err != nil {
		return nil, err
	}
	subs := col.Chunk.Sub()
	e := &encoded{}
	if prev != nil && (prev.lay.version != recordVersion || len(prev.subs) != len(subs)) {
		prev = nil
	}

	d.mu.Lock()
	ready := d.br != nil
	d.mu.Unlock()
	if !ready {
		return nil, errors.New("no block registry")
	}
	// toID needs d.mu: it is taken around each use, never across encoding.
	toID := func(rid uint32) (uint64, error) {
		id, err := d.idFor(rid)
		if err != nil {
			return 0, err
		}
		if !d.entries[id].persisted {
			e.fresh = append(e.fresh, id)
		}
		return uint64(id), nil
	}
	// Decide first what prev can supply, so that an unchanged column (what
	// every autosave stores) is recognised without building a record.
	sp := scratchBufs.Get().(*[]byte)
	defer scratchBufs.Put(sp)
	*sp = d.appendBiomes((*sp)[:0], col.Chunk)
	sameSub := make([]bool, len(subs))
	sameBiomes, sameNBT, same := false, false, prev != nil
	if prev != nil {
		for i, sub := range subs {
			sameSub[i] = subEqual(sub, prev.subs[i])
			same = same && sameSub[i]
		}
		sameBiomes = bytes.Equal(*sp, prev.biomes)
		// Encoding NBT is slow and these rarely change: compare the values.
		sameNBT = nbt.EqualBlockEntities(col.BlockEntities, prev.blockEntities) && nbt.EqualEntities(col.Entities, prev.entities)
	}
	tail, err := appendTail(nil, col, func(rid uint32) (uint64, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		return toID(rid)
	})
	if err != nil {
		return nil, err
	}
	if same && sameBiomes && sameNBT && len(e.fresh) == 0 && bytes.Equal(tail, prev.rec[prev.lay.nbtEnd:]) {
		return &encoded{rec: prev.rec, lay: prev.lay, subs: prev.subs, biomes: prev.biomes, sameNBT: true}, nil
	}
	e.sameNBT = sameNBT
	// Something changed: build a record (not before, or every autosave of
	// an unchanged column would allocate one). A changed column's record
	// is about as long as prev's; a new one's size is unknown, so it is
	// built in a pooled buffer and copied out once at its length: grown by
	// appends from 8 KiB, a realistic record went through four more
	// buffers, each about a quarter larger than the last, and their copies.
	var b []byte
	if prev != nil {
		b = make([]byte, 0, len(prev.rec)+2<<10) // most stores change little: no regrowth
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
	e.subs = make([]*chunk.SubChunk, len(subs))
	e.lay = layout{version: recordVersion, subStart: len(b), subEnds: make([]int, len(subs))}
	if sameBiomes {
		e.biomes = prev.biomes
	} else {
		e.biomes = slices.Clone(*sp)
	}

	np := scratchBufs.Get().(*[]byte)
	defer scratchBufs.Put(np)
	// The snapshot's copies of the changed sub-chunks come from one arena,
	// each of its blocks sized to hold all of theirs.
	var a *rawchunk.Arena
	if d.raw != nil {
		a = &rawchunk.Arena{}
		for i, sub := range subs {
			if sameSub[i] {
				continue
			}
			a.SubBlock++
			a.LayerBlock += len(sub.Layers())
			for _, l := range sub.Layers() {
				a.WordBlock += len(d.raw.Words(l))
				a.ValueBlock += l.Palette().Len()
			}
		}
		a.StorageBlock = a.LayerBlock
	}
	for i, sub := range subs {
		if sameSub[i] {
			b = append(b, prev.lay.sub(prev.rec, i)...)
			e.subs[i] = prev.subs[i]
			e.lay.rawSize += prev.subRaw(i)
		} else {
			if d.raw != nil {
				d.mu.Lock()
				*sp, err = appendSubIDs((*sp)[:0], d.raw, col.Chunk, i, toID)
				d.mu.Unlock()
			} else {
				// Dragonfly's encoding, read back, checked and rewritten
				// with dictionary ids.
				*np = append((*np)[:0], chunk.EncodeSubChunk(col.Chunk, chunk.NetworkEncoding, i)...)
				r := &reader{b: *np}
				d.mu.Lock()
				*sp, err = rewriteSub((*sp)[:0], r, readVarint32, appendUvarint, toID)
				d.mu.Unlock()
				if err == nil && r.off != len(r.b) {
					err = fmt.Errorf("%d bytes not understood", len(r.b)-r.off)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("sub-chunk %d: %w", i, err)
			}
			if b, err = appendFrame(b, comp, *sp); err != nil {
				return nil, err
			}
			if a != nil {
				e.subs[i] = d.raw.Clone(a, sub)
			} else {
				e.subs[i] = sub.Clone()
			}
			e.lay.rawSize += len(*sp)
		}
		e.lay.subEnds[i] = len(b)
	}

	e.lay.biomeStart = len(b)
	if sameBiomes {
		b = append(b, prev.rec[prev.lay.biomeStart:prev.lay.biomeEnd]...)
	} else if b, err = appendFrame(b, comp, e.biomes); err != nil {
		return nil, err
	}
	e.lay.biomeEnd = len(b)
	e.lay.rawSize += len(e.biomes)

	e.lay.nbtStart = len(b)
	if sameNBT {
		b = append(b, prev.rec[prev.lay.nbtStart:prev.lay.nbtEnd]...)
		e.lay.rawSize += prev.nbtRaw()
	} else {
		if *sp, err = appendEntities((*sp)[:0], col); err != nil {
			return nil, err
		}
		if b, err = appendFrame(b, comp, *sp); err != nil {
			return nil, err
		}
		e.lay.rawSize += len(*sp)
	}
	e.lay.nbtEnd = len(b)
	b = append(b, tail...)
	e.lay.rawSize += e.lay.subStart + len(tail)
	if prev == nil {
		e.rec = slices.Clone(b)
	} else {
		e.rec = b
	}
	return e, nil
}

// checkShape refuses a chunk with a sub-chunk, a layer or a layer's palette
// missing, which encoding would dereference. Dragonfly's World never makes
// one, but its LevelDB decoder does from a damaged sub-chunk: it reads a
// layer written as the marker of a repeated biome storage as a nil layer,
// without an error.
func checkShape(c *chunk.Chunk) error {
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

// appendBiomes appends the biomes of c in Dragonfly's network encoding.
func (d *dictionary) appendBiomes(dst []byte, c *chunk.Chunk) []byte {
	if d.raw != nil {
		return d.raw.AppendBiomes(dst, c)
	}
	return append(dst, chunk.EncodeBiomes(c, chunk.NetworkEncoding)...)
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

// subEqual reports whether two sub-chunks of the same registry hold the
// same blocks. SubChunk.Equals calls every uniform layer (one block state
// throughout, such as the air above the ground: most sub-chunks of most
// columns) different from everything, itself included, so those were
// encoded, compressed and cloned again at every store. A layer whose
// palette has one entry is uniform (every index must be 0), so two such
// layers with the same entry are equal. Layers Equal calls different for
// its other reason (a palette starting with runtime id 0) stay different:
// that only costs a re-encode.
func subEqual(a, b *chunk.SubChunk) bool {
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
		return 0, 0, 0, fmt.Errorf("%w: %v", ErrColumnCorrupt, r.err)
	}
	if ver != chunk.SubChunkVersion {
		return 0, 0, 0, fmt.Errorf("%w: sub-chunk version %d", ErrColumnCorrupt, ver)
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
		bits := hdr >> 1
		words, ok := rawchunk.IndexWords(bits)
		if !ok {
			r.fail("layer %d has %d bits per index", l, bits)
			break
		}
		idx := r.bytes(words * 4)
		n := 1
		if bits != 0 {
			n = int(read(r))
			if n < 1 || n > 4096 {
				r.fail("palette of %d entries", n)
				break
			}
			if !indicesBelow(idx, bits, n) {
				r.fail("layer %d has an index beyond its palette of %d", l, n)
				break
			}
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
		return fmt.Errorf("%w: %v", ErrColumnCorrupt, r.err)
	}
	return nil
}
