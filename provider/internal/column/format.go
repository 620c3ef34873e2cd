package column

import "github.com/blazeworld/blaze/blazedb"

// ErrCorrupt marks a column record that does not decode. The provider
// exports it as ErrColumnCorrupt. It wraps blazedb.ErrCorrupt, the one
// corruption marker: a record that reads intact and does not decode is
// damage as much as one whose checksum fails.
var ErrCorrupt error = malformed("provider: malformed column record")

// malformed is a sentinel that is also blazedb.ErrCorrupt.
type malformed string

func (m malformed) Error() string { return string(m) }
func (malformed) Unwrap() error   { return blazedb.ErrCorrupt }

// A column record is the engine value of one chunk column. Block data keeps
// the layout of Dragonfly's network encoding (which decodes much faster
// than the disk encoding, whose palettes are NBT), except that palette
// entries are ids into the world's block dictionary (Dictionary) instead of
// runtime ids.
// Each part of the column is a frame, compressed on its own, so that
// storing a column again compresses only the parts that changed
// (version 2, what stores write):
//
//	+-------+------------------------------------------------------------+
//	| bytes | field                                                      |
//	+-------+------------------------------------------------------------+
//	|     3 | signature "BZC"                                            |
//	|     1 | record version (2)                                         |
//	|     1 | flags (0; a reader of version 2 ignores them)              |
//	|  uvar | n, number of sub-chunks (every one of the dimension's)     |
//	|     … | n frames, one per sub-chunk: version 9, layer count, y;   |
//	|       |   per layer: header byte (bits per index << 1 | 1), the   |
//	|       |   index words as in the network encoding, then (bits > 0) |
//	|       |   uvar palette length, then palette entries as uvar       |
//	|       |   dictionary ids                                          |
//	|     … | frame: the network biome encoding                         |
//	|     … | frame: uvar block entities, each: svar x, y, z; uvar      |
//	|       |   length; NBT (LE); then uvar entities, each: svar id;    |
//	|       |   uvar length; NBT (LE)                                   |
//	|  svar | current tick of the scheduled updates                      |
//	|  uvar | scheduled updates; each: svar x, y, z; uvar dictionary id; |
//	|       |   svar tick                                                |
//	+-------+------------------------------------------------------------+
//
//	frame:
//	+-------+------------------------------------------------------------+
//	|     1 | codec: the engine's id, blazedb.Compression.CodecID        |
//	|  uvar | raw length                                                 |
//	|  uvar | stored length, then the stored bytes                       |
//	+-------+------------------------------------------------------------+
//
// Version 3 (issue 41) has one flag more, whole: every part in one frame,
// which compresses what repeats between the parts too. Compaction writes
// it (Pack) for the columns not stored since the compaction before; a
// store never does, as it would compress the whole column for any change.
//
//	+-------+------------------------------------------------------------+
//	| bytes | field                                                      |
//	+-------+------------------------------------------------------------+
//	|     3 | signature "BZC"                                            |
//	|     1 | record version (3)                                         |
//	|     1 | flags: bit 0 packed (by compaction: left alone by the    |
//	|       |   next), bit 1 whole; every other bit 0                    |
//	|     … | whole clear: the rest of a version 2 record (uvar n, ...)  |
//	|     … | whole set: one frame, the last bytes of the record, of the |
//	|       |   body: uvar n; n+2 uvar lengths, of the n sub-chunks, the |
//	|       |   biomes, the block entities and entities; then each of    |
//	|       |   them (the raw bytes of its version 2 frame), one after  |
//	|       |   another; svar tick; scheduled updates (as version 2)     |
//	+-------+------------------------------------------------------------+
//
// uvar/svar are Go's unsigned/zig-zag varints. Versions 2 and 3 are read:
// version 1 (unframed) was never released. Part of the on-disk format.
const (
	recordSignature = "BZC"
	// recordVersion is the version stores write.
	recordVersion = 2
	// wholeVersion is the version of records with the whole flag.
	wholeVersion = 3
	flagPacked   = 1 << 0
	flagWhole    = 1 << 1
	maxSubChunks = 64
	maxListLen   = 1 << 20
	maxFrameLen  = 16 << 20
)

// Layout locates the parts of a record: subEnds[i] is where sub-chunk i
// ends (sub-chunk 0 starts at subStart). In a version 2 record each span
// is a whole frame, so an unchanged part is reused by copying its bytes.
// A version 3 record has no frame of a part to reuse (its offsets are
// those of its body): only its tail is kept, to tell a column stored
// unchanged.
type Layout struct {
	version int
	// tail is a version 3 record's tick and scheduled updates.
	tail     []byte
	subStart int
	subEnds  []int
	// biomeStart and biomeEnd bound the biome frame (version 2).
	biomeStart, biomeEnd int
	// nbtStart and nbtEnd bound the block entities and entities.
	nbtStart, nbtEnd int
	// RawSize is the record's size with every frame decompressed.
	RawSize int
}

// SubRaw returns the raw size of sub-chunk i's frame in rec, whose layout
// l is.
func (l Layout) SubRaw(rec []byte, i int) int { return frameRawLen(l.sub(rec, i)) }

// NBTRaw returns the raw size of the frame of rec's block entities and
// entities.
func (l Layout) NBTRaw(rec []byte) int { return frameRawLen(rec[l.nbtStart:l.nbtEnd]) }

func (l Layout) sub(rec []byte, i int) []byte {
	start := l.subStart
	if i > 0 {
		start = l.subEnds[i-1]
	}
	return rec[start:l.subEnds[i]]
}
