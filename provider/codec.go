package provider

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// A column record is the engine value of one chunk column. Block data keeps
// the layout of Dragonfly's network encoding (which decodes about twenty
// times faster than the disk encoding, whose palettes are NBT), except that
// palette entries are dictionary ids (dictionary.go) instead of runtime ids:
//
//	+-------+------------------------------------------------------------+
//	| bytes | field                                                      |
//	+-------+------------------------------------------------------------+
//	|     3 | signature "BZC"                                            |
//	|     1 | record version (1)                                         |
//	|     1 | flags (0)                                                  |
//	|  uvar | n, number of sub-chunks (every one of the dimension's)     |
//	|     … | n sub-chunks: version 9, layer count, y; per layer: header |
//	|       |   byte (bits per index << 1 | 1), the index words as in   |
//	|       |   the network encoding, then (bits > 0) uvarint palette    |
//	|       |   length, then palette entries as uvarint dictionary ids   |
//	|  uvar | length of the biome data, then the network biome encoding |
//	|  svar | current tick of the scheduled updates                      |
//	|  uvar | block entities; each: svar x, y, z; uvar length; NBT (LE)  |
//	|  uvar | entities; each: svar id; uvar length; NBT (LE)             |
//	|  uvar | scheduled updates; each: svar x, y, z; uvar dictionary id; |
//	|       |   svar tick                                                |
//	+-------+------------------------------------------------------------+
//
// uvar/svar are Go's unsigned/zig-zag varints. Part of the on-disk format.
const (
	recordSignature = "BZC"
	recordVersion   = 1
	maxSubChunks    = 64
	maxListLen      = 1 << 20
)

// layout locates the parts of a record: subEnds[i] is where sub-chunk i
// ends (sub-chunk 0 starts at subStart); the biome length prefix follows the
// last one.
type layout struct {
	subStart int
	subEnds  []int
	// nbtStart and nbtEnd bound the block entities and entities.
	nbtStart, nbtEnd int
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
	biomes []byte            // network biome encoding, a slice of rec
	fresh  []int32           // dictionary ids not yet on disk
}

// encodeColumn encodes col. When prev (the cached entry of the same column)
// is given, every sub-chunk equal to prev's snapshot reuses prev's bytes and
// snapshot; only changed sub-chunks are encoded and cloned. SubChunk.Equals
// may call equal sub-chunks different (uniform layers), never the reverse,
// so reuse is always exact.
func (d *dictionary) encodeColumn(col *chunk.Column, prev *snapshot) (*encoded, error) {
	if col == nil || col.Chunk == nil {
		return nil, errors.New("nil column or chunk")
	}
	subs := col.Chunk.Sub()
	e := &encoded{subs: make([]*chunk.SubChunk, len(subs))}
	size := 16 << 10
	if prev != nil {
		size = len(prev.rec) + 4<<10 // most stores change little: no regrowth
	}
	b := append(make([]byte, 0, size), recordSignature...)
	b = append(b, recordVersion, 0)
	b = binary.AppendUvarint(b, uint64(len(subs)))
	e.lay = layout{subStart: len(b), subEnds: make([]int, len(subs))}
	if prev != nil && len(prev.subs) != len(subs) {
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
	for i, sub := range subs {
		if prev != nil && sub.Equals(prev.subs[i]) {
			b = append(b, prev.lay.sub(prev.rec, i)...)
			e.subs[i] = prev.subs[i]
		} else {
			raw := chunk.EncodeSubChunk(col.Chunk, chunk.NetworkEncoding, i)
			r := &reader{b: raw}
			var err error
			d.mu.Lock()
			b, err = rewriteSub(b, r, readVarint32, appendUvarint, toID)
			d.mu.Unlock()
			if err != nil {
				return nil, fmt.Errorf("sub-chunk %d: %w", i, err)
			}
			if r.off != len(raw) {
				return nil, fmt.Errorf("sub-chunk %d: %d bytes not understood", i, len(raw)-r.off)
			}
			e.subs[i] = sub.Clone()
		}
		e.lay.subEnds[i] = len(b)
	}
	biomes := chunk.EncodeBiomes(col.Chunk, chunk.NetworkEncoding)
	b = binary.AppendUvarint(b, uint64(len(biomes)))
	biomeAt := len(b)
	b = append(b, biomes...)
	b = binary.AppendVarint(b, col.Tick)

	var err error
	e.lay.nbtStart = len(b)
	if prev != nil && equalBlockEntities(col.BlockEntities, prev.blockEntities) && equalEntities(col.Entities, prev.entities) {
		// Encoding NBT is slow and these rarely change: reuse the bytes.
		b = append(b, prev.rec[prev.lay.nbtStart:prev.lay.nbtEnd]...)
	} else {
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
	}
	e.lay.nbtEnd = len(b)
	b = binary.AppendUvarint(b, uint64(len(col.ScheduledBlocks)))
	for _, sb := range col.ScheduledBlocks {
		b = appendPos(b, sb.Pos)
		d.mu.Lock()
		id, err := toID(sb.Block)
		d.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("scheduled update at %v: %w", sb.Pos, err)
		}
		b = binary.AppendUvarint(b, id)
		b = binary.AppendVarint(b, sb.Tick)
	}
	e.rec = b
	e.biomes = b[biomeAt : biomeAt+len(biomes)]
	return e, nil
}

