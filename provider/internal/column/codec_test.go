package column

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider/internal/rawchunk"
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
// or errUnknown; never a panic. What decodes re-encodes to a record
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
		}
	}
	empty, _ := d.Encode(&chunk.Column{Chunk: chunk.New(br, world.Overworld.Range())}, Prev{}, blazedb.CompressionNone)
	f.Add(empty.Rec)
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

// The word-at-a-time index check agrees with a plain one on random words.
func TestIndicesBelowMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	scalar := func(words []byte, bits byte, n int) bool {
		per, mask := 32/int(bits), uint32(1)<<bits-1
		seen := 0
		for i := 0; i+4 <= len(words) && seen < 4096; i += 4 {
			w := uint32(words[i]) | uint32(words[i+1])<<8 | uint32(words[i+2])<<16 | uint32(words[i+3])<<24
			for j := 0; j < per && seen < 4096; j++ {
				if w&mask >= uint32(n) {
					return false
				}
				w >>= bits
				seen++
			}
		}
		return true
	}
	for _, bits := range []byte{1, 2, 3, 4, 5, 6, 8, 16} {
		words, _ := rawchunk.IndexWords(bits)
		for trial := 0; trial < 300; trial++ {
			n := 1 + rng.IntN(1<<bits)
			buf := make([]byte, words*4)
			// Mostly valid indices, sometimes one bad one anywhere.
			per := 32 / int(bits)
			for f := 0; f < 4096; f++ {
				v := uint32(rng.IntN(n))
				if trial%3 == 0 && rng.IntN(4096) == 0 {
					v = uint32(n + rng.IntN(1<<bits-n+1))
					if v >= 1<<bits {
						v = 1<<bits - 1
					}
				}
				w, at := f/per, uint(f%per)*uint(bits)
				x := uint32(buf[w*4]) | uint32(buf[w*4+1])<<8 | uint32(buf[w*4+2])<<16 | uint32(buf[w*4+3])<<24
				x |= v << at
				buf[w*4], buf[w*4+1], buf[w*4+2], buf[w*4+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
			}
			if got, want := indicesBelow(buf, bits, n), scalar(buf, bits, n); got != want {
				t.Fatalf("bits %d n %d: %v, scalar %v", bits, n, got, want)
			}
		}
	}
}

// A biome storage whose index words repeat the storage below it skips the
// index check only when its palette is at least as long: the same words
// under a shorter palette are still refused, and index 3 under a palette
// of 4 is still accepted after a palette of 3 refused nothing.
func TestBiomeRepeatedWordsChecked(t *testing.T) {
	words := make([]byte, 256*4) // bits 2: 256 words
	words[0] = 3                 // the first index is 3
	storage := func(n int) []byte {
		b := append([]byte{2<<1 | 1}, words...)
		b = append(b, byte(n<<1)) // zig-zag varint: palette length
		for j := range n {
			b = append(b, byte(j<<1))
		}
		return b
	}
	enc := func(ns ...int) []byte {
		var b []byte
		for _, n := range ns {
			b = append(b, storage(n)...)
		}
		return b
	}
	if err := walkBiomes(enc(4, 4, 4), 3, nil); err != nil {
		t.Fatalf("valid repeated storages refused: %v", err)
	}
	if err := walkBiomes(enc(4, 3), 2, nil); err == nil {
		t.Fatal("index 3 under a palette of 3 accepted after the same words under a palette of 4")
	}
	if err := walkBiomes(enc(3, 4), 2, nil); err == nil {
		t.Fatal("index 3 under a palette of 3 accepted")
	}
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
		"newer version": {with(3, recordVersion+1), "newer than this build reads"},
		"version 0":     {with(3, 0), "column record version 0"},
		"no signature":  {with(0, enc.Rec[0]^0xff), "no column signature"},
	} {
		_, err := d.DecodeColumn(c.rec, world.Overworld.Range())
		if !errors.Is(err, ErrCorrupt) || !containsAll(err.Error(), c.says) {
			t.Errorf("%s: %v, want ErrCorrupt saying %q", name, err, c.says)
		}
	}
}
