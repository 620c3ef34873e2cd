package provider

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/blazeworld/blaze/provider/internal/nbt"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// The column write path: StoreColumn encodes a column against the cache's
// snapshot of it (internal/column) and, unless nothing changed (unchanged), writes
// its record with the dictionary entries it is the first to use and, once
// after each Open, a new edition (edition.go).

// StoreColumn stores col at pos in dim. Storing a column identical to the
// stored one appends nothing. A private copy of what changed is taken
// before StoreColumn returns; the caller may mutate the column afterwards.
// In DurabilityBalanced and DurabilityFast the copy is queued, and encoded
// and written off the caller's goroutine (storequeue.go); otherwise it is
// written before StoreColumn returns.
func (db *DB) StoreColumn(pos world.ChunkPos, dim world.Dimension, col *chunk.Column) error {
	if err := db.storeColumn(pos, dim, col); err != nil {
		return fmt.Errorf("store column %v (%v): %w", pos, dim, err)
	}
	return nil
}

func (db *DB) storeColumn(pos world.ChunkPos, dim world.Dimension, col *chunk.Column) error {
	k, err := key(pos, dim)
	if err != nil {
		return err
	}
	if db.conf.ReadOnly {
		return blazedb.ErrReadOnly
	}
	if db.closed.Load() {
		return blazedb.ErrClosed
	}
	if err := db.checkStore(k, dim); err != nil {
		return err
	}
	if db.store != nil {
		// Not queued while a checkpoint is gathered (see queueStore).
		if queued, err := db.queueStore(k, pos, dim, col); queued {
			return err
		}
	}
	cols, br := db.columns()
	prev, _ := cols.peek(k)
	enc, err := db.dict.codec.Encode(col, prev.prev(), db.conf.Compression)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidColumn, err)
	}
	same, cached := db.unchanged(k, prev, enc)
	if cached {
		return nil
	}
	cols.remove(k)
	if !same {
		if err := db.writeColumn(k, enc.Rec, enc.Fresh); err != nil {
			return err
		}
	}
	snap := &snapshot{key: k, rng: col.Chunk.Range(), br: br, rec: enc.Rec, lay: enc.Layout, subs: enc.Subs, biomes: enc.Biomes,
		tick: col.Tick, scheduled: slices.Clone(col.ScheduledBlocks)}
	snap.setFlat(enc.Flat, db.dict.codec)
	if enc.SameNBT {
		// Snapshots are never modified: the new one shares prev's copies.
		snap.blockEntities, snap.entities = prev.blockEntities, prev.entities
	} else {
		snap.blockEntities, snap.entities = nbt.CloneBlockEntities(col.BlockEntities), nbt.CloneEntities(col.Entities)
	}
	cols.put(snap)
	return nil
}

// unchanged is the one decision that storing enc at k changes nothing: it
// adds no dictionary entry, and its record is byte for byte the one stored.
// That is the cache's snapshot prev (cached) when it holds it; otherwise,
// until the first write since Open, the engine's record is read back (as
// after a reopen, when the cache is empty and Dragonfly stores an
// unchanged column), so that the edition stays. encodeColumn returns
// prev's own record when it finds nothing changed, without building one,
// which this recognises at the cost of a pointer comparison; past the
// first write the engine's own rule (a Put of the bytes it holds appends
// nothing) covers a column the cache no longer holds.
func (db *DB) unchanged(k blazedb.Key, prev *snapshot, enc *column.Encoded) (same, cached bool) {
	if len(enc.Fresh) > 0 {
		return false, false
	}
	if prev != nil && bytes.Equal(prev.rec, enc.Rec) {
		return true, true
	}
	// Only this key's dimension stores it, one call at a time, so nothing
	// changes it between the read and the write that may follow.
	return !db.edited.Load() && db.holds(k, enc.Rec), false
}

// writeColumn writes a column's record: with the block dictionary entries
// it is the first to use (fresh), and, if it is the first column written
// since Open, with a new edition, all in one atomic batch (withEdition).
func (db *DB) writeColumn(k blazedb.Key, rec []byte, fresh []int32) error {
	db.ckpt.mu.RLock()
	defer db.ckpt.mu.RUnlock()
	if p := db.ckpt.pending; p != nil {
		return db.addToCheckpoint(p, k, rec, fresh)
	}
	if db.edited.Load() && len(fresh) == 0 {
		return db.eng.PutShared(k, rec) // rec is never written again
	}
	return db.withEdition(new(blazedb.Batch), func(b *blazedb.Batch) error {
		return db.putColumn(b, k, rec, fresh)
	})
}

// withEdition runs apply(b), the write of columns in batch b, adding a new
// edition to b first if it is the first write of columns since Open (so
// that a batch apply fills is led by the edition). Until that
// first write is done, other writers wait for it, so that no column
// reaches the log under the old edition: editMu is the one lock held
// across a write, once after each Open. Every write of columns goes
// through it (writeColumn, the store worker's writeStores, Revert).
func (db *DB) withEdition(b *blazedb.Batch, apply func(*blazedb.Batch) error) error {
	if !db.edited.Load() {
		db.editMu.Lock()
		defer db.editMu.Unlock()
		if !db.edited.Load() {
			e := newEdition()
			b.PutNamed(editionName, encodeEdition(e))
			if err := apply(b); err != nil {
				return err
			}
			db.edition.Store(&e)
			db.edited.Store(true)
			return nil
		}
	}
	return apply(b)
}

// holds reports whether the engine holds rec at k already (see
// unchanged). Any error reads as false: the column is then written, as it
// would be without the check.
func (db *DB) holds(k blazedb.Key, rec []byte) bool {
	rp := recBufs.Get().(*[]byte)
	cur, err := db.eng.GetAppend(k, (*rp)[:0])
	same := err == nil && bytes.Equal(cur, rec)
	if cap(cur) <= maxPooledRecord {
		*rp = cur
	}
	recBufs.Put(rp)
	return same
}

// putColumn adds the column and the block dictionary entries it is the
// first to use to b, and applies it: new entries reach the log in the same
// atomic batch as the first column that uses them, and count as persisted
// once it is applied. Later columns leave them out and come later in the
// log, and the engine recovers a prefix of the log's writes after a crash
// (blazedb's guarantees): a column never survives without the entries an
// earlier batch wrote for it.
func (db *DB) putColumn(b *blazedb.Batch, k blazedb.Key, rec []byte, fresh []int32) error {
	db.dict.mu.Lock()
	ids, err := db.dict.unpersisted(b, fresh)
	db.dict.mu.Unlock()
	if err != nil {
		return err
	}
	b.PutShared(k, rec) // as in writeColumn: rec is never written again
	if err := db.eng.Apply(b); err != nil {
		return err
	}
	db.dict.markPersisted(ids)
	if len(ids) > 0 {
		db.copier.added()
	}
	return nil
}
