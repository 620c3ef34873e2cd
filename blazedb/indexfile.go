package blazedb

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/klauspost/compress/zstd"

	"github.com/blazeworld/blaze/blazedb/internal/morton"
)

// index.dat is a snapshot of the index and the part of chunks.dat it
// covers. It is only an accelerator: when it is missing, damaged, or made
// for another generation of chunks.dat, Open rebuilds the index by scanning.
//
// Version 3 (written, issue 41): the header as version 2's up to the next
// sequence number, then the entries and the history as one zstd frame.
//
//	+--------+------+-------------------------------------------------+
//	| offset | size | field                                           |
//	+--------+------+-------------------------------------------------+
//	|      0 |    8 | signature "\x89BLZIDX\n"                        |
//	|      8 |    4 | format version, uint32 LE (3)                   |
//	|     12 |    4 | flags (0)                                       |
//	|     16 |    8 | generation of the chunks.dat described          |
//	|     24 |    8 | covered: log offset up to which it is complete  |
//	|     32 |    8 | next sequence number                            |
//	|     40 |    8 | raw length r of the payload                     |
//	|     48 |    … | payload: one zstd frame (RFC 8878) of r bytes   |
//	|    end |    4 | CRC-32C of everything before it                 |
//	+--------+------+-------------------------------------------------+
//
// The payload, once decompressed (uvarint and varint as encoding/binary
// writes them; varint is zigzag):
//
//	+--------------------+--------------------------------------------+
//	| field              | encoding                                   |
//	+--------------------+--------------------------------------------+
//	| bodies b           | uvarint (alias.go)                         |
//	| b bodies,          | first copy's offset minus the previous     |
//	|   ascending        |   body's (the first: minus 40), uvarint;   |
//	|                    |   second copy's minus the first's, uvarint |
//	| dimensions d       | uvarint                                    |
//	| d dimensions,      | dimension int32 LE, entries n uvarint, then|
//	|   ascending        |   n chunk entries in Morton order          |
//	| chunk entry        | Morton code minus the previous entry's of  |
//	|                    |   the dimension (the first: the code), at  |
//	|                    |   least 1 after the first, uvarint; then   |
//	|                    |   the location                             |
//	| named entries m    | uvarint                                    |
//	| m named entries,   | name length uvarint, name, then the        |
//	|   names ascending  |   location                                 |
//	| location           | offset minus the end (offset + size) of    |
//	|                    |   the entry before it in the file, chunk   |
//	|                    |   or named (the first: minus 40), varint;  |
//	|                    |   size uvarint; vsum uint32 LE             |
//	| history section    | version 3's (historyindex.go)              |
//	+--------------------+--------------------------------------------+
//
// A compacted log holds its records in the index's order, so most
// locations are a zero, a size and a checksum, and keys aliased to one
// body (alias.go) repeat the same bytes for zstd to find: the entries of
// an arena's aliased columns take about what its alias list does.
//
// Version 2 (released; still read, never written):
//
//	+--------+------+-------------------------------------------------+
//	| offset | size | field                                           |
//	+--------+------+-------------------------------------------------+
//	|      0 |    8 | signature "\x89BLZIDX\n"                        |
//	|      8 |    4 | format version, uint32 LE (2)                   |
//	|     12 |    4 | flags (0)                                       |
//	|     16 |    8 | generation of the chunks.dat described          |
//	|     24 |    8 | covered: log offset up to which it is complete  |
//	|     32 |    8 | next sequence number                            |
//	|     40 |    8 | number of chunk entries c                       |
//	|     48 |    8 | number of named entries m                       |
//	|     56 | 28*c | chunk entries: dim, x, z int32; vsum uint32;    |
//	|        |      |   offset uint64; size uint32                    |
//	|      … |    … | m named entries: name length uint16, name,      |
//	|        |      |   vsum uint32, offset uint64, size uint32       |
//	|      … |    … | history section (drawn in historyindex.go)      |
//	|    end |    4 | CRC-32C of everything before it                 |
//	+--------+------+-------------------------------------------------+
//
// Version 1 (without the history section) was never released: it is
// refused with ErrOldVersion, and, as index.dat is only an accelerator,
// Open then rebuilds the index by scanning the log, as it does for any
// index.dat it cannot use (Recovery.IndexProblem says why). From now on
// a change of this format is a new version, and the reader of every
// released one stays (version_test.go).
//
// Part of the on-disk format.
const (
	indexSignature      = "\x89BLZIDX\n"
	indexVersion        = 3 // written and read; 2 is read; 1 was never released
	indexVersion2       = 2
	indexHeaderSize     = 56 // version 2
	indexChunkEntrySize = 28 // version 2
	indexNamedFixed     = 2 + 4 + 8 + 4
	indexV3HeaderSize   = 48
	// maxIndexPayload bounds the decompressed payload of version 3: far
	// beyond any world's (a chunk entry takes about 8 bytes), and it
	// keeps a damaged length from asking for more memory than that.
	maxIndexPayload = 1 << 30
)

