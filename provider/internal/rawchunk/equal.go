package rawchunk

import (
	"bytes"
	"encoding/binary"

	"github.com/df-mc/dragonfly/server/world/chunk"
)

// EqualSubChunk reports whether enc is exactly the network encoding
// AppendSubChunk appends for sub as the sub-chunk at y (the encoding's y
// byte), reading enc and the storages in place instead of encoding sub
// again: the store queue's comparison of a World's sub-chunk with a flat
// copy (issue 42). Bytes that are not such an encoding are simply unequal.
func (b *Builder) EqualSubChunk(enc []byte, sub *chunk.SubChunk, y int) bool {
	layers := sub.Layers()
	if len(enc) < 3 || enc[0] != chunk.SubChunkVersion || enc[1] != byte(len(layers)) || enc[2] != uint8(y) {
		return false
	}
	enc = enc[3:]
	for _, s := range layers {
		var ok bool
		if enc, ok = b.equalStorage(enc, s); !ok {
			return false
		}
	}
	return len(enc) == 0
}

// EqualBiomes reports whether enc is exactly what AppendBiomes appends for
// c's biomes, without encoding them.
func (b *Builder) EqualBiomes(enc []byte, c *chunk.Chunk) bool {
	var prev *chunk.PalettedStorage
	for _, s := range *b.biomeStorages(c) {
		if s.Equal(prev) {
			if len(enc) == 0 || enc[0] != 0x7f<<1|1 {
				return false
			}
			enc = enc[1:]
		} else {
			var ok bool
			if enc, ok = b.equalStorage(enc, s); !ok {
				return false
			}
		}
		prev = s
	}
	return len(enc) == 0
}

// equalStorage reports whether enc begins with AppendStorage's encoding of
// s, byte for byte, and returns what follows it.
func (b *Builder) equalStorage(enc []byte, s *chunk.PalettedStorage) ([]byte, bool) {
	words := b.WordBytes(s)
	bits := len(words) / 512
	if len(enc) < 1+len(words) || enc[0] != byte(bits<<1|1) || !bytes.Equal(enc[1:1+len(words)], words) {
		return nil, false
	}
	enc = enc[1+len(words):]
	// Each varint compared in the bytes AppendVarint32 gives it: a value
	// read back would let a longer form of the same number pass.
	var tmp [binary.MaxVarintLen32]byte
	next := func(v uint32) bool {
		e := AppendVarint32(tmp[:0], v)
		if !bytes.HasPrefix(enc, e) {
			return false
		}
		enc = enc[len(e):]
		return true
	}
	values := b.Values(s)
	if bits != 0 && !next(uint32(len(values))) {
		return nil, false
	}
	for _, v := range values {
		if !next(v) {
			return nil, false
		}
	}
	return enc, true
}
