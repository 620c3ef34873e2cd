package column

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Packing (issue 41). Stores compress each part of a column on its own,
// fast, so that storing a column again compresses only the parts that
// changed. Compaction packs the records it copies: every part in one frame
// (a version 3 record with the whole flag), compressed at the codec's
// strongest setting, which finds what repeats between the parts too and
// decodes as fast (an LZ4 block, or a zstd frame, reads the same whatever
// level wrote it); marked packed, so that the next compaction leaves it
// alone instead of compressing it again for nothing. A store writes a new
// record in version 2, as ever; the next compaction packs it.

// A packer is how Pack compresses: a codec at its strongest setting.
type packer uint8

const (
	packNone packer = iota
	// packLZ4 is LZ4 at high compression (level 9): LZ4 blocks, decoded as
	// fast as those stores write.
	packLZ4
	// packZstd is zstd at its best level.
	packZstd
)

// packerOf returns the packer of codec comp: none for CompressionNone or
// CompressionSnappy.
func packerOf(comp blazedb.Compression) packer {
	switch comp {
	case blazedb.CompressionLZ4:
		return packLZ4
	case blazedb.CompressionZstd:
		return packZstd
	}
	return packNone
}

var (
	lz4HCs = sync.Pool{New: func() any { return &lz4.CompressorHC{Level: lz4.Level9} }}

	zstdBestOnce sync.Once
	zstdBest     *zstd.Encoder
	zstdBestErr  error
)

// compress appends raw compressed by p to dst and returns the result and
// the codec used: CompressionNone, raw as it is, where p would not shrink
// it. The output is deterministic.
func (p packer) compress(dst []byte, raw []byte) ([]byte, blazedb.Compression, error) {
	start := len(dst)
	switch p {
	case packLZ4:
		need := lz4.CompressBlockBound(len(raw))
		if cap(dst)-start < need {
			dst = append(make([]byte, 0, start+need), dst...)
		}
		c := lz4HCs.Get().(*lz4.CompressorHC)
		n, err := c.CompressBlock(raw, dst[start:start+need])
		lz4HCs.Put(c)
		if err != nil {
			return dst, 0, fmt.Errorf("lz4: %w", err)
		}
		if n > 0 && n < len(raw) {
			return dst[:start+n], blazedb.CompressionLZ4, nil
		}
	case packZstd:
		zstdBestOnce.Do(func() {
			zstdBest, zstdBestErr = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedBestCompression))
		})
		if zstdBestErr != nil {
			return dst, 0, zstdBestErr
		}
		if out := zstdBest.EncodeAll(raw, dst[start:start]); len(out) < len(raw) {
			return append(dst[:start], out...), blazedb.CompressionZstd, nil
		}
	default:
		return dst, 0, fmt.Errorf("packer %d", p)
	}
	return append(dst[:start], raw...), blazedb.CompressionNone, nil
}

// Packs reports whether Pack packs with codec comp: LZ4 and zstd do;
// CompressionDefault packs each record in its own codec.
func Packs(comp blazedb.Compression) bool {
	return comp == blazedb.CompressionDefault || packerOf(comp) != packNone
}

// Pack returns the column record rec packed (see above) with codec comp
// at its strongest setting, or with CompressionDefault in its own codec:
// that of a packed record's frame, or the one most of a version 2
// record's frames are in (LZ4 on a tie; none when they are all stored raw
// or in Snappy). It returns nil when rec is packed with that codec
// already, when there is nothing to pack it with, or when it is not a
// record this build packs: a record that does not read is left as it is,
// for loads and blaze check to report. The packed record reads as the
// same column.
func Pack(rec []byte, comp blazedb.Compression) []byte {
	if isWhole(rec) && rec[4]&flagPacked != 0 && len(rec) > 5 {
		// Packed: left alone without decompressing it, when in comp.
		if have, _ := blazedb.CompressionOfID(rec[5]); comp == blazedb.CompressionDefault || have == comp {
			return nil
		}
	}
	body, have, err := parseBody(rec)
	if err != nil {
		return nil
	}
	if comp == blazedb.CompressionDefault {
		comp = have
	}
	p := packerOf(comp)
	if p == packNone || len(body) > maxFrameLen {
		return nil
	}
	out := append(make([]byte, 0, len(rec)), recordSignature...)
	out = append(out, wholeVersion, flagPacked|flagWhole)
	if out, err = p.appendFrame(out, body); err != nil || bytes.Equal(out, rec) {
		return nil
	}
	if len(out) >= len(rec) && rec[3] == recordVersion {
		return nil // rare, tiny columns: as stored is smaller
	}
	return out
}

