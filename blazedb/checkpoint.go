package blazedb

import (
	"errors"
	"fmt"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// A checkpoint rewrites index.dat while the database is open, so that the
// next Open after a crash scans only what was appended since
// (Options.IndexCheckpointBytes at most) instead of the whole log: without
// one, index.dat is written only by Close and by compaction, and a crash
// after hours of autosaves costs a scan of everything appended since.
//
// The snapshot of the index and the length of the log it covers are taken
// together under writeMu (no append can fall between them), the log is
// synced up to that length, and only then is index.dat replaced (temp,
// fsync, rename, fsync of the directory): index.dat never covers a byte
// that is not durable, so a crash at any point leaves either the old
// index.dat or the new one, each describing a durable prefix of the log,
// and Open replays what follows it. In DurabilityFast, which never syncs
// a write, that sync is the only one the log gets: one per
// IndexCheckpointBytes. Writers wait while the index is cloned (a copy of
// its entries, about 30 bytes a key), once per checkpoint; the sync and
// the file are written without any lock but compactMu.

// checkpointDue reports whether IndexCheckpointBytes have been appended to
// l since index.dat last described it.
func (db *DB) checkpointDue(l *logFile) bool {
	n := db.opts.IndexCheckpointBytes
	return n > 0 && !db.opts.ReadOnly && l.written.Load()-db.checkpointed.Load() >= n
}

// checkpoint writes index.dat for the current log if one is due. It gives
// way to a compaction (which writes index.dat itself when it ends) rather
// than wait for it.
func (db *DB) checkpoint() error {
	if !db.compactMu.TryLock() {
		return nil
	}
	defer db.compactMu.Unlock()
	l, err := db.acquireLog()
	if err != nil {
		return nil // closed: Close writes index.dat
	}
	defer l.refs.Done()
	if !db.checkpointDue(l) {
		return nil
	}
	db.writeMu.Lock()
	db.mu.RLock()
	current := db.log == l
	ix := db.idx.clone()
	db.mu.RUnlock()
	meta := indexMeta{generation: l.gen, covered: l.written.Load(), nextSeq: db.seq}
	db.writeMu.Unlock()
	if !current {
		return nil
	}
	if err := db.syncMarked(l, meta.covered, true); err != nil {
		return err
	}
	if err := db.writeIndex(ix, meta); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	db.stats.checkpoints.Add(1)
	return nil
}

// maybeCheckpoint asks the background goroutine for a checkpoint when one
// is due (with ExternalMaintenance, Maintain does it).
func (db *DB) maybeCheckpoint(l *logFile) {
	if !db.opts.ExternalMaintenance && db.checkpointDue(l) {
		db.kick(&db.bg.checkpointNow)
	}
}

// backgroundCheckpoint runs a checkpoint for the background goroutine,
// reporting a failure to the next call that can return it.
func (db *DB) backgroundCheckpoint() {
	if err := db.checkpoint(); err != nil && !errors.Is(err, ErrClosed) {
		db.reportBackground(fmt.Errorf("index checkpoint: %w", err))
	}
}

// writeIndex replaces index.dat with ix, covering the log as meta says,
// and records what it covers. Close, compaction and checkpoints all write
// it here. The caller holds compactMu, and the log up to meta.covered is
// durable.
func (db *DB) writeIndex(ix *index, meta indexMeta) error {
	if err := vfs.ReplaceFile(db.fs, db.dir, indexName, encodeIndex(ix, meta)); err != nil {
		return fmt.Errorf("write %s: %w", indexName, err)
	}
	db.checkpointed.Store(meta.covered)
	return nil
}
