package blazedb

import (
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression selects the codec for new values (Options.Compression). It
// is a plain value, safe to copy and share.
type Compression uint8

const (
	// CompressionDefault is LZ4.
	CompressionDefault Compression = iota
	// CompressionNone stores values as they are.
	CompressionNone
	// CompressionLZ4 uses LZ4 blocks (github.com/pierrec/lz4/v4): the
	// fastest to decode.
	CompressionLZ4
	// CompressionSnappy uses Snappy blocks (github.com/klauspost/compress/snappy,
	// which writes the Snappy block format and reads what
	// github.com/golang/snappy wrote).
	CompressionSnappy
	// CompressionZstd uses Zstandard (github.com/klauspost/compress/zstd):
	// the smallest files, slower to write.
	CompressionZstd
)

func (c Compression) valid() bool { return c <= CompressionZstd }

func (c Compression) codec() codec {
	switch c {
	case CompressionNone:
		return codecNone
	case CompressionSnappy:
		return codecSnappy
	case CompressionZstd:
		return codecZstd
	}
	return codecLZ4
}

// codec is the compression id stored in every record header.
// Part of the on-disk format: never renumber.
type codec uint8

const (
	codecNone   codec = 0
	codecLZ4    codec = 1
	codecSnappy codec = 2
	codecZstd   codec = 3
)

func (c codec) valid() bool { return c <= codecZstd }

var (
	lz4Pool = sync.Pool{New: func() any { return new(lz4.Compressor) }}

	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
	zstdErr  error
)

func zstdInit() error {
	zstdOnce.Do(func() {
		zstdEnc, zstdErr = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
		if zstdErr != nil {
			return
		}
		zstdDec, zstdErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxValueLen))
	})
	return zstdErr
}

// incompressible is the length up to which no codec can shrink anything:
// LZ4 writes such inputs as one literal run (a token and every byte),
// Snappy as a length and a literal, zstd with a frame header. Skipping them
// changes no output (TestTinyInputsNeverShrink), and saves LZ4's clearing
// of its 8 KiB table for each sub-chunk of air, five bytes long.
const incompressible = 12

// compress appends src compressed with c to dst and returns the result and
// the codec actually used: a value that does not shrink is stored raw.
func compress(dst []byte, c codec, src []byte) ([]byte, codec, error) {
	start := len(dst)
	if len(src) <= incompressible {
		return append(dst, src...), codecNone, nil
	}
	switch c {
	case codecLZ4:
		dst = grow(dst, lz4.CompressBlockBound(len(src)))
		comp := lz4Pool.Get().(*lz4.Compressor)
		n, err := comp.CompressBlock(src, dst[start:])
		lz4Pool.Put(comp)
		if err != nil {
			return dst[:start], 0, fmt.Errorf("blazedb: lz4: %w", err)
		}
		if n > 0 && n < len(src) {
			return dst[:start+n], codecLZ4, nil
		}
	case codecSnappy:
		dst = grow(dst, snappy.MaxEncodedLen(len(src)))
		out := snappy.Encode(dst[start:], src)
		if len(out) < len(src) {
			return dst[:start+len(out)], codecSnappy, nil
		}
	case codecZstd:
		if err := zstdInit(); err != nil {
			return dst[:start], 0, err
		}
		out := zstdEnc.EncodeAll(src, dst[start:start])
		if len(out) < len(src) {
			// EncodeAll may have reallocated; copy into place if so.
			dst = append(dst[:start], out...)
			return dst, codecZstd, nil
		}
	}
	return append(dst[:start], src...), codecNone, nil
}

// grow makes room for n more bytes after len(b) and returns b extended to
// len(b)+n.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

