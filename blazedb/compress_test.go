package blazedb

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/pierrec/lz4/v4"
)

// No codec shrinks an input of incompressible bytes or fewer, so storing
// those raw without trying changes no output: each codec is run here on
// such inputs (constant, repeating and random) and never gains a byte.
func TestTinyInputsNeverShrink(t *testing.T) {
	if err := zstdInit(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var lc lz4.Compressor
	for n := 0; n <= incompressible; n++ {
		inputs := [][]byte{bytes.Repeat([]byte{0}, n), bytes.Repeat([]byte("ab"), n)[:n], make([]byte, n)}
		for i := range inputs[2] {
			inputs[2][i] = byte(rng.Uint32())
		}
		for _, in := range inputs {
			dst := make([]byte, lz4.CompressBlockBound(len(in)))
			if k, err := lc.CompressBlock(in, dst); err == nil && k > 0 && k < len(in) {
				t.Fatalf("lz4 shrinks %d bytes %x to %d", n, in, k)
			}
			if out := snappy.Encode(nil, in); len(out) < len(in) {
				t.Fatalf("snappy shrinks %d bytes %x to %d", n, in, len(out))
			}
			if out := zstdEnc.EncodeAll(in, nil); len(out) < len(in) {
				t.Fatalf("zstd shrinks %d bytes %x to %d", n, in, len(out))
			}
		}
	}
	// And the shortcut stores them raw.
	for _, c := range []Compression{CompressionLZ4, CompressionSnappy, CompressionZstd} {
		out, used, err := Compress(nil, c, []byte("0123456789ab"))
		if err != nil || used != CompressionNone || string(out) != "0123456789ab" {
			t.Fatalf("%v: %q, %v, %v", c, out, used, err)
		}
	}
}

// Decompression yields exactly the raw length the record states, or an
// error: every codec's output is checked against it, since a record's
// checksum covers only the stored bytes.
func TestDecompressChecksRawLength(t *testing.T) {
	raw := bytes.Repeat([]byte("a column's worth of bytes, "), 100)
	for _, c := range []codec{codecNone, codecLZ4, codecSnappy, codecZstd} {
		stored, used, err := compress(nil, c, raw)
		if err != nil || used != c {
			t.Fatalf("codec %d: compressed with %d, %v", c, used, err)
		}
		if out, err := decompressAppend(nil, c, stored, len(raw)); err != nil || !bytes.Equal(out, raw) {
			t.Fatalf("codec %d: %v", c, err)
		}
		for _, n := range []int{len(raw) - 1, len(raw) + 1} {
			if out, err := decompressAppend(nil, c, stored, n); err == nil {
				t.Errorf("codec %d: %d bytes taken for a raw length of %d", c, len(out), n)
			}
		}
		if _, err := decompressAppend(nil, c, stored, maxValueLen+1); err == nil {
			t.Errorf("codec %d: a raw length over the limit accepted", c)
		}
	}
}

// A raw length that the stored bytes could never decode to is refused
// before any room is made for it, so a few bad bytes cannot make a read
// allocate up to maxValueLen; and the most compressible input each codec
// can be given still decodes, so the bounds refuse nothing real.
func TestDecompressBoundsRawLengthByInput(t *testing.T) {
	zeros := make([]byte, 8<<20)
	for _, c := range []codec{codecLZ4, codecSnappy, codecZstd} {
		stored, used, err := compress(nil, c, zeros)
		if err != nil || used != c {
			t.Fatalf("codec %d: compressed with %d, %v", c, used, err)
		}
		if out, err := decompressAppend(nil, c, stored, len(zeros)); err != nil || !bytes.Equal(out, zeros) {
			t.Fatalf("codec %d: %d zero bytes stored in %d do not decode: %v", c, len(zeros), len(stored), err)
		}
		bad := stored[:8]
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = decompressAppend(nil, c, bad, maxValueLen)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatalf("codec %d: 8 bytes decoded to %d", c, maxValueLen)
		}
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<20 {
			t.Errorf("codec %d: refusing 8 bytes for %d allocated %d bytes", c, maxValueLen, grown)
		}
	}
}

