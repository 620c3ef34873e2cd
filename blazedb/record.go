package blazedb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
)

// chunks.dat is an append-only log: a file header, then records, the
// first of which is a copy of the header.
//
// File header (40 bytes):
//
//	+--------+------+-------------------------------------------------+
//	| offset | size | field                                           |
//	+--------+------+-------------------------------------------------+
//	|      0 |    8 | signature "\x89BLZLOG\n"                        |
//	|      8 |    4 | format version, uint32 LE (4; 3 is read)        |
//	|     12 |    4 | flags, uint32 LE (0; reserved)                  |
//	|     16 |    8 | generation, uint64 LE (+1 on every compaction)  |
//	|     24 |    8 | base sequence, uint64 LE (next seq at creation) |
//	|     32 |    4 | CRC-32C of bytes 0..32                          |
//	|     36 |    4 | reserved, zero                                  |
//	+--------+------+-------------------------------------------------+
//
// Record (28-byte header, then the body of n bytes):
//
//	+--------+------+-------------------------------------------------+
//	| offset | size | field                                           |
//	+--------+------+-------------------------------------------------+
//	|      0 |    4 | CRC-32C of bytes 4..28+n (all that follows)     |
//	|      4 |    4 | n, body length = key length + stored length     |
//	|      8 |    8 | sequence number: the record's version           |
//	|     16 |    1 | kind (put 1, delete 2, batch 3, sync mark 4,    |
//	|        |      |   header copy 5, body 6, alias list 7; in a     |
//	|        |      |   batch: put 0x81, delete 0x82)                 |
//	|     17 |    1 | codec of the stored value (none 0, lz4 1,       |
//	|        |      |   snappy 2, zstd 3)                             |
//	|     18 |    2 | key length k                                    |
//	|     20 |    4 | raw (uncompressed) value length                 |
//	|     24 |    4 | CRC-32C of the raw value                        |
//	|     28 |    k | key (see key.go)                                |
//	|   28+k |  n-k | stored value                                    |
//	+--------+------+-------------------------------------------------+
//
// A batch record has no key and codec none; its value is a sequence of
// complete records of kind 0x81/0x82, each with its own checksum, so the
// index can point at one and a read verifies just that one. The batch's
// checksum covers them all: a batch is applied whole or not at all. The
// in-batch kinds are distinct so that a recovery scan resynchronising after
// damage can never mistake an entry inside a batch for a record of its own.
//
// A sync mark has no key, sequence number 0 and codec none; its value is
// 8 bytes, a uint64 LE S: when it was written, the first S bytes of this
// file were known durable. Each fsync is followed by one,
// appended alone (sync.go, markSynced) and synced by the next fsync; when
// a writer got there first, the first append after the fsync (or after
// Open, which syncs) carries it in front of its record, in the same write.
// Close, after its last fsync, appends one for the whole log (unless the
// last mark already covers it) and syncs it, and compaction ends the file
// it writes with one. A sync mark may instead carry a value of 32 bytes,
// a time mark, which also dates the writes (timeline.go). Recovery uses
// marks to tell damage apart (scan.go): damage that a later mark shows
// was synced is decay of durable data, and is skipped; any other damage
// is a write a crash left unsynced, so the log ends there.
//
// The header copy, the record at offset 40 of every log, has no key,
// sequence number 0 and codec none; its value is the 40 bytes of the file
// header, which it repeats exactly:
//
//	+--------+------+-------------------------------------------------+
//	| offset | size | field                                           |
//	+--------+------+-------------------------------------------------+
//	|     40 |   28 | record header: kind 5, n = raw length = 40,     |
//	|        |      |   value checksum of the 40 bytes                |
//	|     68 |   40 | the file header, bytes 0..40                    |
//	|    108 |    … | the first record written                        |
//	+--------+------+-------------------------------------------------+
//
// So one damaged byte in either copy costs nothing: Open reads whichever
// decodes (the header wins when both do), a read-write Open rewrites a
// damaged header from its copy, and a damaged copy, like any damaged
// record, goes at the next compaction (blaze repair compacts). A copy
// rather than a header rebuilt from index.dat and the records: the
// generation ties index.dat (and dictionary.dat's lineage) to one log, and
// a rebuild could only guess it from an index.dat that may be stale, while
// a copy gives it exactly, for 68 bytes. It is written with the header,
// at creation and by compaction, in the same synced write, and never
// again in place; a record rather than a second fixed block, so that a
// scan of the log takes it as it takes every record. Both copies destroyed
// (a zeroed start of the file) leave the log unopenable until Repair
// rebuilds the header from the records (header.go).
//
// A body (kind 6) and an alias list (kind 7) are written only by
// compaction, which stores a value that two or more live chunk keys hold
// once: a body has no key, sequence number 0, and the value, stored and
// summed as a put's; an alias list has no key, the largest sequence
// number of the keys it names, and the keys that hold each body
// (alias.go draws it). They are what version 4 adds to version 3 (issue
// 41), so that a build that reads only version 3 refuses a log that may
// hold them (ErrVersion) rather than take them for damage. A log of
// version 3 is still read and appended to as it is: appends write the
// records both versions share, and compaction, the only writer of bodies,
// writes a log of version 4.
//
// Versions 1 (without sync marks) and 2 (without the header copy and time
// marks) were never released; their reader is gone, and Open refuses them
// with ErrOldVersion. From now on a change of this format is a new
// version, and the reader of every released one stays (version_test.go).
//
// All integers are little-endian. Part of the on-disk format: these
// constants must not change without a new format version.
const (
	logSignature   = "\x89BLZLOG\n"
	logVersion     = 4 // written and read; 3 is read; 1 and 2 were never released
	logVersion3    = 3
	fileHeaderSize = 40
	headerCopySize = recHeaderSize + fileHeaderSize // the record at fileHeaderSize
	recHeaderSize  = 28

	kindPut         = 0x01
	kindDelete      = 0x02
	kindBatch       = 0x03
	kindMark        = 0x04
	kindHeaderCopy  = 0x05
	kindBody        = 0x06
	kindAliases     = 0x07
	kindBatchPut    = 0x81
	kindBatchDelete = 0x82
	markValueLen    = 8
	markSize        = recHeaderSize + markValueLen

	maxValueLen = 64 << 20  // largest raw value
	maxBodyLen  = 256 << 20 // largest record body (a batch)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// fileHeader is the decoded header of chunks.dat, of version logVersion.
type fileHeader struct {
	generation uint64
	baseSeq    uint64
}

// encodeWithCopy returns the start of a new log: the header h and its
// copy.
func (h fileHeader) encodeWithCopy() []byte {
	b := h.encode()
	v := slices.Clone(b)
	return appendRecord(b, &record{kind: kindHeaderCopy, value: v, rawLen: fileHeaderSize, vsum: crc(v)})
}

// decodeHeaderCopy decodes the header copy at the start of b (the log
// from offset fileHeaderSize on).
func decodeHeaderCopy(b []byte) (fileHeader, error) {
	r, _, err := decodeRecord(b[:min(len(b), headerCopySize)], true)
	if err != nil {
		return fileHeader{}, corruptf(logName, fileHeaderSize, "header copy: %v", err)
	}
	if r.kind != kindHeaderCopy {
		return fileHeader{}, corruptf(logName, fileHeaderSize, "no header copy: a record of kind %#x", r.kind)
	}
	h, err := decodeFileHeader(r.value)
	if err != nil {
		return fileHeader{}, fmt.Errorf("header copy: %w", err)
	}
	return h, nil
}

func (h fileHeader) encode() []byte {
	b := make([]byte, fileHeaderSize)
	copy(b, logSignature)
	binary.LittleEndian.PutUint32(b[8:], logVersion)
	binary.LittleEndian.PutUint64(b[16:], h.generation)
	binary.LittleEndian.PutUint64(b[24:], h.baseSeq)
	binary.LittleEndian.PutUint32(b[32:], crc(b[:32]))
	return b
}

func decodeFileHeader(b []byte) (fileHeader, error) {
	if len(b) < len(logSignature) || string(b[:len(logSignature)]) != logSignature {
		return fileHeader{}, fmt.Errorf("%w: %s has no Blaze signature", ErrNotBlaze, logName)
	}
	if len(b) < fileHeaderSize {
		return fileHeader{}, corruptf(logName, 0, "file header is %d bytes, want %d", len(b), fileHeaderSize)
	}
	v := binary.LittleEndian.Uint32(b[8:])
	if v > logVersion {
		return fileHeader{}, fmt.Errorf("%w: %s is format version %d; this build reads version %d", ErrVersion, logName, v, logVersion)
	}
	if v == 0 {
		return fileHeader{}, corruptf(logName, 8, "format version %d", v)
	}
	// Checked before an old version is reported: versions 1 and 2 had
	// this header too, so a byte flipped in the version of a current
	// header is damage (its copy reads), not a file of another version.
	if got, want := binary.LittleEndian.Uint32(b[32:]), crc(b[:32]); got != want {
		return fileHeader{}, corruptf(logName, 32, "file header checksum %08x, want %08x", got, want)
	}
	if v < logVersion3 {
		return fileHeader{}, fmt.Errorf("%w: %s is format version %d, a development format no release wrote; this build reads version %d", ErrOldVersion, logName, v, logVersion)
	}
	if r := binary.LittleEndian.Uint32(b[36:]); r != 0 {
		// Outside the checksum, but written zero by every version.
		return fileHeader{}, corruptf(logName, 36, "reserved header bytes hold %08x", r)
	}
	return fileHeader{
		generation: binary.LittleEndian.Uint64(b[16:]),
		baseSeq:    binary.LittleEndian.Uint64(b[24:]),
	}, nil
}

// record is a decoded record. key and value alias the decoded buffer.
type record struct {
	seq    uint64
	kind   uint8
	codec  codec
	key    []byte
	value  []byte // stored (possibly compressed) value
	rawLen uint32
	vsum   uint32 // CRC-32C of the raw value
}

// size is the record's length in the file.
func (r *record) size() int { return recHeaderSize + len(r.key) + len(r.value) }

// appendRecord appends r, with its checksum, to dst.
func appendRecord(dst []byte, r *record) []byte {
	start := len(dst)
	dst = grow(dst, recHeaderSize)
	dst = append(dst, r.key...)
	dst = append(dst, r.value...)
	sealRecord(dst[start:], r)
	return dst
}

// sealRecord writes the header and checksum of the record b holds whole:
// room for its header, then its key (len(r.key) bytes) and its value,
// which are already in place. The header's fields come from r, whose key
// and value bytes are not read, so that a batch's records are framed in
// the buffer that is written instead of copied into it.
func sealRecord(b []byte, r *record) {
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-recHeaderSize))
	binary.LittleEndian.PutUint64(b[8:], r.seq)
	b[16] = r.kind
	b[17] = uint8(r.codec)
	binary.LittleEndian.PutUint16(b[18:], uint16(len(r.key)))
	binary.LittleEndian.PutUint32(b[20:], r.rawLen)
	binary.LittleEndian.PutUint32(b[24:], r.vsum)
	binary.LittleEndian.PutUint32(b, crc(b[4:]))
}