// indexMeta is what index.dat records besides the entries.
type indexMeta struct {
	generation uint64
	covered    int64
	nextSeq    uint64
}

// encodeIndex returns index.dat of version indexVersion for ix and m.
func encodeIndex(ix *index, m indexMeta) []byte {
	return wrapIndexPayload(m, appendIndexPayload(nil, ix))
}

// wrapIndexPayload returns index.dat of version 3 holding m and payload p.
func wrapIndexPayload(m indexMeta, p []byte) []byte {
	if err := zstdInit(); err != nil {
		// The encoder's options are constant: it cannot fail to build.
		panic(err)
	}
	b := make([]byte, indexV3HeaderSize, indexV3HeaderSize+len(p)/2+64)
	copy(b, indexSignature)
	binary.LittleEndian.PutUint32(b[8:], indexVersion)
	binary.LittleEndian.PutUint64(b[16:], m.generation)
	binary.LittleEndian.PutUint64(b[24:], uint64(m.covered))
	binary.LittleEndian.PutUint64(b[32:], m.nextSeq)
	binary.LittleEndian.PutUint64(b[40:], uint64(len(p)))
	b = zstdEnc.EncodeAll(p, b)
	return binary.LittleEndian.AppendUint32(b, crc(b))
}

// appendIndexPayload appends the payload of index.dat version 3.
func appendIndexPayload(b []byte, ix *index) []byte {
	var end int64 = fileHeaderSize
	loc := func(e entry) {
		b = binary.AppendVarint(b, e.off-end)
		b = binary.AppendUvarint(b, uint64(e.size))
		b = binary.LittleEndian.AppendUint32(b, e.vsum)
		end = e.off + int64(e.size)
	}
	firsts := slices.Sorted(maps.Keys(ix.bodies))
	b = binary.AppendUvarint(b, uint64(len(firsts)))
	var prevBody int64 = fileHeaderSize
	for _, f := range firsts {
		b = binary.AppendUvarint(b, uint64(f-prevBody))
		b = binary.AppendUvarint(b, uint64(ix.bodies[f].second-f))
		prevBody = f
	}
	var dims []int32
	counts := map[int32]int{}
	for _, d := range ix.sortedDims() {
		n := 0
		ix.dims[d].ascend(0, ^uint64(0), func(uint64, entry) bool { n++; return true })
		if n > 0 { // a dimension whose keys were all deleted is left out
			dims = append(dims, d)
			counts[d] = n
		}
	}
	b = binary.AppendUvarint(b, uint64(len(dims)))
	for _, d := range dims {
		t, n := ix.dims[d], counts[d]
		b = binary.LittleEndian.AppendUint32(b, uint32(d))
		b = binary.AppendUvarint(b, uint64(n))
		var prev uint64
		t.ascend(0, ^uint64(0), func(code uint64, e entry) bool {
			b = binary.AppendUvarint(b, code-prev)
			prev = code
			loc(e)
			return true
		})
	}
	names := slices.Sorted(maps.Keys(ix.named))
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		b = binary.AppendUvarint(b, uint64(len(n)))
		b = append(b, n...)
		loc(ix.named[n])
	}
	return appendHistoryV3(b, ix.hist, ix)
}

