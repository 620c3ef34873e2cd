package provider

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/world"
)

// Extra records are the records of a LevelDB world that Blaze does not
// read: a column's structure bounding boxes, blending data and checksums,
// the world's scoreboard, portals, maps, villages and Bedrock's own player
// data. Conversion from LevelDB keeps them (package internal/convert) and
// conversion back writes them again, so a round trip keeps every key of
// the source. Blaze never interprets them and a server never writes them.
//
// A column's extra records are one engine record at the column's position,
// in a dimension of their own, so that they follow the column wherever its
// position takes it: a store of the column leaves them in place, a
// segmented world keeps them in the column's region, an overlay reads the
// template's, and compaction, backups and checks treat them as any record.
// The world's are named engine records, one a LevelDB key.
//
//	+-------------------+--------------------------------------------------+
//	| record            | engine key                                       |
//	+-------------------+--------------------------------------------------+
//	| a column's        | chunk key: dim extraDimFlag | Dragonfly's id     |
//	|                   | (0x40000000, 0x40000001, 0x40000002), x, z       |
//	| one of the world's| named key: extraNamePrefix + the LevelDB key     |
//	+-------------------+--------------------------------------------------+
//
// The value of a column's extra records:
//
//	+----------+--------------------------------------------------------+
//	| bytes    | field                                                  |
//	+----------+--------------------------------------------------------+
//	|        2 | signature "XR"                                         |
//	|        1 | version (1)                                            |
//	|   varint | record count n, at least 1                             |
//	| n times: |                                                        |
//	|        1 | kind: 0 the LevelDB value as it was; 1 a marker, value |
//	|          | empty: the column's entities were kept under this key  |
//	|          | (the legacy 0x32 record), and go back to it            |
//	|   varint | key length k, 1 to MaxExtraKeyLen                      |
//	|        k | the LevelDB key, whole; keys strictly ascending        |
//	|   varint | value length v                                         |
//	|        v | the LevelDB value                                      |
//	+----------+--------------------------------------------------------+
//
// The value of a world's record is a version byte (1), then the LevelDB
// value as it was.
//
// Part of the on-disk format.
const (
	extraDimFlag    = 1 << 30
	extraNamePrefix = "leveldb/"
	extraSignature  = "XR"
	extraVersion    = 1
	worldExtraVer   = 1
	// MaxExtraKeyLen is the longest LevelDB key Blaze carries.
	MaxExtraKeyLen = blazedb.MaxNameLen - len(extraNamePrefix)
)

// Kinds of a column's extra record.
const (
	// ExtraOpaque is a LevelDB record kept as it was.
	ExtraOpaque = 0
	// ExtraLegacyEntities marks that the column's entities were kept in
	// the legacy per-chunk entity record (tag 0x32) whose key it holds:
	// conversion back to LevelDB writes them there again instead of
	// under digp and actorprefix keys. Its value is empty.
	ExtraLegacyEntities = 1
)

// ExtraRecord is a LevelDB record Blaze carries without reading it: a plain
// value, safe to copy; the slices are the holder's own.
type ExtraRecord struct {
	Kind       byte
	Key, Value []byte
}

func extraKey(pos world.ChunkPos, dim world.Dimension) (blazedb.Key, error) {
	k, err := key(pos, dim)
	k.Dim |= extraDimFlag
	return k, err
}

// ColumnExtras returns the extra records kept with the column at pos in
// dim, sorted by key: none (and no error) when there are none. The column
// need not exist. Safe for concurrent use.
func (db *DB) ColumnExtras(pos world.ChunkPos, dim world.Dimension) ([]ExtraRecord, error) {
	k, err := extraKey(pos, dim)
	if err != nil {
		return nil, err
	}
	v, err := db.eng.Get(k)
	if errors.Is(err, blazedb.ErrNotFound) {
		return nil, nil
	}
	if err == nil {
		var recs []ExtraRecord
		if recs, err = DecodeExtras(v); err == nil {
			return recs, nil
		}
	}
	return nil, fmt.Errorf("load extra records of column %v (%v): %w", pos, dim, err)
}

