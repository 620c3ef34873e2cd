package provider

import (
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// ColumnAt is a column and where it goes, for StoreColumns: a plain value;
// StoreColumns only reads Col.
type ColumnAt struct {
	Pos world.ChunkPos
	Dim world.Dimension
	Col *chunk.Column
}

// StoreColumns stores every column of cols, with the block dictionary
// entries they add and a new Edition, as one atomic engine batch, durable
// when it returns: after a crash the world holds all of them under the new
// edition, or none under the old. It is how an arena's changes are
// promoted into its template (overlay.Provider.Promote). A column
// StoreColumn would refuse fails the call and nothing is written. Columns
// the DB's Worlds store meanwhile join the batch; it waits for a
// Checkpoint in progress, and Checkpoint for it.
func (db *DB) StoreColumns(cols []ColumnAt) error {
	if db.conf.ReadOnly {
		return fmt.Errorf("provider: store %d columns: %w", len(cols), blazedb.ErrReadOnly)
	}
	checkpointMu.Lock()
	defer checkpointMu.Unlock()
	p := db.beginCheckpoint()
	e := newEdition()
	p.mu.Lock()
	p.b.PutNamed(editionName, encodeEdition(e))
	p.edition = &e
	p.mu.Unlock()
	for _, c := range cols {
		if err := db.StoreColumn(c.Pos, c.Dim, c.Col); err != nil {
			db.abortCheckpoint(p)
			return fmt.Errorf("provider: store %d columns: %w", len(cols), err)
		}
	}
	return db.commitCheckpoint(p)
}

// abortCheckpoint stops gathering and writes nothing of p: the columns in
// it leave the cache, so that the next store of each writes it.
func (db *DB) abortCheckpoint(p *pendingCheckpoint) {
	db.ckpt.mu.Lock()
	defer db.ckpt.mu.Unlock()
	db.ckpt.pending = nil
	cols, _ := db.columns()
	for _, k := range p.keys {
		cols.remove(k)
	}
}

// ReadOnly reports whether the DB was opened read-only (Config.ReadOnly).
// A DB opened to write holds its world's lock alone: no other process has
// it open.
func (db *DB) ReadOnly() bool { return db.conf.ReadOnly }
