package morton

// bias flips the sign bit so that int32 order equals uint32 order, which
// makes codes monotonic in each coordinate: the code of a rectangle's minimum
// corner is the smallest in it and that of its maximum corner the largest.
const bias = 1 << 31

// Encode interleaves x (even bits) and z (odd bits).
func Encode(x, z int32) uint64 {
	return spread(uint32(x)^bias) | spread(uint32(z)^bias)<<1
}

// Decode is the inverse of Encode.
func Decode(code uint64) (x, z int32) {
	return int32(compact(code) ^ bias), int32(compact(code>>1) ^ bias)
}

func spread(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	return x
}

func compact(x uint64) uint32 {
	x &= 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	return uint32(x)
}
