package convert

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"

	"github.com/blazeworld/blaze/internal/nbtwalk"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// A LevelDB world's columns are read here as Dragonfly's LevelDB provider
// (mcdb, v0.11.2, db.go: column and the readers it calls) reads them, but
// from records met by one forward iterator instead of a Get for each of a
// column's keys (a dozen or more: the version, the biomes, every sub-chunk
// of the dimension's range, block entities, entities, scheduled updates).
//
// mcdb reads the records of the column at (x, z) in dimension d under the
// keys x, z [, d's id when not the overworld], tag [, sub-chunk index]: 9
// or 13 bytes, or 10 or 14 for a sub-chunk. In key order every such key of
// one column lies between its first and its last, with no key of another
// column's between them: all of them begin with the column's 8 or 12
// bytes; a key of the nether or the end at the same x and z has 1 or 2
// where an overworld key has its tag (0x2b and above), so it sorts before
// every record mcdb reads of the overworld column, and an overworld key
// that begins like a nether or end one (a tag of 1 or 2) sorts before
// that column's records. So a column's records are gathered in one
// stretch of the iteration (a run), and decoded once the next column's
// first record shows up. The records mcdb reads elsewhere come from the
// digp keys (read beforehand, they are few and short) and a Get for each
// actorprefix key they name, as mcdb does.
//
// What the decoding does with the records, missing ones and damaged ones
// is mcdb's, step by step: the same Dragonfly and NBT decoders, the same
// errors for the same records, the same leniency (a version other than
// 42 is only logged, a missing entity makes the column's entities empty,
// an entity whose NBT does not decode is kept with what did, a scheduled
// update whose block does not decode is left zero, an entity of the legacy
// record without a UniqueID gets a random one). One departure: a record
// declaring a palette or an NBT list longer than its bytes could hold, or
// nesting NBT deeper than 512, is refused before the decoders allocate it
// (palettecheck.go), where mcdb would allocate it and then fail, or keep
// the entity that held it. A test compares every column of the real worlds
// and of a synthetic one with mcdb.LoadColumn's.

// tagVersionOld is the tag of the version key Bedrock wrote before 0x2c.
const tagVersionOld = 'v'

// The fields of a run that mcdb reads, as bits of run.has.
const (
	hasVersion = 1 << iota
	hasVersionOld
	hasBiomes
	hasBlockEntities
	hasLegacyEntities
	hasScheduled
)

// run is the records of one column met in one stretch of the key order:
// those mcdb reads, and every per-chunk key (classify) of its position,
// which the records carried besides the columns are chosen from once the
// column is converted (extras.go).
type run struct {
	pl  place
	idx int // the column's index in the places listed
	has uint8
	// The values of the records mcdb reads; subs by the sub-chunk key's
	// last byte. Owned by the run (copied from the iterator).
	version, versionOld, biomes, blockEntities, legacyEntities, scheduled []byte
	subs                                                                  [256][]byte
	recs                                                                  []provider.ExtraRecord
}

// mcdbKey parses k as a key mcdb reads for a column: its position, its
// tag and, for a sub-chunk, the key's last byte. ok is false for any other
// key.
func mcdbKey(k []byte) (pl place, tag byte, sub byte, ok bool) {
	var n int
	switch len(k) {
	case 9, 10:
		n = 8
	case 13, 14:
		n = 12
	default:
		return place{}, 0, 0, false
	}
	tag = k[n]
	switch {
	case len(k) == n+2 && tag == tagSubChunk:
		sub = k[n+1]
	case len(k) == n+1 && (tag == tagVersion || tag == tagVersionOld || tag == tagBiomes || tag == tagBlockEntities || tag == tagLegacyEntities || tag == tagScheduled):
	default:
		return place{}, 0, 0, false
	}
	pl = place{Pos: world.ChunkPos{int32(binary.LittleEndian.Uint32(k)), int32(binary.LittleEndian.Uint32(k[4:]))}, Dim: world.Overworld}
	if n == 12 {
		// mcdb writes a dimension's id only when it is not 0.
		id := int32(binary.LittleEndian.Uint32(k[8:]))
		d, known := world.DimensionByID(int(id))
		if !known || id == 0 {
			return place{}, 0, 0, false
		}
		pl.Dim = d
	}
	return pl, tag, sub, true
}

// add keeps the value v (owned by the run) of the record of tag and sub.
func (r *run) add(tag, sub byte, v []byte) {
	switch tag {
	case tagVersion:
		r.version, r.has = v, r.has|hasVersion
	case tagVersionOld:
		r.versionOld, r.has = v, r.has|hasVersionOld
	case tagBiomes:
		r.biomes, r.has = v, r.has|hasBiomes
	case tagBlockEntities:
		r.blockEntities, r.has = v, r.has|hasBlockEntities
	case tagLegacyEntities:
		r.legacyEntities, r.has = v, r.has|hasLegacyEntities
	case tagScheduled:
		r.scheduled, r.has = v, r.has|hasScheduled
	case tagSubChunk:
		if v == nil {
			v = []byte{}
		}
		r.subs[sub] = v
	}
}