// parseBody returns the body of the column record rec (the parts of a
// version 2 record unframed, their lengths first, as a version 3 record
// with the whole flag holds them) and its codec: that of its one frame,
// or the one most of its frames are in (LZ4 on a tie; CompressionNone
// when none is in LZ4 or zstd). A record that does not read gives an
// error.
func parseBody(rec []byte) ([]byte, blazedb.Compression, error) {
	whole := isWhole(rec)
	if !whole && !isFramed(rec) {
		return nil, 0, errors.New("not a column record of version 2 or 3")
	}
	r := &reader{b: rec, off: 5}
	if whole {
		c := r.byte()
		r.off--
		body, _ := readFrame(r, nil)
		if r.err == nil && r.off != len(rec) {
			r.fail("%d trailing bytes", len(rec)-r.off)
		}
		comp, _ := blazedb.CompressionOfID(c)
		return body, comp, r.err
	}
	n := r.count(maxSubChunks)
	if r.err != nil {
		return nil, 0, r.err
	}
	parts := make([][]byte, n+2) // the sub-chunks, the biomes, block entities and entities
	counts := map[blazedb.Compression]int{}
	size := 0
	for i := range parts {
		c := r.byte()
		r.off--
		parts[i], _ = readFrame(r, nil)
		if r.err != nil {
			return nil, 0, r.err
		}
		comp, _ := blazedb.CompressionOfID(c)
		counts[comp]++
		size += len(parts[i])
	}
	body := binary.AppendUvarint(make([]byte, 0, size+3*len(parts)+len(rec)-r.off+1), uint64(n))
	for _, p := range parts {
		body = binary.AppendUvarint(body, uint64(len(p)))
	}
	for _, p := range parts {
		body = append(body, p...)
	}
	comp := blazedb.CompressionLZ4
	if counts[blazedb.CompressionZstd] > counts[blazedb.CompressionLZ4] {
		comp = blazedb.CompressionZstd
	} else if counts[blazedb.CompressionLZ4] == 0 {
		comp = blazedb.CompressionNone
	}
	return append(body, rec[r.off:]...), comp, nil
}

// unpack returns the version 2 record of the body of a version 3 record
// with the whole flag, each part a frame compressed with comp.
func unpack(body []byte, comp blazedb.Compression) ([]byte, error) {
	r := &reader{b: body}
	n := r.count(maxSubChunks)
	lens := make([]int, n+2)
	for i := range lens {
		lens[i] = r.count(len(body))
	}
	out := append(make([]byte, 0, len(body)/2), recordSignature...)
	out = append(out, recordVersion, 0)
	out = binary.AppendUvarint(out, uint64(n))
	for _, l := range lens {
		part := r.bytes(l)
		if r.err != nil {
			return nil, r.err
		}
		var err error
		if out, err = appendFrame(out, comp, part); err != nil {
			return nil, err
		}
	}
	return append(out, body[r.off:]...), nil
}

// Packed reports whether the column record rec is marked packed (a
// version 3 record).
func Packed(rec []byte) bool {
	return (isFramed(rec) || isWhole(rec)) && rec[3] == wholeVersion && rec[4]&flagPacked != 0
}

// Whole reports whether rec is a column record with every part in one
// frame (version 3, the whole flag).
func Whole(rec []byte) bool { return isWhole(rec) }

// appendFrame appends raw to b as a frame compressed by p.
func (p packer) appendFrame(b []byte, raw []byte) ([]byte, error) {
	cp := scratchBufs.Get().(*[]byte)
	defer scratchBufs.Put(cp)
	stored, used, err := p.compress((*cp)[:0], raw)
	if err != nil {
		return nil, err
	}
	*cp = stored
	return appendFrameBytes(b, used, len(raw), stored)
}
