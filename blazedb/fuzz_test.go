package blazedb

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// seedRecords returns valid records of every kind, for the fuzzers' seeds.
func seedRecords() [][]byte {
	var out [][]byte
	put := func(c codec, v []byte) []byte {
		stored, used, _ := compress(nil, c, v)
		return appendRecord(nil, &record{seq: 7, kind: kindPut, codec: used, key: appendChunkKey(nil, Key{1, -2, 3}), value: stored, rawLen: uint32(len(v)), vsum: crc(v)})
	}
	big := bytes.Repeat([]byte("stone dirt grass "), 100)
	for _, c := range []codec{codecNone, codecLZ4, codecSnappy, codecZstd} {
		out = append(out, put(c, big))
	}
	out = append(out, appendRecord(nil, &record{seq: 9, kind: kindDelete, key: appendNamedKey(nil, "player")}))
	inner := appendRecord(nil, &record{seq: 10, kind: kindBatchPut, key: appendNamedKey(nil, "a"), value: []byte("xyz"), rawLen: 3, vsum: crc([]byte("xyz"))})
	inner = appendRecord(inner, &record{seq: 11, kind: kindBatchDelete, key: appendChunkKey(nil, Key{})})
	out = append(out, appendRecord(nil, &record{seq: 10, kind: kindBatch, value: inner, rawLen: uint32(len(inner))}))
	out = append(out, appendMark(nil, fileHeaderSize+100))
	out = append(out, appendTimeMark(nil, fileHeaderSize, timePoint{seq: 7, at: 1e18}, 3))
	snap := encodeSnapshot(time.Unix(0, 1e18))
	out = append(out, appendRecord(nil, &record{seq: 12, kind: kindPut, key: appendNamedKey(nil, snapshotPrefix+"s"), value: snap, rawLen: uint32(len(snap)), vsum: crc(snap)}))
	out = append(out, fileHeader{generation: 5, baseSeq: 9}.encodeWithCopy()[fileHeaderSize:])
	// A body and an alias list (issue 41, alias.go).
	stored, used, _ := compress(nil, codecLZ4, big)
	out = append(out, appendRecord(nil, &record{kind: kindBody, codec: used, value: stored, rawLen: uint32(len(big)), vsum: crc(big)}))
	list := appendAliasList(nil, &aliasList{bodies: []aliasBody{{first: 200, second: 300, size: 60, vsum: 7}}, keys: []aliasKey{{k: Key{X: 1}, seq: 3}, {k: Key{X: 2}, seq: 4}}}, 400)
	zl, zc, _ := compress(nil, codecZstd, list)
	out = append(out, appendRecord(nil, &record{seq: 4, kind: kindAliases, value: list, rawLen: uint32(len(list)), vsum: crc(list)}))
	out = append(out, appendRecord(nil, &record{seq: 4, kind: kindAliases, codec: zc, value: zl, rawLen: uint32(len(list)), vsum: crc(list)}))
	return out
}

// FuzzDecodeRecord: decoding never panics; whatever decodes re-encodes to
// the same bytes, and a put's value either verifies or fails as corrupt.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range seedRecords() {
		f.Add(r)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, top := range []bool{true, false} {
			r, n, err := decodeRecord(b, top)
			if err != nil {
				if !errors.Is(err, errBadRecord) && !errors.Is(err, errShortRecord) {
					t.Fatalf("unexpected error class: %v", err)
				}
				continue
			}
			if again := appendRecord(nil, &r); !bytes.Equal(again, b[:n]) {
				t.Fatalf("re-encoding differs")
			}
			if p, _, ok := r.timeMark(); ok && r.kind == kindMark && len(r.value) != timeMarkValueLen {
				t.Fatalf("time mark %+v from a value of %d bytes", p, len(r.value))
			}
			if r.kind == kindAliases {
				if _, err := readAliasList(400, &r); err != nil && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("alias list: unexpected error class: %v", err)
				}
			}
			if r.kind == kindPut || r.kind == kindBatchPut || r.kind == kindBody {
				if v, err := r.rawValue(); err == nil && (len(v) != int(r.rawLen) || crc(v) != r.vsum) {
					t.Fatal("rawValue returned unverified bytes")
				}
			}
		}
	})
}

