package blazedb

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/golang/snappy"
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