// columnReader decodes runs into columns as mcdb's LoadColumn would. Safe
// for concurrent use: it only reads its fields, and ldb is.
type columnReader struct {
	ldb    *leveldb.DB
	blocks world.BlockRegistry
	log    *slog.Logger
	// digp holds the value of every digp key, by key.
	digp map[string][]byte
}

// column decodes r. Its errors are mcdb's, and a panic of a decoder (on
// damaged NBT, say) is returned as ErrUnreadable, as load returns it.
func (cr *columnReader) column(r *run) (col *chunk.Column, err error) {
	defer recovered(&err)
	col, err = cr.decode(r)
	if err != nil {
		return nil, fmt.Errorf("load column %v (%v): %w", r.pl.Pos, r.pl.Dim, err)
	}
	return col, nil
}

// decode is mcdb's DB.column on r's records.
func (cr *columnReader) decode(r *run) (*chunk.Column, error) {
	var cdata chunk.SerialisedData
	col := new(chunk.Column)

	ver, err := r.versionByte()
	if err != nil {
		return nil, fmt.Errorf("read version: %w", err)
	}
	if ver != mcdbChunkVersion {
		cr.log.Debug("column: unsupported chunk version, trying to load anyway", "X", r.pl.Pos[0], "Z", r.pl.Pos[1], "dimension", fmt.Sprint(r.pl.Dim), "ver", ver)
	}
	if r.has&hasBiomes != 0 {
		// The first 512 bytes are a height map, which Dragonfly computes.
		if n := len(r.biomes); n <= 512 {
			return nil, fmt.Errorf("read biomes: %w", fmt.Errorf("expected at least 513 bytes for 3D data, got %v", n))
		}
		cdata.Biomes = r.biomes[512:]
	}
	rng := r.pl.Dim.Range()
	cdata.SubChunks = make([][]byte, (rng.Height()>>4)+1)
	for i := range cdata.SubChunks {
		cdata.SubChunks[i] = r.subs[uint8(i+(rng[0]>>4))]
	}
	if err := checkPalettes(cdata, len(cdata.SubChunks)); err != nil {
		return nil, fmt.Errorf("decode chunk data: %w", err)
	}
	col.Chunk, err = chunk.DiskDecode(cr.blocks, cdata, rng)
	if err != nil {
		return nil, fmt.Errorf("decode chunk data: %w", err)
	}
	col.Entities, err = cr.entities(r)
	if err != nil && !errors.Is(err, leveldb.ErrNotFound) {
		return nil, fmt.Errorf("read entities: %w", err)
	}
	col.BlockEntities, err = cr.blockEntities(r)
	if err != nil && !errors.Is(err, leveldb.ErrNotFound) {
		return nil, fmt.Errorf("read block entities: %w", err)
	}
	col.ScheduledBlocks, col.Tick, err = cr.scheduledUpdates(r)
	if err != nil && !errors.Is(err, leveldb.ErrNotFound) {
		return nil, fmt.Errorf("read scheduled updates: %w", err)
	}
	return col, nil
}

// mcdbChunkVersion is the chunk version mcdb writes.
const mcdbChunkVersion = 42

func (r *run) versionByte() (byte, error) {
	var p []byte
	switch {
	case r.has&hasVersion != 0:
		p = r.version
	case r.has&hasVersionOld != 0:
		p = r.versionOld
	default:
		return 0, leveldb.ErrNotFound
	}
	if n := len(p); n != 1 {
		return 0, fmt.Errorf("expected 1 version byte, got %v", n)
	}
	return p[0], nil
}

// digpKey is mcdb's key of the ids of the entities of the column at pl.
func digpKey(pl place) []byte {
	k := binary.LittleEndian.AppendUint32([]byte(digpPrefix), uint32(pl.Pos[0]))
	k = binary.LittleEndian.AppendUint32(k, uint32(pl.Pos[1]))
	if id, _ := world.DimensionID(pl.Dim); id != 0 {
		k = binary.LittleEndian.AppendUint32(k, uint32(id))
	}
	return k
}