// SetColumnExtras replaces the extra records kept with the column at pos
// in dim with recs (none: removes them). Storing the column never touches
// them. Safe for concurrent use.
func (db *DB) SetColumnExtras(pos world.ChunkPos, dim world.Dimension, recs []ExtraRecord) error {
	k, err := extraKey(pos, dim)
	if err == nil {
		if len(recs) == 0 {
			err = db.eng.Delete(k)
		} else {
			var v []byte
			if v, err = EncodeExtras(recs); err == nil {
				err = db.eng.Put(k, v)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("store extra records of column %v (%v): %w", pos, dim, err)
	}
	return nil
}

// ExtraColumns returns where columns' extra records are, dimension by
// dimension, as Columns does: for tools that visit a whole world. A
// position may hold extra records and no column. Safe for concurrent use.
func (db *DB) ExtraColumns() ([]Place, error) {
	var out []Place
	for id := range 3 {
		dim, _ := world.DimensionByID(id)
		keys, err := db.eng.Keys(blazedb.Area{Dim: int32(id) | extraDimFlag, MinX: math.MinInt32, MinZ: math.MinInt32, MaxX: math.MaxInt32, MaxZ: math.MaxInt32})
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			out = append(out, Place{Pos: world.ChunkPos{k.X, k.Z}, Dim: dim})
		}
	}
	return out, nil
}

// WorldExtras calls fn with each of the world's extra records (Kind
// ExtraOpaque), in no particular order, and stops at fn's first error.
// Safe for concurrent use.
func (db *DB) WorldExtras(fn func(ExtraRecord) error) error {
	return db.eng.ReadNamed(extraNamePrefix, func(name string, v []byte) error {
		if len(v) == 0 || v[0] != worldExtraVer {
			return fmt.Errorf("load world record %q: %w", name, corruption(chunksFile, fmt.Sprintf("named record %q", name), fmt.Errorf("%w: version or length", ErrColumnCorrupt)))
		}
		return fn(ExtraRecord{Key: []byte(name[len(extraNamePrefix):]), Value: v[1:]})
	})
}

// SetWorldExtra keeps r as one of the world's extra records, replacing any
// of its key; a nil Value removes it. Safe for concurrent use.
func (db *DB) SetWorldExtra(r ExtraRecord) error {
	if len(r.Key) == 0 || len(r.Key) > MaxExtraKeyLen || r.Kind != ExtraOpaque {
		return fmt.Errorf("store world record %q: %w: key of %d bytes (1 to %d), kind %d", r.Key, blazedb.ErrTooLarge, len(r.Key), MaxExtraKeyLen, r.Kind)
	}
	name := extraNamePrefix + string(r.Key)
	var err error
	if r.Value == nil {
		err = db.eng.DeleteNamed(name)
	} else {
		err = db.eng.PutNamed(name, append([]byte{worldExtraVer}, r.Value...))
	}
	if err != nil {
		return fmt.Errorf("store world record %q: %w", r.Key, err)
	}
	return nil
}

// ExtraCounts counts the extra records: the columns holding some, their
// records, and the world's. A column's that does not read is an error.
// Safe for concurrent use.
func (db *DB) ExtraCounts() (columns, records, worldRecords int, err error) {
	places, err := db.ExtraColumns()
	if err != nil {
		return 0, 0, 0, err
	}
	for _, p := range places {
		recs, err := db.ColumnExtras(p.Pos, p.Dim)
		if err != nil {
			return 0, 0, 0, err
		}
		records += len(recs)
	}
	err = db.WorldExtras(func(ExtraRecord) error { worldRecords++; return nil })
	return len(places), records, worldRecords, err
}

// EncodeExtras encodes a column's extra records in the format drawn above,
// sorted by key. A key repeated, empty or longer than MaxExtraKeyLen, an
// unknown kind or a marker with a value is refused.
func EncodeExtras(recs []ExtraRecord) ([]byte, error) {
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b ExtraRecord) int { return bytes.Compare(a.Key, b.Key) })
	b := append([]byte(extraSignature), extraVersion)
	b = binary.AppendUvarint(b, uint64(len(recs)))
	for i, r := range recs {
		switch {
		case len(r.Key) == 0 || len(r.Key) > MaxExtraKeyLen:
			return nil, fmt.Errorf("extra record key of %d bytes (1 to %d)", len(r.Key), MaxExtraKeyLen)
		case i > 0 && bytes.Equal(recs[i-1].Key, r.Key):
			return nil, fmt.Errorf("extra record key %x given twice", r.Key)
		case r.Kind > ExtraLegacyEntities || (r.Kind == ExtraLegacyEntities && len(r.Value) > 0):
			return nil, fmt.Errorf("extra record %x of kind %d with %d bytes", r.Key, r.Kind, len(r.Value))
		}
		b = append(b, r.Kind)
		b = binary.AppendUvarint(b, uint64(len(r.Key)))
		b = append(b, r.Key...)
		b = binary.AppendUvarint(b, uint64(len(r.Value)))
		b = append(b, r.Value...)
	}
	return b, nil
}