// Reasons a record fails to decode. errShortRecord means the buffer ended
// inside the record, which at the end of the log is a torn write.
var (
	errShortRecord = errors.New("record extends past the end of the data")
	errBadRecord   = errors.New("invalid record")
)

// checkHeader validates the fields of a record header that can be checked
// without the body and returns the record's total size. topLevel selects the
// kinds allowed at the top level of the log, as opposed to inside a batch.
func checkHeader(h []byte, topLevel bool) (int, error) {
	size, fault := inspectHeader(h, topLevel)
	if fault == headerOK {
		return size, nil
	}
	if fault == headerShort {
		return 0, errShortRecord
	}
	n := binary.LittleEndian.Uint32(h[4:])
	kind, c := h[16], codec(h[17])
	k := binary.LittleEndian.Uint16(h[18:])
	raw := binary.LittleEndian.Uint32(h[20:])
	var why string
	switch fault {
	case headerLengths:
		why = fmt.Sprintf("body length %d, key length %d", n, k)
	case headerCodec:
		why = fmt.Sprintf("codec %d", c)
	case headerRaw:
		why = fmt.Sprintf("raw length %d", raw)
	case headerInBatch:
		why = fmt.Sprintf("kind %#x inside a batch", kind)
	case headerOutsideBatch:
		why = fmt.Sprintf("batch entry kind %#x outside a batch", kind)
	case headerKind:
		why = fmt.Sprintf("kind %#x", kind)
	case headerKey:
		why = fmt.Sprintf("kind %#x with key length %d", kind, k)
	case headerFixedSize:
		why = fmt.Sprintf("%s of %d bytes", kindName(kind), n)
	case headerCodecKind:
		why = fmt.Sprintf("kind %#x with codec %d", kind, c)
	}
	return 0, fmt.Errorf("%w: %s", errBadRecord, why)
}

