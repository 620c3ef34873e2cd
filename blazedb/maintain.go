package blazedb

import (
	"errors"
	"fmt"
	"time"
)

// The maintenance a DB does besides the calls its user makes: a periodic
// sync (DurabilityBalanced), index checkpoints and automatic compactions,
// run by one background goroutine or, with Options.ExternalMaintenance, by
// the owner's calls to Maintain; and the background errors they meet,
// kept for the next call that can report them.

// Maintain does, in the caller's goroutine, what the background goroutine
// does when Options.ExternalMaintenance is off: it syncs (DurabilityBalanced)
// once the oldest unsynced write is SyncInterval/2 old or SyncBytes are
// pending, and compacts if garbage passed the ratio. Call it at least every
// SyncInterval/2 to keep DurabilityBalanced's promise.
// It returns the background errors not yet reported and, after each
// compaction that carried damaged live records (damage.go), their report.
func (db *DB) Maintain() error {
	if err := db.checkWritable(); err != nil {
		return err
	}
	if db.opts.Durability == DurabilityBalanced {
		db.maintainSync()
	}
	l, err := db.acquireLog()
	if err != nil {
		return err
	}
	due := db.compactionDue(l)
	checkpoint := db.checkpointDue(l)
	l.refs.Done()
	if checkpoint && !due { // a compaction writes index.dat itself
		if err := db.checkpoint(); err != nil && !errors.Is(err, ErrClosed) {
			db.reportBackground(fmt.Errorf("index checkpoint: %w", err))
		}
	}
	if due {
		if err := db.compact(nil); err != nil && !errors.Is(err, ErrClosed) {
			db.reportBackground(fmt.Errorf("compaction: %w", err))
			db.bg.mu.Lock()
			db.bg.retryAfter = time.Now().Add(time.Minute)
			db.bg.mu.Unlock()
		}
	}
	// Damage compaction carries is reported after each compaction that
	// carried it, not at every call: an owner calls Maintain twice a
	// second, and would log it as often.
	var damage error
	if db.carriedFresh.Swap(false) {
		damage = db.damageErr()
	}
	return errors.Join(db.takeBackgroundErr(), damage)
}

// background runs the periodic sync of DurabilityBalanced and starts
// compactions. It never holds a lock while it sleeps.
func (db *DB) background() {
	defer db.bg.wg.Done()
	var tick <-chan time.Time
	if db.opts.Durability == DurabilityBalanced {
		t := time.NewTicker(db.opts.SyncInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-db.bg.stop:
			return
		case <-tick:
			db.backgroundSync()
		case <-db.bg.syncNow:
			db.backgroundSync()
		case <-db.bg.checkpointNow:
			db.backgroundCheckpoint()
		case <-db.bg.compactNow:
			if db.bg.running.CompareAndSwap(false, true) {
				db.bg.wg.Add(1)
				go func() {
					defer db.bg.wg.Done()
					defer db.bg.running.Store(false)
					if err := db.compact(nil); err != nil && !errors.Is(err, errAborted) && !errors.Is(err, ErrClosed) {
						db.reportBackground(fmt.Errorf("background compaction: %w", err))
						db.bg.mu.Lock()
						db.bg.retryAfter = time.Now().Add(time.Minute)
						db.bg.mu.Unlock()
					}
				}()
			}
		}
	}
}

// backgroundSync fsyncs whatever is unsynced. A failure poisons the DB (see
// fsync), so every later write reports it.
func (db *DB) backgroundSync() {
	l, err := db.acquireLog()
	if err != nil {
		return
	}
	defer l.refs.Done()
	if l.unsynced() > 0 {
		// A failed fsync poisons the DB, which every write reports; a
		// mark that could not be written is reported here.
		if err := db.syncMarked(l, l.written.Load(), true); err != nil && !errors.Is(err, ErrPoisoned) {
			db.reportBackground(err)
		}
	}
}

// kick signals a background task without blocking.
func (db *DB) kick(ch *chan struct{}) {
	select {
	case *ch <- struct{}{}:
	default:
	}
}

func (db *DB) reportBackground(err error) {
	db.opts.Logger.Error("blazedb: background error", "dir", db.dir, "err", err)
	db.bg.mu.Lock()
	db.bg.err = errors.Join(db.bg.err, err)
	db.bg.mu.Unlock()
}

// takeBackgroundErr returns, once, the background errors not yet reported.
func (db *DB) takeBackgroundErr() error {
	db.bg.mu.Lock()
	defer db.bg.mu.Unlock()
	err := db.bg.err
	db.bg.err = nil
	return err
}

// maybeCompact starts a background compaction when garbage passes the
// configured ratio (with ExternalMaintenance, Maintain does it).
func (db *DB) maybeCompact(l *logFile) {
	if db.opts.ExternalMaintenance || db.bg.running.Load() {
		return
	}
	if db.compactionDue(l) {
		db.kick(&db.bg.compactNow)
	}
}

// compactionDue reports whether garbage passed the configured ratio.
func (db *DB) compactionDue(l *logFile) bool {
	db.maybeTrimHistory()
	if db.opts.DisableAutoCompaction {
		return false
	}
	size := l.written.Load()
	if size < db.opts.CompactMinBytes {
		return false
	}
	live := db.historyBytes() // kept by compaction, so not garbage
	db.mu.RLock()
	live += db.idx.live
	db.mu.RUnlock()
	if float64(l.garbage(live)) < db.opts.CompactGarbageRatio*float64(size-fileHeaderSize) {
		return false
	}
	db.bg.mu.Lock()
	defer db.bg.mu.Unlock()
	return !time.Now().Before(db.bg.retryAfter)
}

// checkWritable returns the error a write must fail with, if any.