// decodeIndex parses index.dat, of version 3 or 2. Every entry must lie
// inside the covered part of the log; anything else is ErrCorrupt (and the
// caller rebuilds).
func decodeIndex(b []byte) (*index, indexMeta, error) {
	bad := func(off int, format string, args ...any) (*index, indexMeta, error) {
		return nil, indexMeta{}, corruptf(indexName, int64(off), format, args...)
	}
	if len(b) < len(indexSignature) || string(b[:len(indexSignature)]) != indexSignature {
		return bad(0, "no index signature")
	}
	if len(b) < 12 {
		return bad(0, "%d bytes is too short", len(b))
	}
	switch v := binary.LittleEndian.Uint32(b[8:]); {
	case v == indexVersion:
		return decodeIndexV3(b)
	case v == indexVersion2:
		return decodeIndexV2(b)
	case v > indexVersion:
		return nil, indexMeta{}, fmt.Errorf("%w: %s is format version %d; this build reads version %d", ErrVersion, indexName, v, indexVersion)
	case v == 1:
		return nil, indexMeta{}, fmt.Errorf("%w: %s is format version %d, a development format no release wrote; this build reads version %d", ErrOldVersion, indexName, v, indexVersion)
	default:
		return bad(8, "format version %d", v)
	}
}

// checkIndexMeta refuses a covered length outside the log's bounds.
func checkIndexMeta(m indexMeta) error {
	if m.covered < fileHeaderSize || m.covered > 1<<56 {
		return corruptf(indexName, 24, "covered offset %d", m.covered)
	}
	return nil
}

// checkIndexEntry refuses an entry outside the covered log.
func checkIndexEntry(at int, e entry, covered int64) error {
	if e.off < fileHeaderSize || e.size < recHeaderSize || e.off > covered || int64(e.size) > covered-e.off {
		return corruptf(indexName, int64(at), "entry at %d+%d outside the covered log of %d bytes", e.off, e.size, covered)
	}
	return nil
}

// decodeIndexV3 parses index.dat of version 3. Offsets in its errors past
// the header are offsets in the decompressed payload.
func decodeIndexV3(b []byte) (*index, indexMeta, error) {
	bad := func(off int, format string, args ...any) (*index, indexMeta, error) {
		return nil, indexMeta{}, corruptf(indexName, int64(off), format, args...)
	}
	if len(b) < indexV3HeaderSize+4 {
		return bad(0, "%d bytes is too short", len(b))
	}
	if got, want := binary.LittleEndian.Uint32(b[len(b)-4:]), crc(b[:len(b)-4]); got != want {
		return bad(len(b)-4, "checksum %08x, want %08x", got, want)
	}
	if f := binary.LittleEndian.Uint32(b[12:]); f != 0 {
		return bad(12, "flags %08x", f)
	}
	m := indexMeta{
		generation: binary.LittleEndian.Uint64(b[16:]),
		covered:    int64(binary.LittleEndian.Uint64(b[24:])),
		nextSeq:    binary.LittleEndian.Uint64(b[32:]),
	}
	if err := checkIndexMeta(m); err != nil {
		return nil, indexMeta{}, err
	}
	frame := b[indexV3HeaderSize : len(b)-4]
	raw := binary.LittleEndian.Uint64(b[40:])
	if raw == 0 || raw > maxIndexPayload || raw > uint64(maxExpansion(codecZstd, len(frame))) {
		return bad(40, "payload of %d bytes from a frame of %d", raw, len(frame))
	}
	p, err := decodeIndexFrame(frame, raw)
	if err != nil {
		return bad(indexV3HeaderSize, "payload: %v", err)
	}
	ix, err := decodeIndexPayload(p, m.covered)
	if err != nil {
		return nil, indexMeta{}, err
	}
	return ix, m, nil
}

// decodeIndexFrame decompresses the payload of index.dat version 3, which
// must be exactly raw bytes. The decoder is made for the call, bounded by
// raw (or zstd's smallest window, 1 MiB as klauspost/compress rounds it),
// so that a damaged frame never asks for much more memory than the header
// says: index.dat is read once an Open.
func decodeIndexFrame(frame []byte, raw uint64) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("zstd panicked: %v", r)
		}
	}()
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(max(raw, 1<<20)))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	out, err = d.DecodeAll(frame, nil)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	if uint64(len(out)) != raw {
		return nil, fmt.Errorf("zstd: got %d bytes, want %d", len(out), raw)
	}
	return out, nil
}

