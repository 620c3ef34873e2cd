package provider

import (
	"errors"
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/world"
)

// Prefetching and pinning: ready copies of columns made off the World's
// tick, and the counters that tell how they were used.

// Prefetch reads the column at pos into the column cache, decoded, so the
// next LoadColumn of it is hot. It also keeps a second, ready copy that the
// first LoadColumn hands out as it is (it is a deep copy no one else has
// seen), so that load costs no decode and no clone: the work is done here,
// off the World's tick. A column already cached gets only the ready copy.
// A store of the column discards that copy; the cache charges it to its
// budget until it is taken. It reports whether it did any work: a missing
// column, or a cached one with a ready copy, costs nothing. Safe to call
// from any goroutine beside the World's own calls; meant for columns the
// World does not hold (a copy of one it holds is wasted until it next
// loads it).
func (db *DB) Prefetch(pos world.ChunkPos, dim world.Dimension) (bool, error) {
	k, err := key(pos, dim)
	if err != nil {
		return false, err
	}
	if db.closed.Load() {
		return false, fmt.Errorf("prefetch column %v (%v): %w", pos, dim, ErrClosed)
	}
	cols, _ := db.columns()
	if cols == nil {
		return false, nil
	}
	if db.store.find(k) != nil {
		// A store not yet written: wait for it (Prefetch runs off the
		// tick), then cache what it wrote. A failure is left for Sync.
		db.store.wait()
	}
	if s, ok := cols.peek(k); ok {
		// Cached: give it a ready copy unless it has one.
		if cols.hasReady(s) {
			return false, nil
		}
		ready, err := s.column()
		if err != nil {
			return false, fmt.Errorf("prefetch column %v (%v): %w", pos, dim, err)
		}
		cols.built(s)
		if !cols.giveReady(s, ready) {
			return false, nil // stored or evicted meanwhile, or given one
		}
		cols.readyMade.Add(1)
		return true, nil
	}
	job := fillJob{k: k, rng: dim.Range(), cols: cols}
	err = db.readRecord(&job)
	if errors.Is(err, blazedb.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("prefetch column %v (%v): %w", pos, dim, err)
	}
	if s := db.decodeSnapshot(job); s != nil {
		if ready, err := s.column(); err == nil {
			s.ready, s.readyCost = ready, int64(s.lay.RawSize)
			cols.readyMade.Add(1)
		}
		db.install(job, s)
	}
	return true, nil
}

// Pin keeps the column at pos in the cache (loading it if needed) until
// as many Unpin calls; pinned columns are never evicted and may hold the
// cache over its budget. A column that is not stored is pinned too, for
// when it is. If the column cannot be read, Pin returns the error and
// leaves nothing pinned.
func (db *DB) Pin(pos world.ChunkPos, dim world.Dimension) error {
	k, err := key(pos, dim)
	if err != nil {
		return err
	}
	cols, _ := db.columns()
	cols.pin(k, 1)
	if _, err = db.Prefetch(pos, dim); err != nil {
		cols.pin(k, -1)
		return err
	}
	return nil
}

// Unpin undoes one Pin.
func (db *DB) Unpin(pos world.ChunkPos, dim world.Dimension) {
	if k, err := key(pos, dim); err == nil {
		cols, _ := db.columns()
		cols.pin(k, -1)
	}
}

// CacheStats reports hot and cold LoadColumn calls: those served from the
// column cache and those that read the engine.
func (db *DB) CacheStats() (hits, misses int64) {
	cols, _ := db.columns()
	if cols == nil {
		return 0, 0
	}
	return cols.hits.Load(), cols.misses.Load()
}

// ReadyStats reports how many ready copies Prefetch made and how many a
// LoadColumn handed out; the rest were wasted (the column was stored,
// evicted, or never loaded).
func (db *DB) ReadyStats() (made, taken int64) {
	cols, _ := db.columns()
	if cols == nil {
		return 0, 0
	}
	return cols.readyMade.Load(), cols.readyTaken.Load()
}