// plausibleHeader reports whether checkHeader would accept h, without
// building the explanation: a resync tries it at every offset of a
// damaged stretch.
func plausibleHeader(h []byte, topLevel bool) bool {
	_, fault := inspectHeader(h, topLevel)
	return fault == headerOK
}

// headerFault is what inspectHeader found wrong with a record header.
type headerFault uint8

const (
	headerOK headerFault = iota
	headerShort
	headerLengths
	headerCodec
	headerRaw
	headerInBatch
	headerOutsideBatch
	headerKind
	headerKey
	headerFixedSize
	headerCodecKind
)

// kindName names the key-less kinds of a fixed size.
func kindName(kind uint8) string {
	if kind == kindHeaderCopy {
		return "header copy"
	}
	return "sync mark"
}

// inspectHeader is checkHeader's test, with the fault as a code.
func inspectHeader(h []byte, topLevel bool) (int, headerFault) {
	if len(h) < recHeaderSize {
		return 0, headerShort
	}
	n := binary.LittleEndian.Uint32(h[4:])
	kind, c := h[16], codec(h[17])
	k := uint32(binary.LittleEndian.Uint16(h[18:]))
	raw := binary.LittleEndian.Uint32(h[20:])
	switch {
	case n > maxBodyLen || k > n:
		return 0, headerLengths
	case !c.valid():
		return 0, headerCodec
	case raw > maxValueLen && kind != kindBatch:
		return 0, headerRaw
	}
	switch kind {
	case kindPut, kindDelete, kindBatch, kindMark, kindHeaderCopy, kindBody, kindAliases:
		if !topLevel {
			return 0, headerInBatch
		}
	case kindBatchPut, kindBatchDelete:
		if topLevel {
			return 0, headerOutsideBatch
		}
	default:
		return 0, headerKind
	}
	keyless := kind == kindBatch || kind == kindMark || kind == kindHeaderCopy || kind == kindBody || kind == kindAliases
	if keyless != (k == 0) {
		return 0, headerKey
	}
	if kind == kindMark && (n != raw || (n != markValueLen && n != timeMarkValueLen)) ||
		kind == kindHeaderCopy && (n != fileHeaderSize || raw != fileHeaderSize) {
		return 0, headerFixedSize
	}
	if (kind == kindDelete || kind == kindBatchDelete || kind == kindBatch || kind == kindMark || kind == kindHeaderCopy) && c != codecNone {
		return 0, headerCodecKind
	}
	return recHeaderSize + int(n), headerOK
}

