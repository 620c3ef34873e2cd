package morton

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	cases := [][2]int32{{0, 0}, {-1, -1}, {1, -2}, {math.MaxInt32, math.MinInt32}, {math.MinInt32, math.MaxInt32}}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		cases = append(cases, [2]int32{int32(r.Uint32()), int32(r.Uint32())})
	}
	for _, c := range cases {
		x, z := Decode(Encode(c[0], c[1]))
		if x != c[0] || z != c[1] {
			t.Fatalf("Decode(Encode(%d,%d)) = %d,%d", c[0], c[1], x, z)
		}
	}
}

// Codes must be monotonic in each coordinate, or range scans over a
// rectangle would miss keys.
func TestMonotonic(t *testing.T) {
	for x := int32(-40); x < 40; x++ {
		for z := int32(-40); z < 40; z++ {
			if Encode(x, z) >= Encode(x+1, z) || Encode(x, z) >= Encode(x, z+1) {
				t.Fatalf("not monotonic at %d,%d", x, z)
			}
		}
	}
}

// Neighbours in a 2x2 aligned block are adjacent codes: the spatial locality
// the index relies on.
func TestLocality(t *testing.T) {
	base := Encode(-4, 6)
	if Encode(-3, 6) != base+1 || Encode(-4, 7) != base+2 || Encode(-3, 7) != base+3 {
		t.Fatal("aligned 2x2 block is not contiguous")
	}
}
