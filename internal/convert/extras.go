package convert

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/df-mc/goleveldb/leveldb/opt"
)

// Every key of a LevelDB world that Dragonfly's provider does not write
// back from the columns it reads is carried as an extra record
// (provider/extrarecords.go), so that LevelDB -> Blaze -> LevelDB keeps
// every key of the source:
//
//   - a per-chunk key (x, z [, dimension], tag [, sub-chunk index]) and a
//     digp key (the ids of a chunk's entities) go with the column at their
//     position, unless Dragonfly writes that key for that column: the
//     version (0x2c), biomes (0x2b), finalisation (0x36) and every
//     sub-chunk (0x2f) of the dimension's range always; block entities
//     (0x31), scheduled updates (0x33) and digp when the column holds
//     some. A position without a column that reads keeps all of its keys.
//   - the legacy entity record (0x32), which Dragonfly reads and replaces
//     with digp and actorprefix keys, is kept as a marker: conversion back
//     puts the column's entities under it again.
//   - every other key (the world's: scoreboard, portals, maps, villages,
//     Bedrock's player data under ~local_player, player_ and
//     player_server_, entities under actorprefix no column read) is a
//     world record.
//
// Conversion back writes the world records first, so that the player
// spawns Dragonfly's provider then saves go into Bedrock's player data as
// Dragonfly's own provider would, then the columns, then each column's
// records whose keys the columns did not write: what Dragonfly wrote is
// newer.

// Tags of per-chunk LevelDB keys that Dragonfly's provider (mcdb) reads or
// writes.
const (
	tagBiomes         = 0x2b
	tagVersion        = 0x2c
	tagSubChunk       = 0x2f
	tagBlockEntities  = 0x31
	tagLegacyEntities = 0x32
	tagScheduled      = 0x33
	tagFinalisation   = 0x36
)

const (
	digpPrefix  = "digp"
	actorPrefix = "actorprefix"
	// maxChunkCoord bounds the chunk coordinates taken for a per-chunk
	// key's: Bedrock's worlds end at 30,000,000 blocks, and a world's name
	// key read as coordinates (four printable bytes) is far beyond.
	maxChunkCoord = 1 << 24
)

// written is what Dragonfly's provider writes of a column it read: what
// decides which of the column's keys it carries itself.
type written struct {
	entities, blockEntities, scheduled bool
}

func writtenOf(col *chunk.Column) written {
	return written{len(col.Entities) > 0, len(col.BlockEntities) > 0, len(col.ScheduledBlocks) > 0}
}

// chunkPlace parses the position of a per-chunk key (x, z [, dimension]
// then rest bytes) of n bytes: ok is false for a key of another length, of
// a dimension Dragonfly does not know, or of a position no world reaches.
func chunkPlace(k []byte, rest int) (pl place, ok bool) {
	x, z := int32(binary.LittleEndian.Uint32(k)), int32(binary.LittleEndian.Uint32(k[4:]))
	if x <= -maxChunkCoord || x >= maxChunkCoord || z <= -maxChunkCoord || z >= maxChunkCoord {
		return place{}, false
	}
	pl = place{Pos: world.ChunkPos{x, z}, Dim: world.Overworld}
	switch len(k) {
	case 8 + rest:
		return pl, true
	case 12 + rest:
		id := int32(binary.LittleEndian.Uint32(k[8:]))
		d, ok := world.DimensionByID(int(id))
		if !ok || id == 0 { // Bedrock writes the overworld's keys without
			return place{}, false
		}
		pl.Dim = d
		return pl, true
	}
	return place{}, false
}

// levelDBKey is a LevelDB key classified.
type levelDBKey struct {
	chunk bool  // a per-chunk key (chunk or digp) at pl
	pl    place // its position
	tag   int   // a per-chunk key's tag; -1 for digp
	sub   int   // a sub-chunk key's index, as Dragonfly writes it
	actor bool  // an actorprefix key, of entity id
	id    int64
}

func classify(k []byte) levelDBKey {
	switch {
	case bytes.HasPrefix(k, []byte(actorPrefix)) && len(k) == len(actorPrefix)+8:
		return levelDBKey{actor: true, id: int64(binary.LittleEndian.Uint64(k[len(actorPrefix):]))}
	case bytes.HasPrefix(k, []byte(digpPrefix)):
		if pl, ok := chunkPlace(k[len(digpPrefix):], 0); ok {
			return levelDBKey{chunk: true, pl: pl, tag: -1}
		}
	case len(k) == 9 || len(k) == 13:
		if pl, ok := chunkPlace(k, 1); ok {
			return levelDBKey{chunk: true, pl: pl, tag: int(k[len(k)-1])}
		}
	case len(k) == 10 || len(k) == 14:
		if pl, ok := chunkPlace(k, 2); ok {
			return levelDBKey{chunk: true, pl: pl, tag: int(k[len(k)-2]), sub: int(int8(k[len(k)-1]))}
		}
	}
	return levelDBKey{}
}