// decodeIndexPayload parses the decompressed payload of index.dat version
// 3 (see the table above encodeIndex).
func decodeIndexPayload(p []byte, covered int64) (*index, error) {
	bad := func(off int, format string, args ...any) (*index, error) {
		return nil, corruptf(indexName, int64(off), "payload byte %d: "+format, append([]any{off}, args...)...)
	}
	ix := newIndex()
	at := 0
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(p[at:])
		if n <= 0 {
			return 0, false
		}
		at += n
		return v, true
	}
	var end int64 = fileHeaderSize
	loc := func() (entry, bool) {
		d, n := binary.Varint(p[at:])
		if n <= 0 {
			return entry{}, false
		}
		at += n
		size, ok := uv()
		if !ok || size > math.MaxUint32 || len(p)-at < 4 {
			return entry{}, false
		}
		off := end + d
		if (d > 0 && off < end) || (d < 0 && off > end) {
			return entry{}, false // overflow
		}
		e := entry{off: off, size: uint32(size), vsum: binary.LittleEndian.Uint32(p[at:])}
		at += 4
		return e, true
	}
	nbody, ok := uv()
	if !ok || nbody > uint64(len(p)-at)/2 {
		return bad(at, "body count")
	}
	var prevBody int64 = fileHeaderSize
	for i := uint64(0); i < nbody; i++ {
		start := at
		d1, ok1 := uv()
		d2, ok2 := uv()
		first := prevBody + int64(d1)
		if !ok1 || !ok2 || (i > 0 && d1 == 0) || d1 > uint64(covered) || d2 == 0 || d2 > uint64(covered) || first+int64(d2) >= covered {
			return bad(start, "body %d", i)
		}
		ix.addBody(first, first+int64(d2))
		prevBody = first
	}
	nd, ok := uv()
	if !ok || nd > uint64(len(p)) {
		return bad(at, "dimension count")
	}
	var prevDim int32
	for i := uint64(0); i < nd; i++ {
		if len(p)-at < 4 {
			return bad(at, "dimension %d is truncated", i)
		}
		dim := int32(binary.LittleEndian.Uint32(p[at:]))
		at += 4
		if i > 0 && dim <= prevDim {
			return bad(at-4, "dimension %d after %d", dim, prevDim)
		}
		prevDim = dim
		n, ok := uv()
		if !ok || n == 0 || n > uint64(len(p)-at)/6 {
			return bad(at, "dimension %d: entry count", dim)
		}
		var code uint64
		for j := uint64(0); j < n; j++ {
			start := at
			delta, ok := uv()
			if !ok || (j > 0 && (delta == 0 || delta > math.MaxUint64-code)) {
				return bad(start, "dimension %d: chunk entry %d: Morton code", dim, j)
			}
			code += delta
			e, ok := loc()
			if !ok {
				return bad(start, "dimension %d: chunk entry %d is malformed", dim, j)
			}
			if err := checkIndexEntry(start, e, covered); err != nil {
				return nil, err
			}
			x, z := morton.Decode(code)
			ix.put(rkey{chunk: Key{Dim: dim, X: x, Z: z}}, e)
			end = e.off + int64(e.size)
		}
	}
	nn, ok := uv()
	if !ok || nn > uint64(len(p)-at)/7 {
		return bad(at, "named entry count")
	}
	prevName := ""
	for i := uint64(0); i < nn; i++ {
		start := at
		l, ok := uv()
		if !ok || l == 0 || l > MaxNameLen || l > uint64(len(p)-at) {
			return bad(start, "named entry %d: name length", i)
		}
		name := string(p[at : at+int(l)])
		at += int(l)
		if i > 0 && name <= prevName {
			return bad(start, "named entry %q after %q", name, prevName)
		}
		prevName = name
		e, ok := loc()
		if !ok {
			return bad(start, "named entry %d is malformed", i)
		}
		if err := checkIndexEntry(start, e, covered); err != nil {
			return nil, err
		}
		ix.put(rkey{named: true, name: name}, e)
		end = e.off + int64(e.size)
	}
	at, err := decodeHistoryV3(p, at, ix, covered)
	if err != nil {
		return nil, err
	}
	if at != len(p) {
		return bad(at, "%d trailing bytes", len(p)-at)
	}
	ix.settle()
	return ix, nil
}