// decodeRecord decodes the record at the start of b and returns it with its
// size. It never panics: any inconsistency is an error wrapping
// errBadRecord, or errShortRecord when b ends inside the record. A batch's
// entries are validated too.
func decodeRecord(b []byte, topLevel bool) (record, int, error) {
	size, err := checkHeader(b, topLevel)
	if err != nil {
		return record{}, 0, err
	}
	if len(b) < size {
		return record{}, 0, errShortRecord
	}
	if got, want := binary.LittleEndian.Uint32(b), crc(b[4:size]); got != want {
		return record{}, 0, fmt.Errorf("%w: checksum %08x, want %08x", errBadRecord, got, want)
	}
	k := int(binary.LittleEndian.Uint16(b[18:]))
	r := record{
		seq:    binary.LittleEndian.Uint64(b[8:]),
		kind:   b[16],
		codec:  codec(b[17]),
		key:    b[recHeaderSize : recHeaderSize+k : recHeaderSize+k],
		value:  b[recHeaderSize+k : size : size],
		rawLen: binary.LittleEndian.Uint32(b[20:]),
		vsum:   binary.LittleEndian.Uint32(b[24:]),
	}
	if r.kind != kindBatch && r.kind != kindMark && r.kind != kindHeaderCopy && r.kind != kindBody && r.kind != kindAliases {
		if _, err := parseKey(r.key); err != nil {
			return record{}, 0, fmt.Errorf("%w: %v", errBadRecord, err)
		}
	}
	switch r.kind {
	case kindDelete, kindBatchDelete:
		if len(r.value) != 0 || r.rawLen != 0 {
			return record{}, 0, fmt.Errorf("%w: delete with a value", errBadRecord)
		}
	case kindMark, kindHeaderCopy:
		if r.seq != 0 || crc(r.value) != r.vsum {
			return record{}, 0, fmt.Errorf("%w: %s with sequence %d or a bad value checksum", errBadRecord, kindName(r.kind), r.seq)
		}
	case kindBody:
		if r.seq != 0 {
			return record{}, 0, fmt.Errorf("%w: body with sequence %d", errBadRecord, r.seq)
		}
		if r.codec == codecNone && int(r.rawLen) != len(r.value) {
			return record{}, 0, fmt.Errorf("%w: raw length %d, stored %d", errBadRecord, r.rawLen, len(r.value))
		}
	case kindBatch:
		if int(r.rawLen) != len(r.value) {
			return record{}, 0, fmt.Errorf("%w: batch length %d, want %d", errBadRecord, r.rawLen, len(r.value))
		}
		if err := forEachEntry(r.value, func(int, record) error { return nil }); err != nil {
			return record{}, 0, err
		}
	default:
		if r.codec == codecNone && int(r.rawLen) != len(r.value) {
			return record{}, 0, fmt.Errorf("%w: raw length %d, stored %d", errBadRecord, r.rawLen, len(r.value))
		}
	}
	return r, size, nil
}

