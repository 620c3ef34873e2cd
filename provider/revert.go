package provider

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
)

// Revert puts the columns changed since point back as they were at point:
// each one for which in returns true (every one, when in is nil) is
// written again with its record of then, or removed if it did not exist
// then. It is what `blaze rollback` does offline. A revert is itself new
// versions of the columns, so it can be undone: Revert again to a point
// taken before it (a snapshot, or a time within the history).
//
// The records are written as they were stored: their block dictionary ids
// name the same states now (see View). A column this DB holds in
// quarantine (quarantine.go) is refused, as a store over it would be.
// Columns are written in batches, each atomic; a failure leaves the
// batches before it written. It returns the number of columns written or
// removed.
//
// Revert is for a world no World has open: a running World keeps its
// loaded chunks in memory and would store them over the revert (use package
// restore for a live world).
func (db *DB) Revert(point string, in func(Place) bool) (int, error) {
	n, err := db.revert(point, in)
	if err != nil {
		return n, fmt.Errorf("provider: revert to %q: %w", point, err)
	}
	return n, nil
}

// revertBatch and revertBatchOps bound a batch of Revert: records up to
// this many bytes, and this many writes (deletions carry no record).
const (
	revertBatch    = 4 << 20
	revertBatchOps = 1024
)

func (db *DB) revert(point string, in func(Place) bool) (int, error) {
	if db.conf.ReadOnly {
		return 0, blazedb.ErrReadOnly
	}
	v, err := db.At(point) // holds a snapshot while the revert reads it
	if err != nil {
		return 0, err
	}
	defer v.Close()
	places, err := db.changedSince(v.at.seq) // the View's point: resolved once
	if err != nil {
		return 0, err
	}
	return db.rewrite(places, in, func(k blazedb.Key) ([]byte, error) { return db.eng.GetAt(k, v.at.seq) })
}

// Clear removes the columns for which in returns true (every one, when in
// is nil), with the same guarantees as Revert (new versions: a View of an
// earlier point still reads them). It returns the number removed. Package
// segment uses it for a region made after the point it reverts to.
func (db *DB) Clear(in func(Place) bool) (int, error) {
	if db.conf.ReadOnly {
		return 0, fmt.Errorf("provider: clear: %w", blazedb.ErrReadOnly)
	}
	places, err := db.Columns()
	if err != nil {
		return 0, fmt.Errorf("provider: clear: %w", err)
	}
	n, err := db.rewrite(places, in, func(blazedb.Key) ([]byte, error) { return nil, blazedb.ErrNotFound })
	if err != nil {
		return n, fmt.Errorf("provider: clear: %w", err)
	}
	return n, nil
}

// rewrite writes each column of places for which in returns true as then
// gives it, or removes it where then gives blazedb.ErrNotFound, skipping
// those that hold it already.
func (db *DB) rewrite(places []Place, in func(Place) bool, then func(blazedb.Key) ([]byte, error)) (int, error) {
	if err := db.flushStores(); err != nil {
		return 0, err
	}
	var (
		b       blazedb.Batch
		size    int
		pending []blazedb.Key
		n       int
	)
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		err := db.withEdition(&b, db.eng.Apply)
		cols, _ := db.columns()
		for _, k := range pending {
			cols.remove(k)
		}
		if err == nil {
			n += len(pending)
		}
		b.Reset()
		size, pending = 0, pending[:0]
		return err
	}
	for _, p := range places {
		if in != nil && !in(p) {
			continue
		}
		k, err := key(p.Pos, p.Dim)
		if err != nil {
			return n, err
		}
		if err := db.checkStore(k, p.Dim); err != nil {
			return n, fmt.Errorf("column %v (%v): %w", p.Pos, p.Dim, err)
		}
		old, err := then(k)
		oldOK := err == nil
		if err != nil && !errors.Is(err, blazedb.ErrNotFound) {
			return n, fmt.Errorf("column %v (%v): %w", p.Pos, p.Dim, err)
		}
		now, err := db.eng.Get(k)
		nowOK := err == nil
		if err != nil && !errors.Is(err, blazedb.ErrNotFound) {
			return n, fmt.Errorf("column %v (%v): %w", p.Pos, p.Dim, err)
		}
		switch {
		case oldOK == nowOK && bytes.Equal(old, now):
			continue // changed and changed back
		case oldOK:
			b.Put(k, old)
		default:
			b.Delete(k)
		}
		size += len(old)
		pending = append(pending, k)
		if size >= revertBatch || len(pending) >= revertBatchOps {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	return n, flush()
}