// dragonflyWrites reports whether Dragonfly's provider writes the per-chunk
// key c when it stores a column it read as w.
func dragonflyWrites(c levelDBKey, w written) bool {
	switch c.tag {
	case tagVersion, tagBiomes, tagFinalisation:
		return true
	case tagSubChunk:
		r := c.pl.Dim.Range()
		return c.sub >= r[0]>>4 && c.sub <= r[1]>>4
	case tagBlockEntities:
		return w.blockEntities
	case tagScheduled:
		return w.scheduled
	case -1:
		return w.entities
	}
	return false
}

// extras is what a conversion from LevelDB carries besides the columns.
type extras struct {
	columns map[place][]provider.ExtraRecord
	world   []provider.ExtraRecord
}

// carriedRecord is what is carried of the per-chunk record rec (c, its
// key classified) of a position whose column was read as w (read: it
// converted; digp: the position has a digp key). ok is false for a record
// Dragonfly's provider writes from the column.
func carriedRecord(c levelDBKey, rec provider.ExtraRecord, w written, read, digp bool) (kept provider.ExtraRecord, ok bool) {
	switch {
	case !read:
	case c.tag == tagLegacyEntities && !digp && w.entities:
		return provider.ExtraRecord{Kind: provider.ExtraLegacyEntities, Key: rec.Key}, true
	case dragonflyWrites(c, w):
		return provider.ExtraRecord{}, false
	}
	return rec, true
}

// storeExtras writes x into db, and reports the records that could not be.
func storeExtras(db provider.ExtraCarrier, x *extras, r *Report) error {
	for pl, recs := range x.columns {
		if err := db.SetColumnExtras(pl.Pos, pl.Dim, recs); err != nil {
			return err
		}
		r.ColumnRecords += len(recs)
	}
	for _, rec := range x.world {
		if len(rec.Key) > provider.MaxExtraKeyLen {
			r.FailedRecords = append(r.FailedRecords, fmt.Sprintf("LevelDB key %q of %d bytes: Blaze carries keys of at most %d", rec.Key[:32], len(rec.Key), provider.MaxExtraKeyLen))
			continue
		}
		if err := db.SetWorldExtra(rec); err != nil {
			return err
		}
		r.WorldRecords++
	}
	return nil
}

// verifyExtras reads x back from db.
func verifyExtras(db *provider.DB, x *extras) error {
	for pl, want := range x.columns {
		got, err := db.ColumnExtras(pl.Pos, pl.Dim)
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		if err := sameRecords(want, got); err != nil {
			return fmt.Errorf("verify: extra records of column %v (%v): %w", pl.Pos, pl.Dim, err)
		}
	}
	want := map[string][]byte{}
	for _, rec := range x.world {
		if len(rec.Key) <= provider.MaxExtraKeyLen {
			want[string(rec.Key)] = rec.Value
		}
	}
	n := 0
	err := db.WorldExtras(func(rec provider.ExtraRecord) error {
		if v, ok := want[string(rec.Key)]; !ok || !bytes.Equal(v, rec.Value) {
			return fmt.Errorf("verify: world record %q differs after conversion", rec.Key)
		}
		n++
		return nil
	})
	if err == nil && n != len(want) {
		err = fmt.Errorf("verify: %d world records read back, %d written", n, len(want))
	}
	return err
}

func sameRecords(want, got []provider.ExtraRecord) error {
	m := map[string]provider.ExtraRecord{}
	for _, r := range got {
		m[string(r.Key)] = r
	}
	if len(m) != len(want) {
		return fmt.Errorf("%d records read back, %d written", len(m), len(want))
	}
	for _, w := range want {
		g, ok := m[string(w.Key)]
		if !ok || g.Kind != w.Kind || !bytes.Equal(g.Value, w.Value) {
			return fmt.Errorf("record %x differs", w.Key)
		}
	}
	return nil
}

// levelDBOptions are the options Dragonfly's provider opens a database
// with, so that what Blaze writes beside it is stored alike.
func levelDBOptions() *opt.Options { return &opt.Options{BlockSize: 16 * opt.KiB} }

