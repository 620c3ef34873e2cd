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

// Palette bit sizes a storage may have, and their index word counts.
func indexWords(bits byte) (int, bool) {
	switch bits {
	case 0:
		return 0, true
	case 1, 2, 3, 4, 5, 6, 8, 16:
		n := 4096 / (32 / int(bits))
		if bits == 3 || bits == 5 || bits == 6 {
			n++
		}
		return n, true
	}
	return 0, false
}

var errShort = errors.New("record ends early")

// indicesBelow reports whether the first 4096 indices packed in words (bits
// each, little-endian uint32 words) are all below n. Dragonfly does not
// check this when decoding, and an index past its palette would panic later
// inside the World.
func indicesBelow(words []byte, bits byte, n int) bool {
	if n >= 1<<bits {
		return true
	}
	per, mask, limit := 32/int(bits), uint32(1)<<bits-1, uint32(n)
	seen := 0
	for i := 0; i+4 <= len(words) && seen < 4096; i += 4 {
		w := binary.LittleEndian.Uint32(words[i:])
		for j := 0; j < per && seen < 4096; j++ {
			if w&mask >= limit {
				return false
			}
			w >>= bits
			seen++
		}
	}
	return true
}

// checkBiomes validates the network biome encoding of a column of subs
// sub-chunks: one storage per sub-chunk, the first not "same as previous",
// every index inside its palette.
func checkBiomes(b []byte, subs int) error {
	r := &reader{b: b}
	for i := 0; i < subs && r.err == nil; i++ {
		hdr := r.byte()
		if hdr>>1 == 0x7f {
			if i == 0 {
				r.fail("first biome storage refers to a previous one")
			}
			continue
		}
		bits := hdr >> 1
		words, ok := indexWords(bits)
		if !ok {
			r.fail("biome storage %d has %d bits per index", i, bits)
			break
		}
		idx := r.bytes(words * 4)
		n := 1
		if bits != 0 {
			n = int(readVarint32(r))
			if n < 1 || n > 4096 {
				r.fail("biome palette of %d entries", n)
				break
			}
			if !indicesBelow(idx, bits, n) {
				r.fail("biome storage %d has an index beyond its palette", i)
				break
			}
		}
		for j := 0; j < n && r.err == nil; j++ {
			readVarint32(r)
		}
	}
	if r.err == nil && r.off != len(b) {
		r.fail("%d trailing bytes", len(b)-r.off)
	}
	return r.err
}

// encodeColumn appends the record of col to dst. It also returns the ids of
// dictionary entries the record uses that are not yet on disk.
func (d *dictionary) encodeColumn(dst []byte, col *chunk.Column) ([]byte, []int32, error) {
	if col == nil || col.Chunk == nil {
		return nil, nil, errors.New("nil column or chunk")
	}
	data := chunk.Encode(col.Chunk, chunk.NetworkEncoding)
	b := append(dst, recordSignature...)
	b = append(b, recordVersion, 0)
	b = binary.AppendUvarint(b, uint64(len(data.SubChunks)))

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.br == nil {
		return nil, nil, errors.New("no block registry")
	}
	var fresh []int32
	toID := func(rid uint32) (uint64, error) {
		id, err := d.idFor(rid)
		if err != nil {
			return 0, err
		}
		if !d.entries[id].persisted {
			fresh = append(fresh, id)
		}
		return uint64(id), nil
	}
	var err error
	for i, sub := range data.SubChunks {
		r := &reader{b: sub}
		if b, err = rewriteSub(b, r, readVarint32, appendUvarint, toID); err != nil {
			return nil, nil, fmt.Errorf("sub-chunk %d: %w", i, err)
		}
		if r.off != len(sub) {
			return nil, nil, fmt.Errorf("sub-chunk %d: %d bytes not understood", i, len(sub)-r.off)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(data.Biomes)))
	b = append(b, data.Biomes...)
	b = binary.AppendVarint(b, col.Tick)

	b = binary.AppendUvarint(b, uint64(len(col.BlockEntities)))
	for _, be := range col.BlockEntities {
		b = appendPos(b, be.Pos)
		if b, err = appendNBT(b, be.Data); err != nil {
			return nil, nil, fmt.Errorf("block entity at %v: %w", be.Pos, err)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(col.Entities)))
	for _, e := range col.Entities {
		b = binary.AppendVarint(b, e.ID)
		if b, err = appendNBT(b, e.Data); err != nil {
			return nil, nil, fmt.Errorf("entity %d: %w", e.ID, err)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(col.ScheduledBlocks)))
	for _, s := range col.ScheduledBlocks {
		b = appendPos(b, s.Pos)
		id, err := toID(s.Block)
		if err != nil {
			return nil, nil, fmt.Errorf("scheduled update at %v: %w", s.Pos, err)
		}
		b = binary.AppendUvarint(b, id)
		b = binary.AppendVarint(b, s.Tick)
	}
	return b, fresh, nil
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

// reader decodes a record without ever reading past its end.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("at byte %d: %s", r.off, fmt.Sprintf(format, args...))
	}
}

