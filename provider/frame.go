package provider

import (
	"encoding/binary"
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
)

// appendFrame appends raw to b as a frame (see codec.go), compressed with
// comp unless that would not make it smaller.
func appendFrame(b []byte, comp blazedb.Compression, raw []byte) ([]byte, error) {
	cp := scratchBufs.Get().(*[]byte)
	defer scratchBufs.Put(cp)
	stored, used, err := blazedb.Compress((*cp)[:0], comp, raw)
	if err != nil {
		return nil, err
	}
	*cp = stored
	id := -1
	for i, c := range frameCodecs {
		if c == used {
			id = i
		}
	}
	if id < 0 {
		return nil, fmt.Errorf("no frame codec for compression %d", used)
	}
	b = append(b, byte(id))
	b = binary.AppendUvarint(b, uint64(len(raw)))
	b = binary.AppendUvarint(b, uint64(len(stored)))
	return append(b, stored...), nil
}

// readFrame reads a frame from r and returns its raw bytes. A frame stored
// raw is returned as a slice of the record (inDst false); a compressed one
// is decompressed and appended to dst (inDst true). Never hand a slice of
// the record to a buffer pool: records are shared and never written.
func readFrame(r *reader, dst []byte) (raw []byte, inDst bool) {
	c := r.byte()
	n := r.count(maxFrameLen)
	stored := r.bytes(r.count(len(r.b)))
	if r.err != nil {
		return nil, false
	}
	if int(c) >= len(frameCodecs) {
		r.fail("frame codec %d", c)
		return nil, false
	}
	if frameCodecs[c] == blazedb.CompressionNone {
		if len(stored) != n {
			r.fail("raw frame of %d bytes, header says %d", len(stored), n)
			return nil, false
		}
		return stored, false
	}
	out, err := blazedb.Decompress(dst, frameCodecs[c], stored, n)
	if err != nil {
		r.fail("frame: %v", err)
		return nil, false
	}
	return out, true
}

// frameRawLen returns the raw length of the well-formed frame f.
func frameRawLen(f []byte) int {
	v, _ := binary.Uvarint(f[1:])
	return int(v)
}

// framesRawLen returns the sum of the raw lengths of the first n frames of
// b, or of as many as are well-formed: only a size hint, reading (not
// checking) the frames is readFrame's.
func framesRawLen(b []byte, n int) int {
	r := &reader{b: b}
	sum := 0
	for range n {
		r.byte()
		raw := r.count(maxFrameLen)
		r.bytes(r.count(len(b)))
		if r.err != nil {
			break
		}
		sum += raw
	}
	return sum
}