func appendPos(b []byte, p cube.Pos) []byte {
	b = binary.AppendVarint(b, int64(p[0]))
	b = binary.AppendVarint(b, int64(p[1]))
	return binary.AppendVarint(b, int64(p[2]))
}

func appendNBT(b []byte, m map[string]any) ([]byte, error) {
	v, err := nbt.MarshalEncoding(m, nbt.LittleEndian)
	if err != nil {
		return nil, err
	}
	if v, err = canonicalNBT(v); err != nil {
		return nil, err
	}
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
	ver, layers, y := r.byte(), r.byte(), r.byte()
	if r.err == nil && ver != chunk.SubChunkVersion {
		return nil, fmt.Errorf("%w: sub-chunk version %d", ErrColumnCorrupt, ver)
	}
	dst = append(dst, ver, layers, y)
	for l := 0; l < int(layers) && r.err == nil; l++ {
		hdr := r.byte()
		bits := hdr >> 1
		words, ok := indexWords(bits)
		if !ok {
			r.fail("layer %d has %d bits per index", l, bits)
			break
		}
		dst = append(dst, hdr)
		idx := r.bytes(words * 4)
		dst = append(dst, idx...)
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
			dst = write(dst, uint64(n))
		}
		for i := 0; i < n && r.err == nil; i++ {
			v := read(r)
			if r.err != nil || v > 1<<31 {
				r.fail("palette entry out of range")
				break
			}
			t, err := tr(uint32(v))
			if err != nil {
				return nil, err
			}
			dst = write(dst, t)
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrColumnCorrupt, r.err)
	}
	return dst, nil
}

var netBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// decodeColumn decodes a record for a dimension of range rng. It never
// panics on bad bytes: they give an error wrapping ErrColumnCorrupt.
func (d *dictionary) decodeColumn(rec []byte, rng cube.Range) (col *chunk.Column, err error) {
	col, _, _, err = d.decode(rec, rng)
	return col, err
}

// decode is decodeColumn that also returns the record's layout and where
// its biome data lies.
func (d *dictionary) decode(rec []byte, rng cube.Range) (col *chunk.Column, lay layout, biomes []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			col, err = nil, fmt.Errorf("%w: decoder panicked: %v", ErrColumnCorrupt, p)
		}
	}()
	col, lay, biomes, err = d.decodeInner(rec, rng)
	return
}