// forEachEntry calls fn with the offset within body and the decoded form of
// every entry of a batch body. An empty batch is invalid.
func forEachEntry(body []byte, fn func(off int, e record) error) error {
	if len(body) == 0 {
		return fmt.Errorf("%w: empty batch", errBadRecord)
	}
	for off := 0; off < len(body); {
		e, n, err := decodeRecord(body[off:], false)
		if err != nil {
			if errors.Is(err, errShortRecord) {
				err = fmt.Errorf("%w: batch entry at %d is truncated", errBadRecord, off)
			}
			return err
		}
		if err := fn(off, e); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// appendMark appends a sync mark saying the first synced bytes of the log
// are durable.
func appendMark(dst []byte, synced int64) []byte {
	v := binary.LittleEndian.AppendUint64(make([]byte, 0, markValueLen), uint64(synced))
	return appendRecord(dst, &record{kind: kindMark, value: v, rawLen: markValueLen, vsum: crc(v)})
}

// markValue is what a decoded sync mark says is durable.
func (r *record) markValue() int64 { return int64(binary.LittleEndian.Uint64(r.value)) }

// rawValue decompresses and verifies the value of a put record.
func (r *record) rawValue() ([]byte, error) { return r.appendRawValue(nil) }

// appendValue appends the value of a put record to dst, verified as
// appendRawValue does, except that a value stored raw is summed only with
// all (see entryValue).
func (r *record) appendValue(dst []byte, all bool) ([]byte, error) {
	if r.codec == codecNone && !all {
		return decompressAppend(dst, r.codec, r.value, int(r.rawLen))
	}
	return r.appendRawValue(dst)
}

// appendRawValue appends the decompressed, verified value of a put record
// to dst.
func (r *record) appendRawValue(dst []byte) ([]byte, error) {
	start := len(dst)
	v, err := decompressAppend(dst, r.codec, r.value, int(r.rawLen))
	if err != nil {
		return nil, err
	}
	if got := crc(v[start:]); got != r.vsum {
		return nil, fmt.Errorf("value checksum %08x, want %08x", got, r.vsum)
	}
	return v, nil
}