// Issue 38 item 10: Snappy moved from the archived github.com/golang/snappy
// to github.com/klauspost/compress/snappy. Records written before the move
// hold golang/snappy's bytes, so those bytes, kept here as fixtures, must
// still decode to the values they were made from: a short value of literals
// and near copies, and one with literals of two-byte length and copies
// more than 2 KiB back (testdata/snappy-golang-far.hex). Both fixtures were
// made by golang/snappy v1.0.0's Encode. And the new encoder's output must
// decode back, with no more expansion than maxExpansion allows.
func TestSnappyReadsGolangSnappyBytes(t *testing.T) {
	near := []byte(`{"name":"minecraft:stone","states":{"stone_type":"granite"}} ` +
		strings.Repeat("stone dirt grass ", 6) + "bedrock\x00\x01\x02\x03")
	nearHex := "ae01907b226e616d65223a226d696e6563726166743a73746f6e65222c22737461746573223a7b2205120c5f7479700129286772616e697465227d7d200518282064697274206772617373fe110056110028626564726f636b00010203"

	// far: 100 bytes of xorshift32, 3,000 more, the first 100 again, and
	// 500 bytes of a seven-letter cycle.
	x := uint32(2463534242)
	next := func() byte { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return byte(x) }
	var far []byte
	for range 3100 {
		far = append(far, next())
	}
	far = append(far, far[:100]...)
	for i := range 500 {
		far = append(far, byte('a'+i%7))
	}
	farHex, err := os.ReadFile(filepath.Join("testdata", "snappy-golang-far.hex"))
	if err != nil {
		t.Fatal(err)
	}

	for _, fx := range []struct {
		name string
		raw  []byte
		hex  string
	}{{"near", near, nearHex}, {"far", far, strings.TrimSpace(string(farHex))}} {
		stored, err := hex.DecodeString(fx.hex)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) >= len(fx.raw) {
			t.Fatalf("%s: fixture of %d bytes does not compress %d", fx.name, len(stored), len(fx.raw))
		}
		out, err := Decompress([]byte("pre"), CompressionSnappy, stored, len(fx.raw))
		if err != nil || string(out[:3]) != "pre" || !bytes.Equal(out[3:], fx.raw) {
			t.Fatalf("%s: golang/snappy's bytes do not decode to their value: %v", fx.name, err)
		}
		again, used, err := Compress(nil, CompressionSnappy, fx.raw)
		if err != nil || used != CompressionSnappy {
			t.Fatalf("%s: compressed with %v: %v", fx.name, used, err)
		}
		if out, err := Decompress(nil, CompressionSnappy, again, len(fx.raw)); err != nil || !bytes.Equal(out, fx.raw) {
			t.Fatalf("%s: new encoder's bytes do not decode: %v", fx.name, err)
		}
	}
}

// Issue 38 item 10: klauspost's snappy.Decode is s2's decoder, which takes
// s2's extensions to the Snappy format; golang/snappy refused them, and so
// must a Snappy record. The s2 block here holds copies of offset 0 (s2's
// "repeat the last offset"): valid s2, decoded by snappy.Decode, damage as
// Snappy.
func TestSnappyRefusesS2Extensions(t *testing.T) {
	var raw []byte
	for i := range 40 {
		raw = append(raw, fmt.Sprintf("block%02d:0123456789abcdef", i)...)
	}
	stored := s2.Encode(nil, raw)
	if out, err := snappy.Decode(nil, stored); err != nil || !bytes.Equal(out, raw) {
		t.Fatalf("the s2 block is not valid s2: %v", err)
	}
	if len(raw) > maxExpansion(codecSnappy, len(stored)) {
		t.Fatalf("%d bytes from %d: refused by the length bound before decoding", len(raw), len(stored))
	}
	if out, err := Decompress(nil, CompressionSnappy, stored, len(raw)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("an s2 block read as Snappy: %d bytes, %v", len(out), err)
	}
}

// Issue 37: the codec ids callers frame their parts with are the record
// header's, from the one table; every compression but the default has one,
// and each id gives back its compression.
func TestCodecIDs(t *testing.T) {
	want := map[Compression]byte{CompressionNone: 0, CompressionLZ4: 1, CompressionSnappy: 2, CompressionZstd: 3}
	for c, id := range want {
		got, ok := c.CodecID()
		if !ok || got != id {
			t.Errorf("%v: id %d, %v; want %d", c, got, ok, id)
		}
		if back, ok := CompressionOfID(id); !ok || back != c {
			t.Errorf("id %d: %v, %v; want %v", id, back, ok, c)
		}
	}
	if _, ok := CompressionDefault.CodecID(); ok {
		t.Error("the default has an id")
	}
	if _, ok := CompressionOfID(4); ok {
		t.Error("id 4 reads as a compression")
	}
}
