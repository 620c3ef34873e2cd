package provider

import (
	"bytes"

	"github.com/blazeworld/blaze/blazedb"
)

// The column write path: StoreColumn (provider.go) encodes a column
// against the cache's snapshot of it (codec.go) and, unless nothing
// changed, writes its record here, with the dictionary entries it is the
// first to use and, once after each Open, a new edition (edition.go).

// writeColumn writes a column's record: with the block dictionary entries
// it is the first to use (fresh), and, if it is the first column written
// since Open, with a new edition, all in one atomic batch. Until that first
// write is done, other writers wait for it, so that no column reaches the
// log under the old edition: editMu is the one lock held across a write,
// once after each Open.
func (db *DB) writeColumn(k blazedb.Key, rec []byte, fresh []int32) error {
	if !db.edited.Load() {
		// Outside editMu: only this key's dimension stores it, one call at
		// a time, so nothing changes it between the read and the return.
		if len(fresh) == 0 && db.holds(k, rec) {
			return nil // the engine would elide it: nothing changes
		}
		db.editMu.Lock()
		defer db.editMu.Unlock()
		if !db.edited.Load() {
			e := newEdition()
			var b blazedb.Batch
			b.PutNamed(editionName, encodeEdition(e))
			if err := db.putColumn(&b, k, rec, fresh); err != nil {
				return err
			}
			db.edition.Store(&e)
			db.edited.Store(true)
			return nil
		}
	}
	if len(fresh) == 0 {
		return db.eng.PutShared(k, rec) // rec is never written again
	}
	return db.putColumn(new(blazedb.Batch), k, rec, fresh)
}

// holds reports whether the engine holds rec at k already, as after a
// reopen, when the column cache is empty and Dragonfly stores an unchanged
// column: the engine would elide that write, and the edition must stay.
// Any error reads as false: the column is then written, as it would be
// without the check.
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
	b.Put(k, rec)
	if err := db.eng.Apply(b); err != nil {
		return err
	}
	db.dict.markPersisted(ids)
	if len(ids) > 0 {
		db.copier.added()
	}
	return nil
}
