package provider

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// storeWorker writes what StoreColumn queued, a batch at a time, until the
// DB closes; Close drains the queue before it stops the worker.
func (db *DB) storeWorker() {
	defer db.fillDone.Done()
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	for {
		select {
		case <-db.fillStop:
			return
		case <-db.store.wake:
		}
		if db.store.gate != nil {
			<-db.store.gate
		}
		for {
			db.store.settle(quiet, db.fillStop)
			batch := db.store.take()
			if len(batch) == 0 {
				break
			}
			db.store.done(batch, db.writeStores(batch))
		}
	}
}

// encodedStore is a job encoded for writing.
type encodedStore struct {
	j    *storeJob
	enc  *column.Encoded
	prev *snapshot
	// write is false for a column the engine holds already (unchanged):
	// only its snapshot is cached.
	write bool
	// cached: the cache holds the column as encoded, nothing to write or
	// cache.
	cached bool
	err    error
}

// encodeStore encodes j against its cached snapshot into o. The snapshot's
// sub-chunks are copies nothing modifies (snapshotOf), so the encoded
// column's snapshot shares them instead of copying them again. On the raw
// path the changed ones are encoded straight from their flat form
// (column.EncodeParts) and stay in it: no SubChunk is built unless the
// column is loaded (snapshot.build).
func (db *DB) encodeStore(cols *columnCache, j *storeJob, o *encodedStore) {
	o.j = j
	if db.store.encoding != nil {
		db.store.encoding()
	}
	s := j.s
	prev, _ := cols.peek(s.key)
	var enc *column.Encoded
	var err error
	if s.flat != nil {
		enc, err = db.dict.codec.EncodeParts(&column.Parts{Range: s.rng, Subs: s.subs, Flat: s.flat, Biomes: s.biomes,
			Tick: s.tick, BlockEntities: s.blockEntities, Entities: s.entities, ScheduledBlocks: s.scheduled}, prev.prev(), db.conf.Compression)
	} else {
		if err := s.build(); err != nil {
			o.err = fmt.Errorf("store column %v (%v): %w", j.pos, j.dim, err)
			return
		}
		view := &chunk.Column{Chunk: s.chunk, Tick: s.tick, BlockEntities: s.blockEntities, Entities: s.entities, ScheduledBlocks: s.scheduled}
		enc, err = db.dict.codec.EncodeOwned(view, prev.prev(), db.conf.Compression)
	}
	if err != nil {
		o.err = fmt.Errorf("store column %v (%v): %w: %w", j.pos, j.dim, ErrInvalidColumn, err)
		return
	}
	same, cached := db.unchanged(s.key, prev, enc)
	o.enc, o.prev, o.write, o.cached = enc, prev, !same, cached
}

// encodeStores encodes batch into out, one entry a job in the batch's
// order, on up to GOMAXPROCS goroutines: a bulk store (a conversion, a map
// pre-generated) then encodes and compresses on every core. The jobs are
// of distinct columns (push replaces a queued job of the same column), so
// their encodings are independent; the block dictionary's ids are assigned
// under its lock whichever encoder asks first.
func (db *DB) encodeStores(cols *columnCache, batch []*storeJob) []encodedStore {
	out := make([]encodedStore, len(batch))
	n := min(runtime.GOMAXPROCS(0), len(batch))
	if n <= 1 {
		for i, j := range batch {
			db.encodeStore(cols, j, &out[i])
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(batch); i = int(next.Add(1) - 1) {
				db.encodeStore(cols, batch[i], &out[i])
			}
		})
	}
	wg.Wait()
	return out
}

// writeStores encodes batch, each column against its cached snapshot
// (encodeStores, in parallel), and writes every changed one in one atomic
// engine batch, in the batch's order, with the block dictionary entries
// they are the first to use and, if they are the first columns written
// since Open, a new edition (as writeColumn does for one). Whether a
// column changed is unchanged's decision, as for a direct store. A column
// that does not encode is reported and the others written. It never runs
// while a checkpoint is gathered: the queue is empty then (see
// queueStore).
func (db *DB) writeStores(batch []*storeJob) error {
	cols, _ := db.columns()
	var errs []error
	var out []encodedStore
	var fresh []int32
	writes := 0
	for _, o := range db.encodeStores(cols, batch) {
		if o.err != nil {
			errs = append(errs, o.err)
			continue
		}
		if o.cached {
			continue // the cache holds it: nothing to write or cache
		}
		out = append(out, o)
		if o.write {
			writes++
			fresh = append(fresh, o.enc.Fresh...)
		}
	}
	if writes > 0 {
		var ids []int32
		err := db.withEdition(new(blazedb.Batch), func(b *blazedb.Batch) error {
			db.dict.mu.Lock()
			var err error
			ids, err = db.dict.unpersisted(b, fresh)
			db.dict.mu.Unlock()
			if err != nil {
				return err
			}
			for _, o := range out {
				if o.write {
					cols.remove(o.j.s.key)
					b.PutShared(o.j.s.key, o.enc.Rec) // the cache's snapshot keeps it, never modified
				}
			}
			if err := db.eng.Apply(b); err != nil {
				return fmt.Errorf("store %d columns: %w", writes, err)
			}
			return nil
		})
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		db.dict.markPersisted(ids)
		if len(ids) > 0 {
			db.copier.added()
		}
	}
	for _, o := range out {
		s, enc := o.j.s, o.enc
		snap := &snapshot{key: s.key, rng: s.rng, br: s.br, rec: enc.Rec, lay: enc.Layout, subs: enc.Subs, biomes: enc.Biomes,
			tick: s.tick, scheduled: s.scheduled, blockEntities: s.blockEntities, entities: s.entities}
		snap.setFlat(enc.Flat, db.dict.codec)
		if enc.SameNBT && o.prev != nil {
			snap.blockEntities, snap.entities = o.prev.blockEntities, o.prev.entities
		}
		cols.put(snap)
	}
	return errors.Join(errs...)
}
