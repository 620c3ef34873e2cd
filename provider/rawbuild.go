package provider

import (
	"fmt"

	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// The decoder's fast path: the record's sub-chunks and biomes are read and
// checked here, and built by rawchunk straight from their index words and
// palettes, with the results NetworkDecode gives (TestRawStorageMatches
// NetworkDecode), without rewriting them into the network encoding first.

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
