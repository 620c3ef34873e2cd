package column

import (
	"bytes"
	"encoding/binary"

	"github.com/blazeworld/blaze/provider/internal/rawchunk"
)

// The checks in this file guard the packed paletted storages of the
// network encoding (sub-chunk layers and biomes). Dragonfly's decoder does
// not check that every index lies inside its palette, and an index past it
// would panic later, inside the World, so every record is checked here.

// indicesBelow reports whether the first 4096 indices packed in words (bits
// each, little-endian uint32 words) are all below n. Dragonfly does not
// check this when decoding, and an index past its palette would panic later
// inside the World. It tests a whole word at a time: the word's fields are
// split into two sets of lanes, every field with bits spare bits above it;
// adding 2^bits-n to every lane carries into the bit above exactly the
// fields that are >= n.
func indicesBelow(words []byte, bits byte, n int) bool {
	if n >= 1<<bits {
		return true
	}
	l := &laneTables[bits]
	full := 4096 / l.perWord // words whose every field is an index
	add := uint64(1<<bits-n) * l.ones
	i := 0
	// Eight words at once, as four pairs (the lanes repeat every word),
	// their carries gathered before one test: a field below n never sets
	// its carry bit, so neither does an OR of them.
	even, odd, fix := l.even, l.odd, l.oddFix
	lane := func(w uint64) uint64 { return (w&even + add) | ((w>>bits&odd)*fix + add) }
	for ; i+8 <= full; i += 8 {
		b := words[i*4 : i*4+32]
		c := lane(binary.LittleEndian.Uint64(b)) | lane(binary.LittleEndian.Uint64(b[8:])) |
			lane(binary.LittleEndian.Uint64(b[16:])) | lane(binary.LittleEndian.Uint64(b[24:]))
		if c&l.carry != 0 {
			return false
		}
	}
	for ; i+2 <= full; i += 2 {
		if lane(binary.LittleEndian.Uint64(words[i*4:]))&l.carry != 0 {
			return false
		}
	}
	if i < full {
		w := uint64(binary.LittleEndian.Uint32(words[i*4:]))
		even := (w & l.even & 0xFFFFFFFF) + add
		odd := (w>>bits&l.odd&0xFFFFFFFF)*l.oddFix + add
		if (even|odd)&l.carry&0xFFFFFFFF != 0 {
			return false
		}
	}
	// The last, partly used word, field by field.
	mask, limit := uint32(1)<<bits-1, uint32(n)
	for i, seen := full, full*l.perWord; seen < 4096 && (i+1)*4 <= len(words); i++ {
		w := binary.LittleEndian.Uint32(words[i*4:])
		for j := 0; j < l.perWord && seen < 4096; j++ {
			if w&mask >= limit {
				return false
			}
			w >>= bits
			seen++
		}
	}
	return true
}

// lanes describes the SWAR lanes for one index size: lanes are 2*bits wide
// and start at bit 0; even fields sit in them directly, odd fields after a
// shift right by bits.
type lanes struct {
	perWord   int
	even, odd uint64 // masks of the even and (shifted) odd fields, both words
	ones      uint64 // 1 at the bottom of every lane
	oddFix    uint64 // 1, or 0 when there are no odd fields
	carry     uint64 // the bit just above every lane's field
}

var laneTables = func() (t [17]lanes) {
	for _, b := range []int{1, 2, 3, 4, 5, 6, 8, 16} {
		l := &t[b]
		l.perWord = 32 / b
		for word := 0; word < 2; word++ {
			for f := 0; f < l.perWord; f += 2 {
				// Even field f sits at bit f*b; odd field f+1 lands there
				// after >> b. The second word repeats the first 32 bits up.
				at := uint(word*32 + f*b)
				l.even |= (1<<b - 1) << at
				l.ones |= 1 << at
				l.carry |= 1 << (at + uint(b))
				if f+1 < l.perWord {
					l.odd |= (1<<b - 1) << at
				}
			}
		}
		l.oddFix = 1
		if l.perWord == 1 {
			l.oddFix = 0
		}
	}
	return t
}()