func (d *dictionary) decodeInner(rec []byte, rng cube.Range) (*chunk.Column, layout, []byte, error) {
	var lay layout
	bad := func(format string, args ...any) (*chunk.Column, layout, []byte, error) {
		return nil, lay, nil, fmt.Errorf("%w: %s", ErrColumnCorrupt, fmt.Sprintf(format, args...))
	}
	r := &reader{b: rec}
	if string(r.bytes(3)) != recordSignature {
		return bad("no column signature")
	}
	if v := r.byte(); v != recordVersion {
		if v > recordVersion {
			return bad("column record version %d is newer than this build reads (%d)", v, recordVersion)
		}
		return bad("column record version %d", v)
	}
	r.byte() // flags
	n := r.count(maxSubChunks)
	if r.err != nil {
		return bad("%v", r.err)
	}
	lay = layout{subStart: r.off, subEnds: make([]int, n)}

	bp := netBufs.Get().(*[]byte)
	defer netBufs.Put(bp)
	buf := (*bp)[:0]

	// idToRID is only ever replaced (setRegistry) or appended to (idFor),
	// never changed in place, so a snapshot of it is read without the lock.
	d.mu.Lock()
	br, idToRID := d.br, d.idToRID
	d.mu.Unlock()
	toRID := func(id uint32) (uint64, error) {
		if int(id) >= len(idToRID) || idToRID[id] == noRID {
			d.mu.Lock()
			defer d.mu.Unlock()
			return 0, fmt.Errorf("%w: %s", ErrUnknownState, d.state(int32(id)))
		}
		return uint64(idToRID[id]), nil
	}
	for i := 0; i < n; i++ {
		var err error
		if buf, err = rewriteSub(buf, r, readUvarint, appendVarint32, toRID); err != nil {
			return nil, lay, nil, fmt.Errorf("sub-chunk %d: %w", i, err)
		}
		lay.subEnds[i] = r.off
	}
	if br == nil {
		return nil, lay, nil, errors.New("no block registry")
	}
	biomes := r.bytes(r.count(len(rec)))
	buf = append(buf, biomes...)
	*bp = buf
	if r.err != nil {
		return bad("%v", r.err)
	}
	if err := checkBiomes(biomes, rng.Height()>>4+1); err != nil {
		return bad("biomes: %v", err)
	}
	c, err := chunk.NetworkDecode(br, buf, n, rng)
	if err != nil {
		return bad("%v", err)
	}
	col := &chunk.Column{Chunk: c}
	if col.Tick, col.BlockEntities, col.Entities, col.ScheduledBlocks, err = d.decodeRest(r, &lay); err != nil {
		return nil, lay, nil, err
	}
	return col, lay, biomes, nil
}

// decodeRest decodes what follows the biomes: the tick, block entities,
// entities and scheduled updates, and checks nothing trails them.
func (d *dictionary) decodeRest(r *reader, lay *layout) (tick int64, bes []chunk.BlockEntity, es []chunk.Entity, ss []chunk.ScheduledBlockUpdate, err error) {
	var nbtEnd int
	tick = r.varint()
	lay.nbtStart = r.off
	defer func() { lay.nbtEnd = nbtEnd }()
	if nbe := r.count(maxListLen); nbe > 0 {
		bes = make([]chunk.BlockEntity, 0, nbe)
		for i := 0; i < nbe && r.err == nil; i++ {
			be := chunk.BlockEntity{Pos: readPos(r)}
			if be.Data, err = readNBT(r); err != nil {
				return 0, nil, nil, nil, fmt.Errorf("%w: block entity %d: %v", ErrColumnCorrupt, i, err)
			}
			bes = append(bes, be)
		}
	}
	if ne := r.count(maxListLen); ne > 0 {
		es = make([]chunk.Entity, 0, ne)
		for i := 0; i < ne && r.err == nil; i++ {
			e := chunk.Entity{ID: r.varint()}
			if e.Data, err = readNBT(r); err != nil {
				return 0, nil, nil, nil, fmt.Errorf("%w: entity %d: %v", ErrColumnCorrupt, i, err)
			}
			es = append(es, e)
		}
	}
	nbtEnd = r.off
	if ns := r.count(maxListLen); ns > 0 {
		ss = make([]chunk.ScheduledBlockUpdate, 0, ns)
		d.mu.Lock()
		defer d.mu.Unlock()
		for i := 0; i < ns && r.err == nil; i++ {
			s := chunk.ScheduledBlockUpdate{Pos: readPos(r)}
			id := r.uvarint()
			if id >= uint64(len(d.idToRID)) || d.idToRID[id] == noRID {
				if r.err == nil {
					return 0, nil, nil, nil, fmt.Errorf("scheduled update %d: %w: %s", i, ErrUnknownState, d.state(int32(min(id, 1<<30))))
				}
				break
			}
			s.Block, s.Tick = d.idToRID[id], r.varint()
			ss = append(ss, s)
		}
	}
	if r.err == nil && r.off != len(r.b) {
		r.fail("%d trailing bytes", len(r.b)-r.off)
	}
	if r.err != nil {
		return 0, nil, nil, nil, fmt.Errorf("%w: %v", ErrColumnCorrupt, r.err)
	}
	return tick, bes, es, ss, nil
}

func readPos(r *reader) cube.Pos {
	return cube.Pos{int(r.varint()), int(r.varint()), int(r.varint())}
}

func readNBT(r *reader) (map[string]any, error) {
	b := r.bytes(r.count(len(r.b)))
	if r.err != nil {
		return nil, r.err
	}
	m := map[string]any{}
	if err := nbt.UnmarshalEncoding(b, &m, nbt.LittleEndian); err != nil {
		return nil, err
	}
	return m, nil
}
