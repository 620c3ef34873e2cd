package blazedb

import (
	"encoding/binary"
	"fmt"

	"github.com/blazeworld/blaze/blazedb/internal/morton"
)

// Key addresses a chunk record: a dimension and chunk coordinates. It is a
// comparable value, safe to copy and to use from any goroutine.
type Key struct {
	Dim  int32
	X, Z int32
}

func (k Key) String() string { return fmt.Sprintf("(%d, %d, dim %d)", k.X, k.Z, k.Dim) }

func (k Key) code() uint64 { return morton.Encode(k.X, k.Z) }

// Area is an inclusive rectangle of chunk coordinates in one dimension: a
// value, safe to copy and to use from any goroutine.
type Area struct {
	Dim                    int32
	MinX, MinZ, MaxX, MaxZ int32
}

func (a Area) contains(x, z int32) bool {
	return x >= a.MinX && x <= a.MaxX && z >= a.MinZ && z <= a.MaxZ
}

// Record keys as stored in chunks.dat. Part of the on-disk format.
//
//	chunk key (13 bytes):  tag 0x01 | dim int32 LE | x int32 LE | z int32 LE
//	named key (2..1025):   tag 0x02 | name, 1 to MaxNameLen bytes
const (
	keyTagChunk = 0x01
	keyTagNamed = 0x02
	chunkKeyLen = 13
	// MaxNameLen is the longest name of a named record.
	MaxNameLen = 1024
)

func appendChunkKey(b []byte, k Key) []byte {
	b = append(b, keyTagChunk)
	b = binary.LittleEndian.AppendUint32(b, uint32(k.Dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(k.X))
	return binary.LittleEndian.AppendUint32(b, uint32(k.Z))
}

func appendNamedKey(b []byte, name string) []byte {
	return append(append(b, keyTagNamed), name...)
}

// rkey is a parsed record key.
type rkey struct {
	named bool
	chunk Key
	name  string
}

func parseKey(b []byte) (rkey, error) {
	switch {
	case len(b) == chunkKeyLen && b[0] == keyTagChunk:
		return rkey{chunk: Key{
			Dim: int32(binary.LittleEndian.Uint32(b[1:])),
			X:   int32(binary.LittleEndian.Uint32(b[5:])),
			Z:   int32(binary.LittleEndian.Uint32(b[9:])),
		}}, nil
	case len(b) >= 2 && len(b) <= MaxNameLen+1 && b[0] == keyTagNamed:
		return rkey{named: true, name: string(b[1:])}, nil
	}
	return rkey{}, fmt.Errorf("malformed key of %d bytes", len(b))
}

func (k rkey) appendTo(b []byte) []byte {
	if k.named {
		return appendNamedKey(b, k.name)
	}
	return appendChunkKey(b, k.chunk)
}

func (k rkey) String() string {
	if k.named {
		return fmt.Sprintf("%q", k.name)
	}
	return k.chunk.String()
}

func checkName(name string) error {
	if len(name) == 0 || len(name) > MaxNameLen {
		return fmt.Errorf("%w: name of %d bytes (want 1 to %d)", ErrTooLarge, len(name), MaxNameLen)
	}
	if isReservedName(name) {
		return fmt.Errorf("%w: %q", ErrReservedName, name)
	}
	return nil
}