// writeWorldExtras writes the world records of bz into the LevelDB world
// being built in dst, before Dragonfly's provider opens it.
func writeWorldExtras(bz *provider.DB, dst string, r *Report) error {
	var batch leveldb.Batch
	err := bz.WorldExtras(func(rec provider.ExtraRecord) error {
		batch.Put(rec.Key, rec.Value)
		return nil
	})
	if err != nil || batch.Len() == 0 {
		return err
	}
	ldb, err := leveldb.OpenFile(filepath.Join(dst, "db"), levelDBOptions())
	if err != nil {
		return fmt.Errorf("open destination database: %w", err)
	}
	r.WorldRecords += batch.Len()
	if err = ldb.Write(&batch, nil); err == nil {
		err = verifyWritten(ldb, &batch)
	}
	return errors.Join(err, ldb.Close())
}

// verifyWritten reads back every record batch put into ldb.
func verifyWritten(ldb *leveldb.DB, batch *leveldb.Batch) error {
	v := &verifier{ldb: ldb}
	if err := batch.Replay(v); err != nil {
		return err
	}
	return v.err
}

// verifier reads back each record a batch puts, keeping the first
// difference.
type verifier struct {
	ldb *leveldb.DB
	err error
}

func (v *verifier) Put(k, want []byte) {
	if v.err != nil {
		return
	}
	if got, err := v.ldb.Get(k, nil); err != nil || !bytes.Equal(got, want) {
		v.err = fmt.Errorf("verify: LevelDB record %q differs after conversion (%v)", k, err)
	}
}

func (v *verifier) Delete([]byte) {}

// writeColumnExtras writes the columns' extra records of bz and of the
// regions in regions into the LevelDB world in dst, after its columns:
// a key the columns wrote is left as they wrote it.
func writeColumnExtras(bz *provider.DB, regions []string, dst string, o Options, r *Report) error {
	ldb, err := leveldb.OpenFile(filepath.Join(dst, "db"), levelDBOptions())
	if err != nil {
		return fmt.Errorf("open destination database: %w", err)
	}
	err = writeExtrasOf(bz, ldb, r)
	for _, dir := range regions {
		if err != nil {
			break
		}
		var reg *provider.DB
		if reg, err = (provider.Config{Log: o.Log, ReadOnly: true, NoLevelDat: true}).Open(dir); err != nil {
			err = fmt.Errorf("open source region: %w", err)
			break
		}
		err = errors.Join(writeExtrasOf(reg, ldb, r), reg.Close())
	}
	return errors.Join(err, ldb.Close())
}

func writeExtrasOf(db *provider.DB, ldb *leveldb.DB, r *Report) error {
	places, err := db.ExtraColumns()
	if err != nil {
		return err
	}
	for _, pl := range places {
		recs, err := db.ColumnExtras(pl.Pos, pl.Dim)
		if err != nil {
			return err
		}
		var batch leveldb.Batch
		for _, rec := range recs {
			if has, err := ldb.Has(rec.Key, nil); err != nil {
				return err
			} else if has {
				continue // the column wrote it: newer
			}
			if rec.Kind == provider.ExtraLegacyEntities {
				if err := legacyEntities(ldb, &batch, pl, rec.Key); err != nil {
					return fmt.Errorf("entities of column %v (%v): %w", pl.Pos, pl.Dim, err)
				}
			} else {
				batch.Put(rec.Key, rec.Value)
			}
			r.ColumnRecords++
		}
		if err := ldb.Write(&batch, nil); err != nil {
			return err
		}
		if err := verifyWritten(ldb, &batch); err != nil {
			return err
		}
	}
	return nil
}

// legacyEntities moves the entities Dragonfly's provider wrote for the
// column at pl (under digp and actorprefix keys) to the legacy record key,
// where the source kept them: their NBT compounds one after another. A
// column without entities now gets no record.
func legacyEntities(ldb *leveldb.DB, batch *leveldb.Batch, pl place, key []byte) error {
	id, _ := world.DimensionID(pl.Dim)
	dk := binary.LittleEndian.AppendUint32([]byte(digpPrefix), uint32(pl.Pos[0]))
	dk = binary.LittleEndian.AppendUint32(dk, uint32(pl.Pos[1]))
	if id != 0 {
		dk = binary.LittleEndian.AppendUint32(dk, uint32(id))
	}
	ids, err := ldb.Get(dk, nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	var all []byte
	for i := 0; i+8 <= len(ids); i += 8 {
		ak := append([]byte(actorPrefix), ids[i:i+8]...)
		v, err := ldb.Get(ak, nil)
		if err != nil {
			return fmt.Errorf("entity %x: %w", ids[i:i+8], err)
		}
		all = append(all, v...)
		batch.Delete(ak)
	}
	batch.Delete(dk)
	batch.Put(key, all)
	return nil
}
