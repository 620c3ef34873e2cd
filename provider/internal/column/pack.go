package column

import (
	"fmt"
	"sync"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Packing (issue 41). Stores compress each part of a column on its own,
// fast, so that storing a column again compresses only the parts that
// changed. Compaction packs the records it copies: their frames compressed
// again at the codec's strongest setting, which decodes as fast (an LZ4
// block, or a zstd frame, reads the same whatever level wrote it), and the
// record marked packed (flagPacked) so that the next compaction leaves it
// alone instead of compressing it again for nothing. A store writes a new
// record unpacked, as ever; the next compaction packs it.

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

// codec is the frame codec p writes.
func (p packer) codec() blazedb.Compression {
	if p == packZstd {
		return blazedb.CompressionZstd
	}
	return blazedb.CompressionLZ4
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

// appendPacked appends raw to b as a frame compressed by p.
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

// Packs reports whether Pack packs with codec comp: LZ4 and zstd do;
// CompressionDefault packs each record in its own codec.
func Packs(comp blazedb.Compression) bool {
	return comp == blazedb.CompressionDefault || packerOf(comp) != packNone
}

// Pack returns the column record rec packed (see above) with codec comp
// at its strongest setting, or with CompressionDefault in the codec most
// of its frames are in (LZ4 on a tie; none when they are all stored raw
// or in Snappy). It returns nil when rec is packed with that codec
// already, when there is nothing to pack it with, or when it is not a
// record this build packs: a record that does not read is left as it is,
// for loads and blaze check to report. Only the frames and the flags
// change: the record reads as the same column.
func Pack(rec []byte, comp blazedb.Compression) []byte {
	if len(rec) < 5 || string(rec[:3]) != recordSignature || rec[3] != recordVersion {
		return nil
	}
	n := map[blazedb.Compression]int{}
	if FrameCodecs(rec, n) != nil {
		return nil
	}
	if comp == blazedb.CompressionDefault {
		comp = blazedb.CompressionLZ4
		if n[blazedb.CompressionZstd] > n[blazedb.CompressionLZ4] {
			comp = blazedb.CompressionZstd
		} else if n[blazedb.CompressionLZ4] == 0 {
			return nil
		}
	}
	p := packerOf(comp)
	if p == packNone {
		return nil
	}
	if rec[4]&flagPacked != 0 && framesIn(n, comp) {
		return nil
	}
	return reframe(rec, rec[4]|flagPacked, func(b, _ []byte, _ blazedb.Compression, raw []byte) ([]byte, error) {
		return p.appendFrame(b, raw)
	})
}

// framesIn reports whether the frame counts n hold no frame but those in
// comp or stored raw.
func framesIn(n map[blazedb.Compression]int, comp blazedb.Compression) bool {
	for c := range n {
		if c != comp && c != blazedb.CompressionNone {
			return false
		}
	}
	return true
}

// Packed reports whether the column record rec is marked packed.
func Packed(rec []byte) bool {
	return len(rec) >= 5 && string(rec[:3]) == recordSignature && rec[3] == recordVersion && rec[4]&flagPacked != 0
}
