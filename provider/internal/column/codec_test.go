package column

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Issue 37: version 1 records (one unframed body) were never released, and
// are refused as damage, not read.
func TestRefusesVersion1(t *testing.T) {
	br, d := testCodec()
	enc, err := d.Encode(worldtest.Synthetic(1, world.Overworld, br), Prev{}, blazedb.CompressionLZ4)
	if err != nil {
		t.Fatal(err)
	}
	v1 := bytes.Clone(enc.Rec)
	v1[3] = 1
	if _, err := d.DecodeColumn(v1, world.Overworld.Range()); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "column record version 1") {
		t.Fatalf("a version 1 record: %v", err)
	}
}

// FuzzDecodeColumn: any bytes either decode or fail with ErrCorrupt
// or errUnknown; never a panic (records of version 2, and of version 3
// with every part in one frame). What decodes re-encodes to a record
// that decodes to the same column.
func FuzzDecodeColumn(f *testing.F) {
	br, d := testCodec()
	for i := uint64(0); i < 3; i++ {
		for _, c := range []blazedb.Compression{blazedb.CompressionNone, blazedb.CompressionLZ4, blazedb.CompressionZstd} {
			enc, err := d.Encode(worldtest.Synthetic(i, world.Overworld, br), Prev{}, c)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(enc.Rec)
			if i == 0 && c == blazedb.CompressionLZ4 {
				// Issue 41 item 2: the column as a whole record, version 3.
				f.Add(Pack(enc.Rec, blazedb.CompressionLZ4))
				f.Add(Pack(enc.Rec, blazedb.CompressionZstd))
			}
		}
	}
	empty, _ := d.Encode(&chunk.Column{Chunk: chunk.New(br, world.Overworld.Range())}, Prev{}, blazedb.CompressionNone)
	f.Add(empty.Rec)
	f.Add(Pack(empty.Rec, blazedb.CompressionLZ4))
	f.Fuzz(func(t *testing.T, b []byte) {
		col, err := d.DecodeColumn(b, world.Overworld.Range())
		// Both ways of building sub-chunks accept the same records and
		// build the same chunks (raw.go).
		want, serr := decodeSlow(d, b, world.Overworld.Range())
		if (err == nil) != (serr == nil) {
			t.Fatalf("with rawchunk: %v; with NetworkDecode: %v", err, serr)
		}
		if err == nil {
			if err := sameChunk(want.Chunk.Clone(), col.Chunk.Clone()); err != nil {
				t.Fatalf("rawchunk and NetworkDecode differ: %v", err)
			}
			if err := sameEncoding(d, col); err != nil {
				t.Fatal(err)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, errUnknown) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		enc, err := d.Encode(col, Prev{}, blazedb.CompressionLZ4)
		if err != nil {
			t.Fatalf("a decoded column does not encode: %v", err)
		}
		col2, err := d.DecodeColumn(enc.Rec, world.Overworld.Range())
		if err != nil {
			t.Fatalf("re-encoded column does not decode: %v", err)
		}
		if err := worldtest.Compare(col, col2); err != nil {
			t.Fatalf("round trip changed the column: %v", err)
		}
	})
}

// A decoded column shares no memory with its record: cold loads decode
// from a pooled buffer that the next load overwrites. Records whose frames
// are stored raw (CompressionNone) are the test: the decoder reads those
// frames in place.
func TestDecodedColumnSharesNothingWithRecord(t *testing.T) {
	br, d := testCodec()
	for _, comp := range []blazedb.Compression{blazedb.CompressionNone, blazedb.CompressionLZ4} {
		for i := uint64(0); i < 4; i++ {
			col := worldtest.Synthetic(i, world.Overworld, br)
			enc, err := d.Encode(col, Prev{}, comp)
			if err != nil {
				t.Fatal(err)
			}
			rec := bytes.Clone(enc.Rec)
			got, err := d.DecodeColumn(rec, world.Overworld.Range())
			if err != nil {
				t.Fatal(err)
			}
			for j := range rec {
				rec[j] = 0xA5
			}
			if err := worldtest.Compare(col, got); err != nil {
				t.Fatalf("compression %d: the column changed with its record: %v", comp, err)
			}
		}
	}
}

// A record with bytes it does not account for is refused, never decoded
// by guessing: after its end, after a sub-chunk inside the sub-chunk's
// frame, after the entities inside theirs.
func TestDecodeRefusesExtraBytes(t *testing.T) {
	_, d := testCodec()
	col := worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry)
	enc, err := d.Encode(col, Prev{}, blazedb.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	rec, lay := enc.Rec, enc.Layout
	if _, err := d.DecodeColumn(rec, world.Overworld.Range()); err != nil {
		t.Fatal(err)
	}
	// grow replaces the frame rec[start:end] with one holding a byte more.
	grow := func(start, end int) []byte {
		r := &reader{b: rec[start:end]}
		raw, _ := readFrame(r, nil)
		if r.err != nil {
			t.Fatal(r.err)
		}
		f, err := appendFrame(nil, blazedb.CompressionNone, append(slices.Clone(raw), 0))
		if err != nil {
			t.Fatal(err)
		}
		return slices.Concat(rec[:start], f, rec[end:])
	}
	for name, b := range map[string][]byte{
		"after the record": append(slices.Clone(rec), 0),
		"in a sub-chunk":   grow(lay.subStart, lay.subEnds[0]),
		"in the entities":  grow(lay.nbtStart, lay.nbtEnd),
	} {
		if _, err := d.DecodeColumn(b, world.Overworld.Range()); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A record whose signature or version this build does not know is refused
// as corrupt, a newer version saying so, never decoded by guessing.
func TestDecodeRefusesUnknownVersions(t *testing.T) {
	_, d := testCodec()
	col := worldtest.Synthetic(4, world.Overworld, world.DefaultBlockRegistry)
	enc, err := d.Encode(col, Prev{}, blazedb.CompressionLZ4)
	if err != nil {
		t.Fatal(err)
	}
	with := func(i int, b byte) []byte {
		rec := slices.Clone(enc.Rec)
		rec[i] = b
		return rec
	}
	for name, c := range map[string]struct {
		rec  []byte
		says string
	}{
		"newer version": {with(3, wholeVersion+1), "newer than this build reads"},
		// Issue 41: version 3 knows two flags.
		"version 3, unknown flag": {func() []byte { r := with(3, wholeVersion); r[4] = 1 << 2; return r }(), "column record flags"},
		"version 0":               {with(3, 0), "column record version 0"},
		"no signature":            {with(0, enc.Rec[0]^0xff), "no column signature"},
	} {
		_, err := d.DecodeColumn(c.rec, world.Overworld.Range())
		if !errors.Is(err, ErrCorrupt) || !containsAll(err.Error(), c.says) {
			t.Errorf("%s: %v, want ErrCorrupt saying %q", name, err, c.says)
		}
	}
}