// DecodeExtras decodes what EncodeExtras encodes; bytes of any other shape
// give an error wrapping ErrColumnCorrupt, never a panic.
func DecodeExtras(b []byte) ([]ExtraRecord, error) {
	bad := func(format string, args ...any) ([]ExtraRecord, error) {
		return nil, fmt.Errorf("%w: %s", ErrColumnCorrupt, "extra records: "+fmt.Sprintf(format, args...))
	}
	if len(b) < 3 || string(b[:2]) != extraSignature {
		return bad("no signature")
	}
	if b[2] != extraVersion {
		return bad("version %d (this build reads %d)", b[2], extraVersion)
	}
	p := 3
	// One encoding a value: a longer form than EncodeExtras writes (a last
	// byte of 0) is not one of its records.
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(b[p:])
		if n <= 0 || n > 1 && b[p+n-1] == 0 {
			return 0, false
		}
		p += n
		return v, true
	}
	n, ok := uvarint()
	// Each record takes at least 4 bytes: no count beyond that is real.
	if !ok || n == 0 || n > uint64(len(b)-p)/4 {
		return bad("record count")
	}
	recs := make([]ExtraRecord, 0, n)
	for i := range n {
		if p >= len(b) {
			return bad("record %d cut short", i)
		}
		kind := b[p]
		p++
		kl, ok := uvarint()
		if !ok || kl == 0 || kl > uint64(MaxExtraKeyLen) || kl > uint64(len(b)-p) {
			return bad("record %d: key length", i)
		}
		k := b[p : p+int(kl) : p+int(kl)]
		p += int(kl)
		vl, ok := uvarint()
		if !ok || vl > uint64(len(b)-p) {
			return bad("record %d: value length", i)
		}
		v := b[p : p+int(vl) : p+int(vl)]
		p += int(vl)
		switch {
		case kind > ExtraLegacyEntities || (kind == ExtraLegacyEntities && vl > 0):
			return bad("record %d: kind %d with %d bytes", i, kind, vl)
		case i > 0 && bytes.Compare(recs[i-1].Key, k) >= 0:
			return bad("record %d: keys out of order", i)
		}
		recs = append(recs, ExtraRecord{Kind: kind, Key: k, Value: v})
	}
	if p != len(b) {
		return bad("%d bytes after the last record", len(b)-p)
	}
	return recs, nil
}

// ExtraCarrier is a world that carries extra records: *DB, and the
// segmented world's and overlay's providers.
type ExtraCarrier interface {
	ColumnExtras(pos world.ChunkPos, dim world.Dimension) ([]ExtraRecord, error)
	SetColumnExtras(pos world.ChunkPos, dim world.Dimension, recs []ExtraRecord) error
	WorldExtras(fn func(ExtraRecord) error) error
	SetWorldExtra(r ExtraRecord) error
}

var _ ExtraCarrier = (*DB)(nil)

// WorldExtraCount counts the world's extra records from the index alone,
// reading none. Safe for concurrent use.
func (db *DB) WorldExtraCount() (int, error) {
	names, err := db.eng.Names()
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, extraNamePrefix) {
			n++
		}
	}
	return n, err
}
