package rawchunk

// Bits are the bits per index a paletted storage may have.
var Bits = []byte{0, 1, 2, 3, 4, 5, 6, 8, 16}

// IndexWords returns the number of 32-bit index words of a storage of bits
// bits per index, and whether bits is one of Bits.
func IndexWords(bits byte) (int, bool) {
	switch bits {
	case 0:
		return 0, true
	case 1, 2, 3, 4, 5, 6, 8, 16:
		n := 4096 / (32 / int(bits))
		if bits == 3 || bits == 5 || bits == 6 {
			n++
		}
		return n, true
	}
	return 0, false
}