// decompressAppend appends to dst what src decodes to, which must be
// exactly rawLen bytes. A panic inside a codec is turned into an error:
// bad bytes never crash the server.
func decompressAppend(dst []byte, c codec, src []byte, rawLen int) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("codec %d panicked: %v", c, r)
		}
	}()
	if rawLen < 0 || rawLen > maxValueLen {
		return nil, fmt.Errorf("raw length %d out of range", rawLen)
	}
	if most := maxExpansion(c, len(src)); rawLen > most {
		// Refused before room for rawLen bytes is made: a few bad bytes
		// never cost an allocation of up to maxValueLen.
		return nil, fmt.Errorf("raw length %d: %d bytes of codec %d decode to at most %d", rawLen, len(src), c, most)
	}
	start := len(dst)
	switch c {
	case codecNone:
		if len(src) != rawLen {
			return nil, fmt.Errorf("stored length %d != raw length %d", len(src), rawLen)
		}
		return append(dst, src...), nil
	case codecLZ4:
		dst = grow(dst, rawLen)
		n, err := lz4.UncompressBlock(src, dst[start:])
		if err != nil {
			return nil, fmt.Errorf("lz4: %w", err)
		}
		if n != rawLen {
			return nil, fmt.Errorf("lz4: got %d bytes, want %d", n, rawLen)
		}
		return dst, nil
	case codecSnappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if n != rawLen {
			return nil, fmt.Errorf("snappy: decoded length %d, want %d", n, rawLen)
		}
		dst = grow(dst, rawLen)
		// DecodeStrict, not Decode: Decode is s2's decoder, which also takes
		// s2's extensions to the format (a copy of offset 0 repeating the
		// last offset). Snappy records hold the standard block format only,
		// so bytes outside it are damage, refused as golang/snappy refused
		// them.
		if _, err = snappy.DecodeStrict(dst[start:], src); err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		return dst, nil
	case codecZstd:
		if err := zstdInit(); err != nil {
			return nil, err
		}
		out, err = zstdDec.DecodeAll(src, slices.Grow(dst, rawLen))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		if len(out)-start != rawLen {
			return nil, fmt.Errorf("zstd: got %d bytes, want %d", len(out)-start, rawLen)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown codec %d", c)
}

// The most raw bytes one stored byte can decode to, by codec: LZ4's
// longest match per byte is a length byte of 255; Snappy's a 3-byte copy of
// 64 bytes; zstd's a 4-byte RLE block (3 bytes of header, 1 of value) of at
// most 128 KiB. Every input that decodes has a ratio below these (8 MiB of
// zeros compress 254.8, 21.3 and 9,331 to 1).
const (
	lz4MaxRatio    = 255
	snappyMaxRatio = 22
	zstdMaxRatio   = 128 << 10 / 4
)

// maxExpansion returns the most bytes that n stored bytes of codec c can
// decode to, so that a raw length beyond it is refused as corrupt before
// anything is allocated for it.
func maxExpansion(c codec, n int) int {
	switch c {
	case codecLZ4:
		return lz4MaxRatio * n
	case codecSnappy:
		return snappyMaxRatio * n
	case codecZstd:
		return zstdMaxRatio * n
	case codecNone:
		return n
	}
	return maxValueLen // an unknown codec, refused as such below
}

// Compress appends src compressed with c to dst, for callers that compress
// parts of their values themselves (the provider compresses each sub-chunk
// of a column on its own, so that storing a column again compresses only
// what changed). It returns the codec actually used: CompressionNone when
// compression would not shrink src. The output is deterministic: the same
// src and c always give the same bytes. An unknown c gives
// ErrInvalidOptions.
func Compress(dst []byte, c Compression, src []byte) ([]byte, Compression, error) {
	if !c.valid() {
		return dst, 0, fmt.Errorf("%w: compression %d", ErrInvalidOptions, c)
	}
	out, used, err := compress(dst, c.codec(), src)
	return out, used.compression(), err
}

// Decompress appends to dst what src, compressed by Compress with codec c,
// decodes to, checking that it is exactly rawLen bytes (no more than the
// largest value the engine stores). Bad bytes give an error wrapping
// ErrCorrupt, never a panic.
func Decompress(dst []byte, c Compression, src []byte, rawLen int) ([]byte, error) {
	if !c.valid() || c == CompressionDefault {
		return nil, fmt.Errorf("%w: unknown compression %d", ErrCorrupt, c)
	}
	out, err := decompressAppend(dst, c.codec(), src, rawLen)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return out, nil
}

// compression is the Compression that selects codec c.
func (c codec) compression() Compression {
	switch c {
	case codecLZ4:
		return CompressionLZ4
	case codecSnappy:
		return CompressionSnappy
	case codecZstd:
		return CompressionZstd
	}
	return CompressionNone
}

// CodecID returns the id the engine's record headers store for c (part of
// the on-disk format), for a caller that frames parts it compressed with
// Compress itself and records their codec the engine's way; false for
// CompressionDefault or an unknown c. CompressionOfID is its inverse: the
// engine's table of codec ids is the only one.
func (c Compression) CodecID() (byte, bool) {
	if !c.valid() || c == CompressionDefault {
		return 0, false
	}
	return byte(c.codec()), true
}

// CompressionOfID returns the Compression whose codec id (CodecID) is id.
func CompressionOfID(id byte) (Compression, bool) {
	if !codec(id).valid() {
		return 0, false
	}
	return codec(id).compression(), true
}