func (r *reader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.fail("%v", errShort)
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.off {
		r.fail("%v", errShort)
		return nil
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad uvarint")
		return 0
	}
	r.off += n
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.off += n
	return v
}

// count reads a list length and checks it against limit.
func (r *reader) count(limit int) int {
	n := r.uvarint()
	if n > uint64(limit) {
		r.fail("list of %d exceeds %d", n, limit)
		return 0
	}
	return int(n)
}

// readVarint32 reads a network-encoding palette entry.
func readVarint32(r *reader) uint64 {
	v := r.varint()
	if v < -1<<31 || v >= 1<<31 {
		r.fail("varint32 out of range")
	}
	return uint64(uint32(int32(v)))
}

func readUvarint(r *reader) uint64 { return r.uvarint() }

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
	defer func() {
		if p := recover(); p != nil {
			col, err = nil, fmt.Errorf("%w: decoder panicked: %v", ErrColumnCorrupt, p)
		}
	}()
	r := &reader{b: rec}
	if string(r.bytes(3)) != recordSignature {
		return nil, fmt.Errorf("%w: no column signature", ErrColumnCorrupt)
	}
	if v := r.byte(); v != recordVersion {
		if v > recordVersion {
			return nil, fmt.Errorf("%w: column record version %d is newer than this build reads (%d)", ErrColumnCorrupt, v, recordVersion)
		}
		return nil, fmt.Errorf("%w: column record version %d", ErrColumnCorrupt, v)
	}
	r.byte() // flags
	n := r.count(maxSubChunks)
	if r.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrColumnCorrupt, r.err)
	}

	bp := netBufs.Get().(*[]byte)
	defer netBufs.Put(bp)
	buf := (*bp)[:0]

	d.mu.Lock()
	br, idToRID := d.br, d.idToRID
	toRID := func(id uint32) (uint64, error) {
		if int(id) >= len(idToRID) || idToRID[id] == noRID {
			return 0, fmt.Errorf("%w: %s", ErrUnknownState, d.state(int32(id)))
		}
		return uint64(idToRID[id]), nil
	}
	for i := 0; i < n; i++ {
		var serr error
		if buf, serr = rewriteSub(buf, r, readUvarint, appendVarint32, toRID); serr != nil {
			d.mu.Unlock()
			return nil, fmt.Errorf("sub-chunk %d: %w", i, serr)
		}
	}
	d.mu.Unlock()
	if br == nil {
		return nil, errors.New("no block registry")
	}
	biomes := r.bytes(r.count(len(rec)))
	buf = append(buf, biomes...)
	*bp = buf
	if r.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrColumnCorrupt, r.err)
	}
	if err := checkBiomes(biomes, rng.Height()>>4+1); err != nil {
		return nil, fmt.Errorf("%w: biomes: %v", ErrColumnCorrupt, err)
	}
	c, err := chunk.NetworkDecode(br, buf, n, rng)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrColumnCorrupt, err)
	}
	col = &chunk.Column{Chunk: c, Tick: r.varint()}

	if nbe := r.count(maxListLen); nbe > 0 {
		col.BlockEntities = make([]chunk.BlockEntity, 0, nbe)
		for i := 0; i < nbe && r.err == nil; i++ {
			be := chunk.BlockEntity{Pos: readPos(r)}
			if be.Data, err = readNBT(r); err != nil {
				return nil, fmt.Errorf("%w: block entity %d: %v", ErrColumnCorrupt, i, err)
			}
			col.BlockEntities = append(col.BlockEntities, be)
		}
	}
	if ne := r.count(maxListLen); ne > 0 {
		col.Entities = make([]chunk.Entity, 0, ne)
		for i := 0; i < ne && r.err == nil; i++ {
			e := chunk.Entity{ID: r.varint()}
			if e.Data, err = readNBT(r); err != nil {
				return nil, fmt.Errorf("%w: entity %d: %v", ErrColumnCorrupt, i, err)
			}
			col.Entities = append(col.Entities, e)
		}
	}
	if ns := r.count(maxListLen); ns > 0 {
		col.ScheduledBlocks = make([]chunk.ScheduledBlockUpdate, 0, ns)
		d.mu.Lock()
		for i := 0; i < ns && r.err == nil; i++ {
			s := chunk.ScheduledBlockUpdate{Pos: readPos(r)}
			id := r.uvarint()
			if id > 1<<31 {
				r.fail("dictionary id %d out of range", id)
				break
			}
			rid, err := toRID(uint32(id))
			if err != nil {
				d.mu.Unlock()
				return nil, fmt.Errorf("scheduled update %d: %w", i, err)
			}
			s.Block, s.Tick = uint32(rid), r.varint()
			col.ScheduledBlocks = append(col.ScheduledBlocks, s)
		}
		d.mu.Unlock()
	}
	if r.err == nil && r.off != len(rec) {
		r.fail("%d trailing bytes", len(rec)-r.off)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrColumnCorrupt, r.err)
	}
	return col, nil
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
