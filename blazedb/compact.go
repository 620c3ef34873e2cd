package blazedb

import (
	"errors"
	"fmt"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// errAborted ends a compaction that Close interrupted; the old log stays.
var errAborted = fmt.Errorf("%w: compaction aborted", ErrClosed)

// Compaction rewrites chunks.dat with only live records, in key order
// (dimension, then Morton order), while reads and writes go on:
//
//  1. Under the write lock, for an instant: clone the index (copy-on-write,
//     O(dimensions)) and note the log's end E.
//  2. Without locks: copy every record the clone points at to
//     chunks.dat.compact, re-framing entries of batches as plain puts with
//     their own sequence numbers. Then copy what writers appended after E,
//     record by record, in rounds, until little is left. fsync.
//  3. Under the write lock: copy the last few records, fsync, rename
//     chunks.dat.compact over chunks.dat, fsync the directory, and swap the
//     new file and index in. Writers wait only for this step; readers never
//     wait beyond an index swap.
//
// A crash before the rename leaves the old log untouched and a temporary
// file Open deletes; after it, the new log, which holds every record the old
// one held. The old file goes only when the rename and the directory are
// durable. Finally, with the index as the swap left it (cloned before the
// write lock is released), index.dat is rewritten for the new generation
// while writers go on: it covers the compacted file, and Open replays what
// they append after it.

// catchUpFinal is the most a compaction copies under the write lock.
const catchUpFinal = 256 << 10

// Compact compacts the log now and returns when it is done. It also returns
// any background error not yet reported.
func (db *DB) Compact() error {
	if err := db.checkWritable(); err != nil {
		return fmt.Errorf("blazedb: compact: %w", err)
	}
	err := errors.Join(db.compact(db.onCompactCopied), db.takeBackgroundErr())
	if err != nil {
		return fmt.Errorf("blazedb: compact: %w", err)
	}
	return nil
}

// snapshot returns, consistently with each other, the current log with a
// reference the caller must release (l.refs.Done), a read-only clone of the
// index, the log's end and the next sequence number. Writers wait only for
// the clone, which copies the index's small override maps.
func (db *DB) snapshot() (l *logFile, ix *index, end int64, seq uint64, err error) {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.log == nil {
		return nil, nil, 0, 0, ErrClosed
	}
	db.log.refs.Add(1)
	return db.log, db.idx.clone(), db.log.written.Load(), db.seq, nil
}

// appender writes a new file sequentially through a buffer.
type appender struct {
	f   vfs.File
	off int64 // bytes written to f
	buf []byte
}

func (a *appender) pos() int64 { return a.off + int64(len(a.buf)) }

func (a *appender) write(p []byte) error {
	if len(a.buf)+len(p) > cap(a.buf) {
		if err := a.flush(); err != nil {
			return err
		}
		if len(p) > cap(a.buf) {
			n, err := a.f.WriteAt(p, a.off)
			a.off += int64(n)
			return err
		}
	}
	a.buf = append(a.buf, p...)
	return nil
}

func (a *appender) flush() error {
	if len(a.buf) == 0 {
		return nil
	}
	n, err := a.f.WriteAt(a.buf, a.off)
	a.off += int64(n)
	a.buf = a.buf[:0]
	return err
}

func (db *DB) compact(afterCopy func()) (err error) {
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	if db.closed.Load() {
		return ErrClosed
	}
	start := time.Now()

	// 1. Snapshot.
	old, snap, from, seq, err := db.snapshot()
	if err != nil {
		return err
	}
	defer old.refs.Done()

	// 2. Copy.
	tmp := db.path(compactName)
	f, err := db.fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", compactName, err)
	}
	installed := false
	defer func() {
		if !installed {
			f.Close()
			db.fs.Remove(tmp)
		}
	}()
	w := &appender{f: f, buf: make([]byte, 0, 1<<20)}
	nh := fileHeader{version: logVersion, generation: old.gen + 1, baseSeq: seq}
	if err := w.write(nh.encode()); err != nil {
		return fmt.Errorf("write %s: %w", compactName, err)
	}
	nix := newIndex()
	var copyErr error
	var rbuf []byte
	snap.each(func(k rkey, e entry) bool {
		if db.stopping.Load() {
			copyErr = errAborted
			return false
		}
		rbuf, copyErr = copyLive(old, e, k, rbuf, w, nix)
		return copyErr == nil
	})
	if copyErr != nil {
		return copyErr
	}
	if afterCopy != nil {
		afterCopy()
	}
	for round := 0; round < 8; round++ {
		end := old.written.Load()
		if end-from <= catchUpFinal {
			break
		}
		if err := copyTail(old, from, end, w, nix); err != nil {
			return err
		}
		from = end
		if db.stopping.Load() {
			return errAborted
		}
	}
	if err := w.flush(); err != nil {
		return fmt.Errorf("write %s: %w", compactName, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", compactName, err)
	}

	// 3. Swap.
	db.writeMu.Lock()
	locked := true
	defer func() {
		if locked {
			db.writeMu.Unlock()
		}
	}()
	if db.log != old {
		return ErrClosed
	}
	if err := db.poisoned(); err != nil {
		return err
	}
	end := old.written.Load()
	if err := copyTail(old, from, end, w, nix); err != nil {
		return err
	}
	// The file is synced whole before it becomes chunks.dat: a mark at
	// its end says so, as Close's does.
	if err := w.write(appendMark(nil, w.pos())); err != nil {
		return fmt.Errorf("write %s: %w", compactName, err)
	}
	if err := w.flush(); err != nil {
		return fmt.Errorf("write %s: %w", compactName, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", compactName, err)
	}
	aside, err := db.install(tmp, old.gen)
	if err != nil {
		return err
	}
	// From here on chunks.dat names the new file: writes must go there.
	installed = true
	dirErr := db.fs.SyncDir(db.dir)
	if dirErr != nil {
		db.poison(fmt.Errorf("sync directory after compaction: %w", dirErr))
	}
	f = db.renamedHandle(f)
	nix.settle()
	nl := newLogFile(f, nh, w.off, w.off)
	nl.marked = w.off
	nl.markBytes.Store(markSize)
	db.mu.Lock()
	db.idx, db.log = nix, nl
	db.mu.Unlock()
	db.checkpointed.Store(0) // index.dat describes the old generation
	db.retiring.Add(1)
	old.retire(func() {
		if aside != "" {
			// A failure leaves a file that the next Open removes.
			db.fs.Remove(aside)
		}
		db.retiring.Done()
	})

	db.stats.compactions.Add(1)
	db.stats.compactNanos.Add(int64(time.Since(start)))
	db.stats.compactCopied.Add(w.off)
	if dirErr != nil {
		return db.poisoned()
	}
	// The index as the swap left it, then writes may go on: they land past
	// w.off, which Open replays. index.dat is written without the lock.
	meta := indexMeta{generation: nl.gen, covered: w.off, nextSeq: db.seq}
	ix := nix.clone()
	db.writeMu.Unlock()
	locked = false
	if err := db.writeIndex(ix, meta); err != nil {
		// The log is complete without it; the next Open scans instead.
		return fmt.Errorf("after compaction: %w", err)
	}
	return nil
}

// install renames the compacted log tmp to chunks.dat, in place of the open
// log of generation gen. Where a rename cannot replace an open file
// (Windows), the open log is renamed aside first (files.go); install
// returns the aside name, for removal once the log's readers are done.
func (db *DB) install(tmp string, gen uint64) (aside string, err error) {
	live := db.path(logName)
	if db.fs.RenameReplacesOpen() {
		if err := db.fs.Rename(tmp, live); err != nil {
			return "", fmt.Errorf("rename %s: %w", compactName, err)
		}
		return "", nil
	}
	aside = db.path(asideName(gen))
	if err := db.fs.Rename(live, aside); err != nil {
		return "", fmt.Errorf("rename %s aside: %w", logName, err)
	}
	if err := db.fs.Rename(tmp, live); err != nil {
		err = fmt.Errorf("rename %s: %w", compactName, err)
		if rerr := db.fs.Rename(aside, live); rerr != nil {
			// No file is called chunks.dat: writes could go on into the
			// open log, but only Open, which renames it back, makes the
			// directory whole again.
			err = errors.Join(err, fmt.Errorf("rename %s back: %w", logName, rerr))
			db.poison(err)
		}
		return "", err
	}
	return aside, nil
}

// renamedHandle returns a handle on the installed log opened by its name,
// chunks.dat, in place of f, the one compaction created as
// chunks.dat.compact: errors through a handle name the file it was opened
// as (the operating system's, and vfs.Inject's), and that name is gone. f
// is synced whole, so closing it loses nothing. Should the open fail, f
// serves on: the same file, only misnamed in errors.
func (db *DB) renamedHandle(f vfs.File) vfs.File {
	g, err := db.fs.OpenReadWrite(db.path(logName))
	if err != nil {
		db.opts.Logger.Warn("blazedb: cannot reopen the compacted log by its name; errors will name it "+compactName, "dir", db.dir, "err", err)
		return f
	}
	if err := f.Close(); err != nil {
		// Synced before the rename: the close cannot lose a byte of it.
		db.opts.Logger.Warn("blazedb: closing the compacted log's first handle", "dir", db.dir, "err", err)
	}
	return g
}

// copyLive copies the live record e of k from old into w as a top-level put
// and records it in nix. buf is scratch space, returned for reuse.
func copyLive(old *logFile, e entry, k rkey, buf []byte, w *appender, nix *index) ([]byte, error) {
	if cap(buf) < int(e.size) {
		buf = make([]byte, e.size)
	}
	buf = buf[:e.size]
	if n, err := old.f.ReadAt(buf, e.off); n < len(buf) {
		return buf, fmt.Errorf("read %s at %d: %w", logName, e.off, err)
	}
	r, _, err := decodeRecord(buf, buf[16]&0x80 == 0)
	if err != nil {
		return buf, corruptf(logName, e.off, "live record of %v cannot be compacted (Repair, or blaze repair, mends it): %v", k, err)
	}
	if r.kind != kindPut && r.kind != kindBatchPut {
		return buf, corruptf(logName, e.off, "index points at a record of kind %#x", r.kind)
	}
	off := w.pos()
	if r.kind == kindPut {
		err = w.write(buf)
	} else {
		r.kind = kindPut
		err = w.write(appendRecord(nil, &r))
	}
	if err != nil {
		return buf, fmt.Errorf("write %s: %w", compactName, err)
	}
	nix.put(k, entry{off: off, size: e.size, vsum: e.vsum})
	return buf, nil
}

// copyTail copies the records old holds in [from, end) verbatim into w and
// applies them to nix.
func copyTail(old *logFile, from, end int64, w *appender, nix *index) error {
	if from >= end {
		return nil
	}
	var werr error
	res, err := scanLog(old.f, from, end, false, func(off int64, r *record) error {
		at := w.pos()
		b := appendRecord(nil, r)
		if werr = w.write(b); werr != nil {
			return werr
		}
		return applyRecord(nix, at, r)
	})
	if err != nil {
		return err
	}
	if res.end != end || len(res.corrupt) > 0 {
		return corruptf(logName, res.end, "records appended during compaction do not decode")
	}
	return nil
}
