package blazedb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// spoilValueSum changes the value checksum of the record rec (exactly one
// record's bytes) and fixes the record's own checksum: the record reads as
// whole, its value as damaged.
func spoilValueSum(rec []byte) {
	binary.LittleEndian.PutUint32(rec[24:], binary.LittleEndian.Uint32(rec[24:])+1)
	binary.LittleEndian.PutUint32(rec, crc(rec[4:]))
}

// decodeRecord refuses a record whose checksum is right but whose header
// or body breaks the format's rules (record.go): the fuzz target proves it
// never panics, this that each rule holds.
func TestDecodeRecordRefuses(t *testing.T) {
	key := appendChunkKey(nil, Key{X: 1})
	v := []byte("value")
	put := func(r record) record {
		if r.key == nil {
			r.key = key
		}
		return r
	}
	valid := put(record{seq: 1, kind: kindPut, value: v, rawLen: uint32(len(v)), vsum: crc(v)})
	if _, _, err := decodeRecord(appendRecord(nil, &valid), true); err != nil {
		t.Fatalf("a valid put: %v", err)
	}
	mark := appendMark(nil, 100)
	if _, _, err := decodeRecord(mark, true); err != nil {
		t.Fatalf("a valid mark: %v", err)
	}
	short := []byte("1234567")
	entry := appendRecord(nil, &record{kind: kindBatchPut, key: key, value: v, rawLen: uint32(len(v)), vsum: crc(v)})
	for name, c := range map[string]struct {
		r        record
		topLevel bool
	}{
		"unknown kind":             {put(record{kind: 7, value: v, rawLen: 5, vsum: crc(v)}), true},
		"entry of a batch alone":   {put(record{kind: kindBatchPut, value: v, rawLen: 5, vsum: crc(v)}), true},
		"top-level kind in batch":  {valid, false},
		"put without a key":        {record{kind: kindPut, key: []byte{}, value: v, rawLen: 5, vsum: crc(v)}, true},
		"batch with a key":         {put(record{kind: kindBatch, value: entry, rawLen: uint32(len(entry))}), true},
		"mark of 7 bytes":          {record{kind: kindMark, value: short, rawLen: 7, vsum: crc(short)}, true},
		"delete with a value":      {put(record{kind: kindDelete, value: v, rawLen: 5}), true},
		"compressed delete":        {put(record{kind: kindDelete, codec: codecLZ4}), true},
		"raw length not the value": {put(record{kind: kindPut, value: v, rawLen: 6, vsum: crc(v)}), true},
		"unknown codec":            {put(record{kind: kindPut, codec: 9, value: v, rawLen: 5, vsum: crc(v)}), true},
	} {
		if _, _, err := decodeRecord(appendRecord(nil, &c.r), c.topLevel); err == nil || errors.Is(err, errShortRecord) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A read verifies the value's checksum after decompression, besides the
// record's over the stored bytes: a codec's mistake is damage too.
func TestValueChecksumVerified(t *testing.T) {
	key := appendChunkKey(nil, Key{X: 1})
	v := bytes.Repeat([]byte("value "), 100)
	stored, c, err := compress(nil, codecLZ4, v)
	if err != nil || c != codecLZ4 {
		t.Fatalf("compressed with %d: %v", c, err)
	}
	for _, vsum := range []uint32{crc(v), crc(v) + 1} {
		rec := appendRecord(nil, &record{kind: kindPut, key: key, codec: c, value: stored, rawLen: uint32(len(v)), vsum: vsum})
		e := entry{off: fileHeaderSize, size: uint32(len(rec)), vsum: vsum}
		got, err := entryValue(rec, e, key, nil, false)
		if ok := vsum == crc(v); ok != (err == nil) || (!ok && !errors.Is(err, ErrCorrupt)) || (ok && !bytes.Equal(got, v)) {
			t.Fatalf("value checksum right %v: %v", ok, err)
		}
	}
}

// A read checks the record the index points at: a put of the key read,
// holding the value checksum the index recorded. Anything else is damage
// (a stale or damaged index.dat), never a value.
func TestEntryValueChecksTheRecord(t *testing.T) {
	key := appendChunkKey(nil, Key{X: 1})
	v := []byte("value")
	rec := appendRecord(nil, &record{kind: kindPut, key: key, value: v, rawLen: uint32(len(v)), vsum: crc(v)})
	e := entry{off: fileHeaderSize, size: uint32(len(rec)), vsum: crc(v)}
	if got, err := entryValue(rec, e, key, nil, false); err != nil || string(got) != "value" {
		t.Fatalf("a valid entry: %q, %v", got, err)
	}
	del := appendRecord(nil, &record{kind: kindDelete, key: key})
	for name, c := range map[string]struct {
		rec []byte
		e   entry
		key []byte
	}{
		"another key":      {rec, e, appendChunkKey(nil, Key{X: 2})},
		"another checksum": {rec, entry{off: e.off, size: e.size, vsum: e.vsum + 1}, key},
		"a delete":         {del, entry{off: e.off, size: uint32(len(del))}, key},
	} {
		if _, err := entryValue(c.rec, c.e, c.key, nil, false); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
