package column

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/blazeworld/blaze/provider/internal/nbt"
	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

var netBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// bodyBufs holds the buffers the bodies of version 3 records are
// decompressed into.
var bodyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// maxPooledScratch bounds the scratch buffers kept for reuse: a damaged
// record may declare frames of up to maxFrameLen.
const maxPooledScratch = 1 << 20

// maxWordBlock caps the first block of index words a decode allocates, in
// words: 256 KiB, where a column of 24 sub-chunks of two 8-bit layers
// needs 24,576.
const maxWordBlock = 1 << 16

// DecodeColumn decodes a record for a dimension of range rng, into a
// column the caller owns alone. It never panics on bad bytes: they give an
// error wrapping ErrCorrupt.
func (c *Codec) DecodeColumn(rec []byte, rng cube.Range) (col *chunk.Column, err error) {
	col, _, _, err = c.Decode(rec, rng, false)
	return col, err
}

// Decode is DecodeColumn that also returns the record's layout and, if
// keepBiomes, its biome data, uncompressed (else they are decompressed
// into a scratch buffer, and nil is returned). Neither shares memory that
// is ever written.
func (c *Codec) Decode(rec []byte, rng cube.Range, keepBiomes bool) (col *chunk.Column, lay Layout, biomes []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			col, err = nil, fmt.Errorf("%w: decoder panicked: %v", ErrCorrupt, p)
		}
	}()
	col, lay, biomes, err = c.decodeInner(rec, rng, keepBiomes)
	return
}

