package convert

import (
	"fmt"

	"github.com/blazeworld/blaze/internal/nbtwalk"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// The decoders mcdb reads a column with allocate what a record declares
// before they read it: Dragonfly's disk decoder a palette of as many
// entries as a uint32 says, gophertunnel's NBT decoder a list of as many
// elements as an int32 says. So each record is walked before it reaches
// them, and one that declares more than its bytes could hold, or nests
// NBT too deep, is refused (package nbtwalk says why a walk refuses only
// what the decoders fail on, and its one departure).
//
// Dragonfly's disk decoder (chunk.DiskDecode, v0.11.2) reads a column's
// biomes, then each sub-chunk record: a version (1: one storage; 8: a
// count of storages; 9: a count and the sub-chunk's y), then each paletted
// storage as a header byte (bits per index << 1 | runtime bit; 0x7f << 1
// repeats the storage before it), the index words, and for more than 0
// bits a uint32 palette length, then the entries: NBT block states, or
// uint32 biome ids. checkPalettes walks that layout; the entries of a block
// palette are walked as NBT, so that the layers after the first are
// reached too.

// Sizes of the smallest palette entry on disk.
const (
	minBlockEntry = 1 // an NBT tag byte
	minBiomeEntry = 4 // a little-endian uint32
)

// unreadable is err, a walk's refusal, as the column's ErrUnreadable.
func unreadable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrUnreadable, err)
}

// checkPalettes returns the refusal of the first storage of d (n
// sub-chunks, as chunk.DiskDecode is given) whose palette, or a block
// state in it, declares more than its bytes hold.
func checkPalettes(d chunk.SerialisedData, n int) error {
	if err := nbtwalk.Refusal(walkBiomes(&nbtwalk.Walker{B: d.Biomes}, n)); err != nil {
		return unreadable(err)
	}
	for i, sub := range d.SubChunks {
		if err := nbtwalk.Refusal(walkSubChunk(&nbtwalk.Walker{B: sub})); err != nil {
			return unreadable(fmt.Errorf("sub-chunk %d: %w", i, err))
		}
	}
	return nil
}

// walkBiomes walks the biome storages of n sub-chunks in w.B. Empty
// biomes are absent, as the decoder takes them.
func walkBiomes(w *nbtwalk.Walker, n int) error {
	if len(w.B) == 0 {
		return nil
	}
	for i := 0; i < n; i++ {
		if err := storage(w, true); err != nil {
			return fmt.Errorf("biome storage %d: %w", i, err)
		}
	}
	return nil
}

// walkSubChunk walks the storages of the sub-chunk record in w.B. An empty
// one is absent, as the decoder takes it.
func walkSubChunk(w *nbtwalk.Walker) error {
	if len(w.B) == 0 {
		return nil
	}
	ver, _ := w.Byte()
	count := 1
	switch ver {
	case 1:
	case 8, 9:
		c, err := w.Byte()
		if err != nil {
			return err
		}
		if ver == 9 {
			if _, err := w.Byte(); err != nil {
				return err
			}
		}
		count = int(c)
	default:
		return nbtwalk.ErrStop
	}
	for i := 0; i < count; i++ {
		if err := storage(w, false); err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return nil
}

// storage walks one paletted storage: biome ids if biome, else block
// states.
func storage(w *nbtwalk.Walker, biome bool) error {
	hdr, err := w.Byte()
	if err != nil {
		return err
	}
	bits := int64(hdr >> 1)
	switch {
	case bits == 0x7f:
		return nil // the storage before it, again (the decoder's nil)
	case bits > 32:
		return nbtwalk.ErrStop
	}
	var words int64
	if bits != 0 {
		words = 4096 / (32 / bits)
		if bits == 3 || bits == 5 || bits == 6 {
			words++ // the padded sizes take one word more
		}
	}
	if err := w.Skip(words * 4); err != nil {
		return err
	}
	n := int64(1) // 0 bits: one entry, no length
	if bits != 0 {
		// The decoder reads a uint32, not an int32.
		u, err := w.Uint32()
		if err != nil {
			return err
		}
		n = int64(u)
	}
	if biome {
		if err := w.Elements("a palette", n, minBiomeEntry); err != nil {
			return err
		}
		return w.Skip(n * minBiomeEntry)
	}
	if err := w.Elements("a palette", n, minBlockEntry); err != nil {
		return err
	}
	owed := w.Owed
	defer func() { w.Owed = owed }()
	for i := range n {
		w.Owed = owed + (n-1-i)*minBlockEntry // the entries after this one
		if err := w.Tree(); err != nil {
			return err
		}
	}
	return nil
}
