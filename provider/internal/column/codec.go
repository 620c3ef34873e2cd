package column

import (
	"sync"

	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Dictionary is the world's block dictionary as the codec sees it: the
// ids a record's palettes hold for runtime ids, and back. The provider's
// dictionary implements it.
type Dictionary interface {
	// Lock and Unlock bracket calls of ID; the codec never holds the lock
	// across anything but translating ids.
	sync.Locker
	// ID returns runtime id rid's dictionary id, assigning a new one if
	// need be, and reports whether that id is not yet persisted (fresh).
	// The caller holds the lock.
	ID(rid uint32) (id int32, fresh bool, err error)
	// Registry returns the block registry ids resolve in, or nil if none
	// is set yet.
	Registry() chunk.BlockRegistry
	// Decoding returns, at one moment, the registry (nil if none), the
	// table from dictionary id to runtime id (NoRID where the registry has
	// none; only ever replaced or appended to, never changed in place, so
	// it is read without the lock) and, if template, an empty chunk of rng
	// under the registry, which nothing modifies.
	Decoding(rng cube.Range, template bool) (chunk.BlockRegistry, []uint32, *chunk.Chunk)
	// Unknown returns the error for dictionary id id, which the table does
	// not map: it wraps the provider's ErrUnknownState.
	Unknown(id uint64) error
}

// NoRID marks a dictionary id the registry cannot resolve.
const NoRID = ^uint32(0)

// A Codec encodes columns into records and decodes them, with the ids of
// its Dictionary, building and reading Dragonfly's chunk values through
// raw (package rawchunk) when it is not nil, else through Dragonfly's own
// decoder and encoders. It is safe for concurrent use as its Dictionary
// is.
type Codec struct {
	dict Dictionary
	raw  *rawchunk.Builder
}

// New returns a Codec of dict that builds through raw (nil: the public
// path).
func New(dict Dictionary, raw *rawchunk.Builder) *Codec { return &Codec{dict: dict, raw: raw} }

// Raw returns the Builder the codec builds through, or nil.
func (c *Codec) Raw() *rawchunk.Builder { return c.raw }

// Prev is the previous version of a column, as last stored or loaded,
// which an encode reuses whatever of it is unchanged: its record and
// layout, private copies of its sub-chunks, block entities and entities,
// and its biomes in the network encoding. Nothing in it is ever modified.
// The zero Prev is none.
type Prev struct {
	Rec    []byte
	Layout Layout
	Subs   []*chunk.SubChunk
	// Flat, if not nil, holds sub-chunk i in its flat form (flatsub.go)
	// where Subs[i] is nil.
	Flat          [][]byte
	Biomes        []byte
	BlockEntities []chunk.BlockEntity
	Entities      []chunk.Entity
}

// Encoded is a column encoded: its record and layout, private copies of
// its sub-chunks (shared with the Prev's where unchanged) and its biomes
// in the network encoding, and the dictionary ids it is the first to use.
// A sub-chunk encoded from its flat form (EncodeParts), or shared with a
// Prev that holds it so, stays in that form: Flat[i] holds it and Subs[i]
// is nil; Flat is nil when there is none.
type Encoded struct {
	Rec    []byte
	Layout Layout
	Subs   []*chunk.SubChunk
	Flat   [][]byte
	Biomes []byte
	Fresh  []int32
	// SameNBT reports that the block entities and entities equal the
	// Prev's, whose copies may then be shared.
	SameNBT bool
}