// decodeIndexV2 parses index.dat of version 2.
func decodeIndexV2(b []byte) (*index, indexMeta, error) {
	bad := func(off int, format string, args ...any) (*index, indexMeta, error) {
		return nil, indexMeta{}, corruptf(indexName, int64(off), format, args...)
	}
	if len(b) < indexHeaderSize+4 {
		return bad(0, "%d bytes is too short", len(b))
	}
	body := b[:len(b)-4]
	if got, want := binary.LittleEndian.Uint32(b[len(b)-4:]), crc(body); got != want {
		return bad(len(b)-4, "checksum %08x, want %08x", got, want)
	}
	m := indexMeta{
		generation: binary.LittleEndian.Uint64(b[16:]),
		covered:    int64(binary.LittleEndian.Uint64(b[24:])),
		nextSeq:    binary.LittleEndian.Uint64(b[32:]),
	}
	nchunks := binary.LittleEndian.Uint64(b[40:])
	nnamed := binary.LittleEndian.Uint64(b[48:])
	if m.covered < fileHeaderSize || m.covered > 1<<56 {
		return bad(24, "covered offset %d", m.covered)
	}
	if nchunks > uint64(len(body))/indexChunkEntrySize || nnamed > uint64(len(body))/indexNamedFixed {
		return bad(40, "%d chunk and %d named entries cannot fit in %d bytes", nchunks, nnamed, len(b))
	}
	ix := newIndex()
	p := indexHeaderSize
	checkEntry := func(at int, e entry) error {
		if e.off < fileHeaderSize || e.size < recHeaderSize || e.off+int64(e.size) > m.covered {
			return corruptf(indexName, int64(at), "entry at %d+%d outside the covered log of %d bytes", e.off, e.size, m.covered)
		}
		return nil
	}
	for i := uint64(0); i < nchunks; i++ {
		if len(body)-p < indexChunkEntrySize {
			return bad(p, "chunk entry %d is truncated", i)
		}
		k := rkey{chunk: Key{
			Dim: int32(binary.LittleEndian.Uint32(body[p:])),
			X:   int32(binary.LittleEndian.Uint32(body[p+4:])),
			Z:   int32(binary.LittleEndian.Uint32(body[p+8:])),
		}}
		e := entry{
			vsum: binary.LittleEndian.Uint32(body[p+12:]),
			off:  int64(binary.LittleEndian.Uint64(body[p+16:])),
			size: binary.LittleEndian.Uint32(body[p+24:]),
		}
		if err := checkEntry(p, e); err != nil {
			return nil, indexMeta{}, err
		}
		if _, dup := ix.put(k, e); dup {
			return bad(p, "duplicate key %v", k)
		}
		p += indexChunkEntrySize
	}
	for i := uint64(0); i < nnamed; i++ {
		if len(body)-p < 2 {
			return bad(p, "named entry %d is truncated", i)
		}
		n := int(binary.LittleEndian.Uint16(body[p:]))
		if n == 0 || n > MaxNameLen || len(body)-p < indexNamedFixed+n {
			return bad(p, "named entry %d of %d bytes is malformed", i, n)
		}
		k := rkey{named: true, name: string(body[p+2 : p+2+n])}
		q := p + 2 + n
		e := entry{
			vsum: binary.LittleEndian.Uint32(body[q:]),
			off:  int64(binary.LittleEndian.Uint64(body[q+4:])),
			size: binary.LittleEndian.Uint32(body[q+12:]),
		}
		if err := checkEntry(p, e); err != nil {
			return nil, indexMeta{}, err
		}
		if _, dup := ix.put(k, e); dup {
			return bad(p, "duplicate key %v", k)
		}
		p = q + 16
	}
	p, herr := decodeHistorySection(body, p, ix, m.covered)
	if herr != nil {
		return nil, indexMeta{}, herr
	}
	if p != len(body) {
		return bad(p, "%d trailing bytes", len(body)-p)
	}
	return ix, m, nil
}