func (cr *columnReader) entities(r *run) ([]chunk.Entity, error) {
	ids, ok := cr.digp[string(digpKey(r.pl))]
	if !ok {
		return cr.entitiesOld(r)
	}
	entities := make([]chunk.Entity, 0, len(ids)/8)
	for i := 0; i < len(ids); i += 8 {
		// As mcdb: a length that is not a multiple of 8 panics here.
		id := int64(binary.LittleEndian.Uint64(ids[i : i+8]))
		data, err := cr.ldb.Get(binary.LittleEndian.AppendUint64([]byte(actorPrefix), uint64(id)), nil)
		if err != nil {
			cr.log.Error("read entity: "+err.Error(), "ID", id)
			return nil, err
		}
		if err := unreadable(nbtwalk.CheckOne(data)); err != nil {
			// mcdb would keep what decoded before the failure, after
			// allocating what the length declares: the column is refused.
			return nil, fmt.Errorf("decode entity nbt: %w", err)
		}
		ent := chunk.Entity{ID: id, Data: make(map[string]any)}
		if err = nbt.UnmarshalEncoding(data, &ent.Data, nbt.LittleEndian); err != nil {
			cr.log.Error("decode entity nbt: "+err.Error(), "ID", id)
		}
		entities = append(entities, ent)
	}
	return entities, nil
}

func (cr *columnReader) entitiesOld(r *run) ([]chunk.Entity, error) {
	if r.has&hasLegacyEntities == 0 {
		return nil, leveldb.ErrNotFound
	}
	if err := unreadable(nbtwalk.Check(r.legacyEntities)); err != nil {
		return nil, fmt.Errorf("decode entity nbt: %w", err)
	}
	var entities []chunk.Entity
	buf := bytes.NewBuffer(r.legacyEntities)
	dec, ok := nbt.NewDecoderWithEncoding(buf, nbt.LittleEndian), false
	for buf.Len() != 0 {
		ent := chunk.Entity{Data: make(map[string]any)}
		if err := dec.Decode(&ent.Data); err != nil {
			return nil, fmt.Errorf("decode entity nbt: %w", err)
		}
		ent.ID, ok = ent.Data["UniqueID"].(int64)
		if !ok {
			cr.log.Error("missing unique ID field, generating random", "data", fmt.Sprint(ent.Data))
			ent.ID = rand.Int64()
		}
		entities = append(entities, ent)
	}
	return entities, nil
}

func (cr *columnReader) blockEntities(r *run) ([]chunk.BlockEntity, error) {
	var blockEntities []chunk.BlockEntity
	if r.has&hasBlockEntities == 0 {
		return blockEntities, leveldb.ErrNotFound
	}
	if err := unreadable(nbtwalk.Check(r.blockEntities)); err != nil {
		return nil, fmt.Errorf("decode nbt: %w", err)
	}
	buf := bytes.NewBuffer(r.blockEntities)
	dec := nbt.NewDecoderWithEncoding(buf, nbt.LittleEndian)
	for buf.Len() != 0 {
		be := chunk.BlockEntity{Data: make(map[string]any)}
		if err := dec.Decode(&be.Data); err != nil {
			return blockEntities, fmt.Errorf("decode nbt: %w", err)
		}
		be.Pos = blockPosFromNBT(be.Data)
		blockEntities = append(blockEntities, be)
	}
	return blockEntities, nil
}

// scheduledUpdates is mcdb's record of a column's scheduled updates.
type scheduledUpdates struct {
	CurrentTick int32            `nbt:"currentTick"`
	TickList    []map[string]any `nbt:"tickList"`
}

func (cr *columnReader) scheduledUpdates(r *run) ([]chunk.ScheduledBlockUpdate, int64, error) {
	if r.has&hasScheduled == 0 {
		return nil, 0, leveldb.ErrNotFound
	}
	if err := unreadable(nbtwalk.CheckOne(r.scheduled)); err != nil {
		return nil, 0, fmt.Errorf("read nbt: %w", err)
	}
	var m scheduledUpdates
	if err := nbt.UnmarshalEncoding(r.scheduled, &m, nbt.LittleEndian); err != nil {
		return nil, 0, fmt.Errorf("read nbt: %s", err.Error())
	}
	updates := make([]chunk.ScheduledBlockUpdate, len(m.TickList))
	for i, tick := range m.TickList {
		t, _ := tick["time"].(int64)
		bl, _ := tick["blockState"].(map[string]any)
		bpe := chunk.BlockPaletteEncoding{Blocks: cr.blocks}
		block, err := bpe.DecodeBlockState(bl)
		if err != nil {
			cr.log.Error("read scheduled updates: decode block state: " + err.Error())
			continue
		}
		updates[i] = chunk.ScheduledBlockUpdate{Pos: blockPosFromNBT(tick), Block: block, Tick: t}
	}
	return updates, int64(m.CurrentTick), nil
}

// blockPosFromNBT is mcdb's: the position in a compound's x, y and z.
func blockPosFromNBT(data map[string]any) cube.Pos {
	x, _ := data["x"].(int32)
	y, _ := data["y"].(int32)
	z, _ := data["z"].(int32)
	return cube.Pos{int(x), int(y), int(z)}
}