func (c *Codec) decodeInner(rec []byte, rng cube.Range, keepBiomes bool) (*chunk.Column, Layout, []byte, error) {
	var lay Layout
	bad := func(format string, args ...any) (*chunk.Column, Layout, []byte, error) {
		return nil, lay, nil, fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	r := &reader{b: rec}
	if string(r.bytes(3)) != recordSignature {
		return bad("no column signature")
	}
	v := int(r.byte())
	if v != recordVersion && v != wholeVersion {
		if v > wholeVersion {
			return bad("column record version %d is newer than this build reads (%d)", v, wholeVersion)
		}
		return bad("column record version %d", v)
	}
	flags := r.byte() // version 2: ignored
	rawSize := len(rec)
	// whole: the parts are in one frame, the body (version 3), read into
	// a pooled buffer (inPool) unless stored raw, when it is the record's:
	// what the column keeps of it is copied out (keep).
	whole, inPool := false, false
	if v == wholeVersion {
		if flags&^(flagPacked|flagWhole) != 0 {
			return bad("column record flags %#x", flags)
		}
		whole = flags&flagWhole != 0
	}
	if whole {
		bp := bodyBufs.Get().(*[]byte)
		defer func() {
			if cap(*bp) <= maxPooledScratch {
				bodyBufs.Put(bp)
			}
		}()
		start := r.off
		body, inDst := readFrame(r, (*bp)[:0])
		if r.err == nil && r.off != len(r.b) {
			r.fail("%d bytes after the column's frame", len(r.b)-r.off)
		}
		if r.err != nil {
			return bad("column frame: %v", r.err)
		}
		if inDst {
			*bp, inPool = body, true
		}
		rawSize += len(body) - (r.off - start)
		r = &reader{b: body}
	}
	keep := func(b []byte) []byte {
		if inPool {
			return bytes.Clone(b)
		}
		return b
	}
	n := r.count(maxSubChunks)
	// A body's table of the parts' lengths, which follow it.
	var lens [maxSubChunks + 2]int
	part := 0
	if whole {
		for i := range n + 2 {
			lens[i] = r.count(len(r.b))
		}
	}
	if r.err != nil {
		return bad("%v", r.err)
	}
	lay = Layout{version: v, subStart: r.off, subEnds: make([]int, n), RawSize: rawSize}
	// frame reads the next frame into dst and counts what it adds to the
	// raw size; in a body, the next part, a slice of the body.
	frame := func(dst []byte) ([]byte, bool) {
		if whole {
			part++
			return r.bytes(lens[part-1]), false
		}
		start := r.off
		raw, inDst := readFrame(r, dst)
		lay.RawSize += len(raw) - (r.off - start)
		return raw, inDst
	}

	sp := scratchBufs.Get().(*[]byte)
	defer scratchBufs.Put(sp)

	br, idToRID, tmpl := c.dict.Decoding(rng, c.raw != nil)
	toRID := func(id uint32) (uint64, error) {
		if int(id) >= len(idToRID) || idToRID[id] == NoRID {
			return 0, c.dict.Unknown(uint64(id))
		}
		return uint64(idToRID[id]), nil
	}
	if br == nil {
		return nil, lay, nil, errors.New("no block registry")
	}
	// With raw each sub-chunk is built as it is read (subs, ys);
	// without, it is rewritten into buf in the network encoding for
	// NetworkDecode.
	var (
		subs []*chunk.SubChunk
		ys   []byte
		a    *rawchunk.Arena
		air  = br.AirRuntimeID()
		bp   *[]byte
		buf  []byte
	)
	if c.raw != nil {
		subs, ys = make([]*chunk.SubChunk, n), make([]byte, n)
		a = &rawchunk.Arena{}
		// Index words are most of the sub-chunks' raw bytes: one block of
		// words holds them all. The frames' lengths are not yet checked,
		// so a damaged record may declare any: the hint is capped (above
		// what a real column holds).
		hint := len(r.b) - r.off
		if !whole {
			hint = framesRawLen(r.b[r.off:], n)
		}
		a.WordBlock = min(hint/4, maxWordBlock)
	} else {
		bp = netBufs.Get().(*[]byte)
		defer netBufs.Put(bp)
		buf = (*bp)[:0]
	}
	// One reader for every frame: a new one for each escaped to the heap,
	// an allocation a frame.
	var fr reader
	for i := 0; i < n; i++ {
		raw, inDst := frame((*sp)[:0])
		if r.err != nil {
			return bad("sub-chunk %d: %v", i, r.err)
		}
		if inDst && cap(raw) <= maxPooledScratch {
			*sp = raw // keep the grown buffer, unless a huge frame grew it
		}
		fr = reader{b: raw}
		sr := &fr
		var err error
		if c.raw != nil {
			subs[i], ys[i], err = buildSub(c.raw, a, sr, air, readUvarint, toRID)
		} else {
			buf, err = rewriteSub(buf, sr, readUvarint, appendVarint32, toRID)
		}
		if err != nil {
			return nil, lay, nil, fmt.Errorf("sub-chunk %d: %w", i, err)
		}
		if sr.off != len(sr.b) {
			return bad("sub-chunk %d: %d bytes after it in its frame", i, len(sr.b)-sr.off)
		}
		lay.subEnds[i] = r.off
	}
	var biomes []byte
	lay.biomeStart = r.off
	if keepBiomes {
		biomes, _ = frame(nil) // a new slice (or the record's): the snapshot keeps it
		biomes = keep(biomes)
	} else {
		var inDst bool
		if biomes, inDst = frame((*sp)[:0]); inDst && cap(biomes) <= maxPooledScratch {
			*sp = biomes
		}
	}
	lay.biomeEnd = r.off
	if r.err != nil {
		return bad("%v", r.err)
	}
	var ch *chunk.Chunk
	var err error
	if c.raw != nil {
		a.WordBlock = len(biomes) / 4 // the biomes' words, in one more block
		ch, err = buildChunk(c.raw, a, tmpl, subs, ys, biomes)
	} else {
		repeats := false
		err = walkBiomes(biomes, rng.Height()>>4+1, func(_ int, _ byte, _ []byte, palette []uint32) {
			repeats = repeats || palette == nil
		})
		if err == nil {
			buf = append(buf, biomes...)
			*bp = buf
			ch, err = chunk.NetworkDecode(br, buf, n, rng)
		}
		if err == nil && repeats {
			// NetworkDecode makes a biome storage that repeats the one
			// below the same storage; a clone gives each its own, as the
			// fast path does.
			ch = ch.Clone()
		}
	}
	if err != nil {
		return bad("%v", err)
	}
	col := &chunk.Column{Chunk: ch}

	lay.nbtStart = r.off
	raw, _ := frame(nil) // a new slice: decoded NBT may point into it
	raw = keep(raw)
	lay.nbtEnd = r.off
	if r.err != nil {
		return bad("block entities and entities: %v", r.err)
	}
	er := &reader{b: raw}
	if col.BlockEntities, col.Entities, err = decodeEntities(er); err != nil {
		return nil, lay, nil, err
	}
	if er.off != len(raw) {
		return bad("%d bytes after the entities in their frame", len(raw)-er.off)
	}
	if whole {
		lay.tail = bytes.Clone(r.b[min(r.off, len(r.b)):])
	}
	col.Tick = r.varint()
	if col.ScheduledBlocks, err = c.decodeScheduled(r, idToRID); err != nil {
		return nil, lay, nil, err
	}
	if r.err == nil && r.off != len(r.b) {
		r.fail("%d trailing bytes", len(r.b)-r.off)
	}
	if r.err != nil {
		return bad("%v", r.err)
	}
	if !keepBiomes {
		biomes = nil // they may be in scratch
	}
	return col, lay, biomes, nil
}

// decodeEntities decodes the block entities and the entities.
func decodeEntities(r *reader) (bes []chunk.BlockEntity, es []chunk.Entity, err error) {
	if nbe := r.count(maxListLen); nbe > 0 {
		bes = make([]chunk.BlockEntity, 0, nbe)
		for i := 0; i < nbe && r.err == nil; i++ {
			be := chunk.BlockEntity{Pos: readPos(r)}
			if be.Data, err = readNBT(r); err != nil {
				return nil, nil, fmt.Errorf("%w: block entity %d: %v", ErrCorrupt, i, err)
			}
			bes = append(bes, be)
		}
	}
	if ne := r.count(maxListLen); ne > 0 {
		es = make([]chunk.Entity, 0, ne)
		for i := 0; i < ne && r.err == nil; i++ {
			e := chunk.Entity{ID: r.varint()}
			if e.Data, err = readNBT(r); err != nil {
				return nil, nil, fmt.Errorf("%w: entity %d: %v", ErrCorrupt, i, err)
			}
			es = append(es, e)
		}
	}
	if r.err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, r.err)
	}
	return bes, es, nil
}

// decodeScheduled decodes the scheduled block updates, their blocks through
// idToRID.
func (c *Codec) decodeScheduled(r *reader, idToRID []uint32) ([]chunk.ScheduledBlockUpdate, error) {
	ns := r.count(maxListLen)
	if ns == 0 {
		return nil, nil
	}
	ss := make([]chunk.ScheduledBlockUpdate, 0, ns)
	for i := 0; i < ns && r.err == nil; i++ {
		s := chunk.ScheduledBlockUpdate{Pos: readPos(r)}
		id := r.uvarint()
		if id >= uint64(len(idToRID)) || idToRID[id] == NoRID {
			if r.err == nil {
				return nil, fmt.Errorf("scheduled update %d: %w", i, c.dict.Unknown(id))
			}
			break
		}
		s.Block, s.Tick = idToRID[id], r.varint()
		ss = append(ss, s)
	}
	return ss, nil
}

func readPos(r *reader) cube.Pos {
	return cube.Pos{int(r.varint()), int(r.varint()), int(r.varint())}
}

func readNBT(r *reader) (map[string]any, error) {
	b := r.bytes(r.count(len(r.b)))
	if r.err != nil {
		return nil, r.err
	}
	return nbt.Decode(b)
}
