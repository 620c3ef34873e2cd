package column

import (
	"encoding/binary"
	"fmt"

	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// The fast paths: the decoder reads and checks the record's sub-chunks and
// biomes here, and rawchunk builds them straight from their index words
// and palettes, with the results NetworkDecode gives; the encoder writes a
// sub-chunk's record straight from its storages' words and palettes
// (TestRawStorageMatchesNetworkDecode). Neither goes through the network
// encoding.

// buildSub reads one sub-chunk in the shared layout from r into a new
// SubChunk from a whose air is air, translating palette entries (read with
// read) with tr. It returns the sub-chunk's y byte with it.
func buildSub(b *rawchunk.Builder, a *rawchunk.Arena, r *reader, air uint32, read func(*reader) uint64, tr func(uint32) (uint64, error)) (*chunk.SubChunk, byte, error) {
	_, layers, y, err := readSubHeader(r)
	if err != nil {
		return nil, 0, err
	}
	if layers == 0 {
		return b.SubChunk(a, air, nil), y, nil
	}
	storages := a.Layers(int(layers))
	var (
		l       int
		bits    byte
		words   []byte
		palette []uint32
	)
	err = walkLayers(r, int(layers), read, tr, func(hdr byte, w []byte, n int) {
		bits, words, palette = hdr>>1, w, a.Values(n)
	}, func(i int, t uint64) {
		palette[i] = uint32(t)
		if i == len(palette)-1 {
			storages[l] = b.Storage(a, bits, words, palette)
			l++
		}
	})
	if err != nil {
		return nil, 0, err
	}
	return b.SubChunk(a, air, storages), y, nil
}

// buildChunk builds a chunk like tmpl (an empty chunk of the column's
// range, never modified) from subs, placed where ys say, and the network
// biome encoding, with the checks and the results of NetworkDecode, except
// that a biome storage that repeats the previous one is a copy of it, not
// (as there) the same storage, which a SetBiome in either sub-chunk would
// change for both.
func buildChunk(b *rawchunk.Builder, a *rawchunk.Arena, tmpl *chunk.Chunk, subs []*chunk.SubChunk, ys []byte, biomes []byte) (*chunk.Chunk, error) {
	if len(subs) > len(tmpl.Sub()) {
		return nil, fmt.Errorf("invalid sub-chunk count %d: chunk range has %d sub-chunks", len(subs), len(tmpl.Sub()))
	}
	bs := a.Layers(len(tmpl.Sub()))
	err := walkBiomes(biomes, len(bs), func(i int, bits byte, words []byte, palette []uint32) {
		if palette == nil {
			bs[i] = b.CopyOf(a, bs[i-1])
		} else {
			bs[i] = b.Storage(a, bits, words, a.Palette(palette))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("biomes: %w", err)
	}
	return b.Chunk(a, tmpl, subs, ys, bs)
}

// appendSubIDs appends sub-chunk sub, at y, to dst in the record's shared
// layout (format.go), its palette entries as dictionary ids (toID, which
// the caller makes safe to call), straight from the storages' words and
// palettes. It gives the bytes rewriteSub gives of the sub-chunk's network
// encoding, and refuses what walkLayers refuses there: bits per index
// Dragonfly does not have (or index words that do not match them), a
// palette of no entries or more than 4096 (or of more than one at 0 bits),
// an index beyond its palette, a runtime id past 2^31. Any of those would
// make a record that does not read back.
func appendSubIDs(dst []byte, b *rawchunk.Builder, sub *chunk.SubChunk, y int, toID func(uint32) (uint64, error)) ([]byte, error) {
	bad := func(format string, args ...any) ([]byte, error) {
		return nil, fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	layers := sub.Layers()
	if len(layers) > 255 {
		return bad("%d layers", len(layers))
	}
	dst = append(dst, chunk.SubChunkVersion, byte(len(layers)), uint8(y))
	for l, s := range layers {
		words := b.WordBytes(s)
		bits := byte(min(len(words)/512, 255))
		if n, ok := rawchunk.IndexWords(bits); !ok || 4*n != len(words) {
			return bad("layer %d has %d bits per index", l, bits)
		}
		values := b.Values(s)
		n := len(values)
		if (bits == 0 && n != 1) || n < 1 || n > 4096 {
			return bad("palette of %d entries", n)
		}
		if bits != 0 && !indicesBelow(words, bits, n) {
			return bad("layer %d has an index beyond its palette of %d", l, n)
		}
		dst = append(dst, bits<<1|1)
		dst = append(dst, words...)
		if bits != 0 {
			dst = binary.AppendUvarint(dst, uint64(n))
		}
		for _, v := range values {
			if v > 1<<31 {
				return bad("palette entry out of range")
			}
			id, err := toID(v)
			if err != nil {
				return nil, err
			}
			dst = binary.AppendUvarint(dst, id)
		}
	}
	return dst, nil
}
