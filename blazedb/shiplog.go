package blazedb

import (
	"fmt"
	"io/fs"
)

// Shipping the log off the machine (package replica) reads chunks.dat as
// bytes while the database is open: the durable part of the current
// generation only, since a crash may cut what is not durable yet and the
// bytes written after it would then differ from those shipped. Within a
// generation the log is append-only below its durable length: no byte
// there changes until a compaction replaces the file (a new generation),
// which is then shipped whole. These two calls are the whole hook; they
// take no lock a store waits for (the log's reference, and its sync
// mutex for a moment).

// DurableLog returns the generation of chunks.dat and how many of its
// bytes are durable (fsynced), a prefix that only grows until the next
// compaction, ending at a record boundary. Safe for concurrent use.
func (db *DB) DurableLog() (gen uint64, durable int64, err error) {
	l, err := db.acquireLog()
	if err != nil {
		return 0, 0, err
	}
	defer l.refs.Done()
	return l.gen, l.durable(), nil
}

// SyncLog makes every write that has returned durable, as Sync does, but
// leaves the background error and the damage report to the calls that
// report them (Sync, Close): for shipping, which must not take them from
// the server that owns the database. A failed fsync poisons the database,
// as any does. Safe for concurrent use; nothing in a read-only database
// needs it.
func (db *DB) SyncLog() error {
	l, err := db.acquireLog()
	if err != nil {
		return err
	}
	defer l.refs.Done()
	if db.opts.ReadOnly {
		return nil
	}
	return db.syncMarked(l, l.written.Load(), true)
}

// ReadLogAt reads len(p) bytes of chunks.dat at off, all of which must
// lie within its durable length, from the log of generation gen: it
// returns an error wrapping ErrGenerationGone when a compaction has
// replaced that log. Safe for concurrent use; it holds the log open while
// it reads, as any reader does.
func (db *DB) ReadLogAt(gen uint64, p []byte, off int64) error {
	l, err := db.acquireLog()
	if err != nil {
		return err
	}
	defer l.refs.Done()
	if l.gen != gen {
		return fmt.Errorf("read %s of generation %d: %w (now %d)", logName, gen, ErrGenerationGone, l.gen)
	}
	if d := l.durable(); off < 0 || off+int64(len(p)) > d {
		return fmt.Errorf("read %s at %d+%d: %w: beyond its durable length %d", logName, off, len(p), fs.ErrInvalid, d)
	}
	if _, err := l.f.ReadAt(p, off); err != nil {
		return fmt.Errorf("read %s at %d: %w", logName, off, err)
	}
	return nil
}
