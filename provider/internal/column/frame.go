package column

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
)

// appendFrame appends raw to b as a frame (see format.go), compressed with
// comp unless that would not make it smaller.
func appendFrame(b []byte, comp blazedb.Compression, raw []byte) ([]byte, error) {
	cp := scratchBufs.Get().(*[]byte)
	defer scratchBufs.Put(cp)
	stored, used, err := blazedb.Compress((*cp)[:0], comp, raw)
	if err != nil {
		return nil, err
	}
	*cp = stored
	return appendFrameBytes(b, used, len(raw), stored)
}

// appendFrameBytes appends to b the frame of rawLen bytes stored as stored
// in codec used.
func appendFrameBytes(b []byte, used blazedb.Compression, rawLen int, stored []byte) ([]byte, error) {
	id, ok := used.CodecID()
	if !ok {
		return nil, fmt.Errorf("no frame codec for compression %d", used)
	}
	b = append(b, id)
	b = binary.AppendUvarint(b, uint64(rawLen))
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
	comp, ok := blazedb.CompressionOfID(c)
	if !ok {
		r.fail("frame codec %d", c)
		return nil, false
	}
	if comp == blazedb.CompressionNone {
		if len(stored) != n {
			r.fail("raw frame of %d bytes, header says %d", len(stored), n)
			return nil, false
		}
		return stored, false
	}
	out, err := blazedb.Decompress(dst, comp, stored, n)
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

// Recode returns the column record rec with every frame that is not in
// comp compressed again with it (or stored raw where it would not shrink),
// or nil when that changes nothing. Only the frames change (and a version
// 3 record's packed flag is cleared when one does): the record reads as
// the same column. A packed whole record (version 3)
// becomes a version 2 record of frames in comp, as stores write, which
// builds before version 3 read. A record of another version, or one that
// does not read, is left as it is (nil): telling damage is for loads and
// blaze check.
func Recode(rec []byte, comp blazedb.Compression) []byte {
	if isWhole(rec) {
		body, _, err := parseBody(rec)
		if err != nil {
			return nil
		}
		out, err := unpack(body, comp)
		if err != nil {
			return nil
		}
		return out
	}
	if !isFramed(rec) {
		return nil
	}
	out := reframe(rec, rec[4], func(b, frame []byte, have blazedb.Compression, raw []byte) ([]byte, error) {
		if have == comp {
			return append(b, frame...), nil
		}
		return appendFrame(b, comp, raw)
	})
	if out != nil && out[3] == wholeVersion {
		out[4] &^= flagPacked // its frames are no longer all Pack's
	}
	return out
}

// reframe returns the version 2 record rec with flags set to flags and
// each frame replaced by what re appends for it (given the frame, its
// codec and its raw bytes), or nil when that changes no byte, or when rec
// does not read or re fails.
func reframe(rec []byte, flags byte, re func(b, frame []byte, have blazedb.Compression, raw []byte) ([]byte, error)) []byte {
	rd := &reader{b: rec, off: 5}
	n := rd.count(maxSubChunks)
	if rd.err != nil {
		return nil
	}
	out := append(make([]byte, 0, len(rec)), rec[:rd.off]...)
	out[4] = flags
	changed := flags != rec[4]
	var buf []byte
	for range n + 2 { // the sub-chunks, the biomes, block entities and entities
		start := rd.off
		c := rd.byte()
		rd.off = start
		raw, inDst := readFrame(rd, buf[:0])
		if rd.err != nil {
			return nil
		}
		if inDst {
			buf = raw
		}
		have, _ := blazedb.CompressionOfID(c)
		before := len(out)
		var err error
		if out, err = re(out, rec[start:rd.off], have, raw); err != nil {
			return nil
		}
		changed = changed || !bytes.Equal(out[before:], rec[start:rd.off])
	}
	if !changed {
		return nil
	}
	return append(out, rec[rd.off:]...)
}

// FrameCodecs adds to n the codec of each frame of the column record rec
// (a whole record's one frame; none for a record of another version). A frame whose codec is unknown,
// or a record that does not read, is an error wrapping ErrCorrupt.
func FrameCodecs(rec []byte, n map[blazedb.Compression]int) error {
	if !isFramed(rec) && !isWhole(rec) {
		return nil
	}
	r := &reader{b: rec, off: 5}
	frames := 1
	if !isWhole(rec) {
		frames = r.count(maxSubChunks) + 2
	}
	for range frames {
		c := r.byte()
		r.count(maxFrameLen)
		r.bytes(r.count(len(rec)))
		comp, ok := blazedb.CompressionOfID(c)
		if r.err == nil && !ok {
			r.fail("frame codec %d", c)
		}
		if r.err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, r.err)
		}
		n[comp]++
	}
	return nil
}

// isFramed reports whether rec is a column record whose parts are frames:
// version 2, or version 3 without the whole flag.
func isFramed(rec []byte) bool {
	return len(rec) >= 5 && string(rec[:3]) == recordSignature &&
		(rec[3] == recordVersion || rec[3] == wholeVersion && rec[4]&^flagPacked == 0)
}

// isWhole reports whether rec is a column record of version 3 with the
// whole flag: every part in one frame.
func isWhole(rec []byte) bool {
	return len(rec) >= 5 && string(rec[:3]) == recordSignature && rec[3] == wholeVersion &&
		rec[4]&flagWhole != 0 && rec[4]&^(flagPacked|flagWhole) == 0
}