// FuzzDecodeIndex: decoding index.dat of version 3 or 2 never panics; a
// decoded index re-encodes (as version 3) and decodes to the same entries.
func FuzzDecodeIndex(f *testing.F) {
	ix := newIndex()
	ix.put(rkey{chunk: Key{0, 1, 2}}, entry{off: 40, size: 60, vsum: 5})
	ix.put(rkey{chunk: Key{1, -1, -2}}, entry{off: 100, size: 30, vsum: 6})
	ix.put(rkey{named: true, name: "spawn"}, entry{off: 130, size: 40, vsum: 7})
	f.Add(encodeIndex(ix, indexMeta{generation: 3, covered: 170, nextSeq: 4}))
	f.Add(encodeIndex(newIndex(), indexMeta{generation: 1, covered: 40, nextSeq: 0}))
	// With history: an older version, a deletion, time points and a pin.
	ix.hist = newHistory()
	ix.hist.floor, ix.hist.next = 2, 9
	ix.hist.points = []timePoint{{seq: 1, at: 100}, {seq: 5, at: 200}}
	ix.hist.pins["s"] = 4
	ix.put(rkey{named: true, name: snapshotPrefix + "s"}, entry{off: 100, size: 30, vsum: 8})
	ix.hist.chains.set(rkey{chunk: Key{0, 1, 2}}, []version{{seq: 1, off: 100, size: 30, vsum: 6}, {seq: 3, off: 40, size: 60, vsum: 5}})
	ix.hist.chains.set(rkey{named: true, name: "gone"}, []version{{seq: 2, off: 130, size: 40, vsum: 7}, {seq: 6, off: -1, size: 33}})
	f.Add(encodeIndex(ix, indexMeta{generation: 3, covered: 170, nextSeq: 9}))
	// Version 2, which is still read (issue 41 item 2).
	f.Add(encodeIndexV2(ix, indexMeta{generation: 3, covered: 170, nextSeq: 9}))
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, m, err := decodeIndex(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		enc := encodeIndex(ix, m)
		ix2, m2, err := decodeIndex(enc)
		if err != nil || m2 != m || ix.diff(ix2) != "" {
			t.Fatalf("round trip: %v %+v %+v %s", err, m, m2, ix.diff(ix2))
		}
		if !bytes.Equal(encodeIndex(ix2, m2), enc) {
			t.Fatal("the history does not round-trip")
		}
	})
}

// FuzzDecodeSnapshot: a snapshot record's value decodes, or fails with
// ErrCorrupt or ErrVersion, never a panic; what decodes re-encodes the same.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(encodeSnapshot(time.Unix(0, 1e18)))
	f.Add(encodeSnapshot(time.Time{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		at, err := decodeSnapshot(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		if !bytes.Equal(encodeSnapshot(at), b) {
			t.Fatal("re-encoding differs")
		}
	})
}

// FuzzOpenLog: any bytes after a valid file header open without panic; the
// index then matches a full scan, Check reports just the damage Open
// skipped, and every key reads back or reports ErrCorrupt.
func FuzzOpenLog(f *testing.F) {
	var all []byte
	for _, r := range seedRecords() {
		all = append(all, r...)
		f.Add(r)
	}
	f.Add(all)
	f.Fuzz(func(t *testing.T, b []byte) {
		fs := vfstest.NewMem()
		fs.MkdirAll("/db", 0o755)
		fs.WriteFile("/db/chunks.dat", append(fileHeader{generation: 1}.encodeWithCopy(), b...))
		db, err := Open("/db", Options{FS: fs, Logger: quiet})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer db.Close()
		// Check reports the damage Open skipped, which is still in the
		// log (issue 35 item 10), and nothing else.
		err = db.Check()
		if skipped := len(db.Recovery().Corrupt) > 0; skipped != (err != nil) || skipped && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Check after Open skipped %+v: %v", db.Recovery().Corrupt, err)
		}
		keys, _ := db.Keys(Area{Dim: 1, MinX: -10, MinZ: -10, MaxX: 10, MaxZ: 10})
		for _, k := range keys {
			if _, err := db.Get(k); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Get %v: %v", k, err)
			}
		}
	})
}