// storageWords reads the index words of one paletted storage whose header
// byte hdr (bits per index << 1 | a flag) was read, in the layout a
// sub-chunk's block layers and a column's biomes share (the network
// encoding's), checking the bits per index; paletteLen checks the palette
// length that follows for bits > 0. The caller reads that length and the
// entries, which the two read differently, and checks the indices against
// the palette (indicesBelow), which the biome walk can often skip. A
// failure is recorded in r, naming the storage as what and i.
//
// walkLayers and walkBiomes share these rather than being one walker: a
// biome storage may repeat the one below (header 0x7f) and the biomes end
// the input, while layers come a counted number to a sub-chunk, with
// entries read, bounded and translated by the caller's functions. (The
// length is not read here through a function value: that would move the
// biome walk's reader to the heap.)
func storageWords(r *reader, what string, i int, hdr byte) (bits byte, words []byte) {
	bits = hdr >> 1
	if hdr&1 != 1 {
		// Every encoding read here (the network encoding, a record, a flat
		// copy) sets the runtime bit: a header without it is not one of
		// them, and taking it would give one storage two encodings.
		r.fail("%s %d has a header without the runtime bit (%#x)", what, i, hdr)
		return bits, nil
	}
	w, ok := rawchunk.IndexWords(bits)
	if !ok {
		r.fail("%s %d has %d bits per index", what, i, bits)
		return bits, nil
	}
	return bits, r.bytes(w * 4)
}

// paletteLen checks n, the palette length of storage i (see
// storageWords), and returns it.
func paletteLen(r *reader, what string, i int, n uint64) int {
	if r.err == nil && (n < 1 || n > 4096) {
		r.fail("%s %d has a palette of %d entries", what, i, n)
	}
	return int(n)
}

// walkBiomes validates the network biome encoding b of a column of subs
// sub-chunks (one storage per sub-chunk, the first not "same as previous",
// every index inside its palette) and, unless fn is nil, calls fn
// with each storage: its bits per index, index words and palette, or a nil
// palette for a storage that repeats the previous one. The palette is
// valid only during the call.
func walkBiomes(b []byte, subs int, fn func(i int, bits byte, words []byte, palette []uint32)) error {
	r := &reader{b: b}
	var palette []uint32
	// The last storage checked: biomes change little with height, so a
	// storage often has the same index words as the one below it without
	// being written as a repeat (Dragonfly's encoder never repeats a storage
	// whose palette starts with biome 0). Words already found below a palette
	// of lastN entries are below any palette at least as long.
	var lastWords []byte
	lastBits, lastN := byte(0), 0
	for i := 0; i < subs && r.err == nil; i++ {
		hdr := r.byte()
		if hdr>>1 == 0x7f {
			if i == 0 {
				r.fail("first biome storage refers to a previous one")
			} else if fn != nil {
				fn(i, 0, nil, nil)
			}
			continue
		}
		bits, idx := storageWords(r, "biome storage", i, hdr)
		n := 1
		if bits != 0 {
			n = paletteLen(r, "biome storage", i, readVarint32(r))
		}
		if r.err != nil {
			break
		}
		if bits != 0 {
			checked := bits == lastBits && n >= lastN && bytes.Equal(idx, lastWords)
			if !checked && !indicesBelow(idx, bits, n) {
				r.fail("biome storage %d has an index beyond its palette", i)
				break
			}
			lastWords, lastBits, lastN = idx, bits, n
		}
		palette = palette[:0]
		for j := 0; j < n && r.err == nil; j++ {
			v := uint32(readVarint32(r))
			if fn != nil {
				palette = append(palette, v)
			}
		}
		if r.err == nil && fn != nil {
			fn(i, bits, idx, palette)
		}
	}
	if r.err == nil && r.off != len(b) {
		r.fail("%d trailing bytes", len(b)-r.off)
	}
	return r.err
}
