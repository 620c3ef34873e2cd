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
	id, ok := used.CodecID()
	if !ok {
		return nil, fmt.Errorf("no frame codec for compression %d", used)
	}
	b = append(b, id)
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

// frameRecoder brings the frames of column records to one codec when
// compaction copies them (blazedb.Options.Recoder; Config.Recompress). It
// is a plain value, safe for concurrent use.
type frameRecoder struct{ comp blazedb.Compression }

// Recode returns the column record rec with every frame that is not in
// r.comp compressed again with it (or stored raw where it would not
// shrink), or nil when that changes nothing. Only the frames change: the
// record reads as the same column. A record of another version (version 1
// records are compressed whole, by the engine), or one that does not read,
// is kept as it is: telling damage is for loads and blaze check.
func (r frameRecoder) Recode(_ blazedb.Key, rec []byte) []byte {
	if len(rec) < 5 || string(rec[:3]) != recordSignature || rec[3] != recordVersion {
		return nil
	}
	rd := &reader{b: rec, off: 5}
	n := rd.count(maxSubChunks)
	if rd.err != nil {
		return nil
	}
	out := append(make([]byte, 0, len(rec)), rec[:rd.off]...)
	changed := false
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
		if frameCodecs[c] == r.comp {
			out = append(out, rec[start:rd.off]...)
			continue
		}
		before := len(out)
		var err error
		if out, err = appendFrame(out, r.comp, raw); err != nil {
			return nil
		}
		changed = changed || !bytes.Equal(out[before:], rec[start:rd.off])
	}
	if !changed {
		return nil
	}
	return append(out, rec[rd.off:]...)
}

// FrameCodecs counts the frames of the live column records by codec (a
// version 1 record, compressed whole by the engine, counts as none): how
// the world's column data is compressed, which blaze compact -recompress
// brings to one codec (CompressionNone counts frames that no codec
// shrinks). It reads every column record. Safe for concurrent use; a
// column stored meanwhile may be counted either way.
func (db *DB) FrameCodecs() (map[blazedb.Compression]int, error) {
	places, err := db.Columns()
	if err != nil {
		return nil, err
	}
	n := map[blazedb.Compression]int{}
	for _, pl := range places {
		k, err := key(pl.Pos, pl.Dim)
		if err != nil {
			return nil, err
		}
		rec, err := db.eng.GetShared(k)
		if err != nil {
			return nil, fmt.Errorf("column %v (%v): %w", pl.Pos, pl.Dim, err)
		}
		if len(rec) < 5 || string(rec[:3]) != recordSignature || rec[3] != recordVersion {
			continue
		}
		r := &reader{b: rec, off: 5}
		frames := r.count(maxSubChunks) + 2
		for range frames {
			c := r.byte()
			r.count(maxFrameLen)
			r.bytes(r.count(len(rec)))
			if r.err == nil && int(c) >= len(frameCodecs) {
				r.fail("frame codec %d", c)
			}
			if r.err != nil {
				return nil, fmt.Errorf("%w: column %v (%v): %v", ErrColumnCorrupt, pl.Pos, pl.Dim, r.err)
			}
			n[frameCodecs[c]]++
		}
	}
	return n, nil
}