// FuzzReadLogHeader: reading a log's header and its copy never panics and
// fails only as a foreign file, a newer format or damage; what it returns
// is exactly what one of the two copies holds; and one damaged byte of
// either copy (issue 35 item 2) is always read past.
func FuzzReadLogHeader(f *testing.F) {
	good := fileHeader{generation: 1, baseSeq: 77}.encodeWithCopy()
	f.Add(good)
	for i := 0; i < len(good); i += 5 {
		d := bytes.Clone(good)
		d[i] ^= 0x10
		f.Add(d)
	}
	f.Add(good[:fileHeaderSize])
	f.Fuzz(func(t *testing.T, b []byte) {
		fs := memWith(b)
		file, err := fs.Open("/db/chunks.dat")
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		h, damage, err := readFileHeader(file)
		differ := 0
		if len(b) == len(good) {
			for i := range b {
				if b[i] != good[i] {
					differ++
				}
			}
		}
		if err != nil {
			if !errors.Is(err, ErrNotBlaze) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error class: %v", err)
			}
			if len(b) == len(good) && differ <= 1 {
				t.Fatalf("one damaged byte made the header unreadable: %v", err)
			}
			return
		}
		var want fileHeader
		var werr error
		if damage.header {
			want, werr = decodeHeaderCopy(b[fileHeaderSize:])
		} else {
			want, werr = decodeFileHeader(b[:fileHeaderSize])
		}
		if werr != nil || want != h {
			t.Fatalf("read %+v, which the copy it came from does not hold (%+v, %v)", h, want, werr)
		}
		if len(b) == len(good) && differ <= 1 && (h.generation != 1 || h.baseSeq != 77) {
			t.Fatalf("one damaged byte: read %+v", h)
		}
	})
}

// FuzzDecompress: Decompress never panics and fails only with ErrCorrupt;
// whatever Compress writes, Decompress returns exactly, after any prefix
// already in dst.
func FuzzDecompress(f *testing.F) {
	big := bytes.Repeat([]byte("stone dirt grass "), 100)
	for _, c := range []Compression{CompressionNone, CompressionLZ4, CompressionSnappy, CompressionZstd} {
		stored, used, _ := Compress(nil, c, big)
		f.Add(uint8(used), stored, uint16(len(big)))
	}
	f.Fuzz(func(t *testing.T, c uint8, b []byte, rawLen uint16) {
		out, err := Decompress(nil, Compression(c), b, int(rawLen))
		switch {
		case err != nil && !errors.Is(err, ErrCorrupt):
			t.Fatalf("unexpected error class: %v", err)
		case err == nil && len(out) != int(rawLen):
			t.Fatalf("%d bytes out, want %d", len(out), rawLen)
		}
		for _, codec := range []Compression{CompressionNone, CompressionLZ4, CompressionSnappy, CompressionZstd} {
			stored, used, err := Compress([]byte("pre"), codec, b)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Decompress([]byte("fix"), used, stored[3:], len(b))
			if err != nil || string(out[:3]) != "fix" || !bytes.Equal(out[3:], b) {
				t.Fatalf("codec %d: round trip failed: %v", codec, err)
			}
		}
	})
}

// FuzzDecodeIndexPayload: the payload of index.dat version 3, which
// FuzzDecodeIndex reaches only through its zstd frame and checksum,
// decodes or fails as ErrCorrupt, never a panic; what decodes re-encodes
// and decodes to the same index (review of issue 41).
func FuzzDecodeIndexPayload(f *testing.F) {
	ix := newIndex()
	ix.ensureHistory()
	ix.addBody(100, 300)
	ix.put(rkey{chunk: Key{0, 1, 2}}, entry{off: 100, size: 60, vsum: 5})
	ix.put(rkey{chunk: Key{0, 1, 3}}, entry{off: 100, size: 60, vsum: 5})
	ix.put(rkey{chunk: Key{1, -4, 2}}, entry{off: 160, size: 50, vsum: 9})
	ix.put(rkey{named: true, name: "level"}, entry{off: 210, size: 40, vsum: 3})
	ix.hist.floor, ix.hist.next = 2, 9
	ix.hist.points = []timePoint{{seq: 1, at: 100}, {seq: 5, at: 200}}
	ix.hist.chains.set(rkey{chunk: Key{0, 1, 2}}, []version{{seq: 1, off: 40, size: 30, vsum: 6}, {seq: 3, off: 100, size: 60, vsum: 5}})
	ix.hist.chains.set(rkey{named: true, name: "gone"}, []version{{seq: 2, off: 250, size: 40, vsum: 7}, {seq: 6, off: -1, size: 33}})
	f.Add(appendIndexPayload(nil, ix), int64(400))
	f.Add(appendIndexPayload(nil, newIndex()), int64(40))
	f.Fuzz(func(t *testing.T, p []byte, covered int64) {
		if covered < fileHeaderSize || covered > 1<<40 {
			return
		}
		ix, err := decodeIndexPayload(p, covered)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		ix2, err := decodeIndexPayload(appendIndexPayload(nil, ix), covered)
		if err != nil || ix.diff(ix2) != "" {
			t.Fatalf("round trip: %v %s", err, ix.diff(ix2))
		}
	})
}
