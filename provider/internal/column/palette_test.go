package column

import (
	"math/rand/v2"
	"testing"

	"github.com/blazeworld/blaze/provider/internal/rawchunk"
)

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
