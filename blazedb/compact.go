package blazedb

import (
	"errors"
	"fmt"
	"maps"
	"slices"
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
//     their own sequence numbers; a damaged live record is carried as it
//     is, after its key's newest intact older version (damage.go). Then
//     copy what writers appended after E, record by record, in rounds,
//     until little is left. fsync.
//  3. Under the write lock: copy the last few records, fsync, rename
//     chunks.dat.compact over chunks.dat, fsync the directory, and swap the
//     new file and index in, the file reopened by its new name (so that
//     errors name chunks.dat). Writers wait only for this step; readers
//     never wait beyond an index swap.
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
// any background error not yet reported and, every time, the report of
// the damaged live records compaction carries (damage.go): an error
// wrapping ErrCorrupt after a compaction that was done around them.
func (db *DB) Compact() error {
	if err := db.checkWritable(); err != nil {
		return fmt.Errorf("blazedb: compact: %w", err)
	}
	err := errors.Join(db.compact(db.knobs.compactCopied), db.takeBackgroundErr(), db.damageErr())
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

// restart empties the file a writes and writes header again.
func (a *appender) restart(header []byte) error {
	a.buf = a.buf[:0]
	if a.off > 0 {
		if err := a.f.Truncate(0); err != nil {
			return err
		}
		a.off = 0
	}
	return a.write(header)
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
	nh := fileHeader{generation: old.gen + 1, baseSeq: seq}
	if err := w.write(nh.encodeWithCopy()); err != nil {
		return fmt.Errorf("write %s: %w", compactName, err)
	}
	// History first (compacthistory.go): the versions still needed, before
	// the live records. Damaged live records are carried (damage.go).
	// Those the last compaction carried are known; one met for the first
	// time sends the copy back to the start, once the pass has found all
	// such records and one scan their keys' older versions.
	carry := map[rkey]carried{}
	if cs := db.carried.Load(); cs != nil && cs.gen == old.gen {
		maps.Copy(carry, cs.recs)
	}
	var nix *index
	var hc *historyCopy
	var kept map[rkey]carried
	var keptBytes int64
	var rc *recompressor
	var plan *aliasPlan
	for {
		var newly map[rkey]carried
		nix, kept = newIndex(), map[rkey]carried{}
		rc = db.recompressor()
		hc = db.historyCopy(snap, nix, start)
		if err := hc.writeHistory(db, old, w, rc); err != nil {
			return err
		}
		// Values two or more keys hold, stored once (alias.go).
		plan, err = db.planAliases(old, snap, carry, rc)
		if err != nil {
			return err
		}
		if err := plan.writeFirst(w); err != nil {
			return err
		}
		newly, keptBytes, err = db.copySnapshot(old, snap, carry, w, nix, kept, rc, plan)
		if err != nil {
			return err
		}
		if len(newly) == 0 {
			if err := plan.writeRest(w, nix, db.knobs.aliasListKeys); err != nil {
				return err
			}
			break
		}
		if err := findOlder(old, from, newly); err != nil {
			return err
		}
		maps.Copy(carry, newly)
		if err := w.restart(nh.encodeWithCopy()); err != nil {
			return fmt.Errorf("write %s: %w", compactName, err)
		}
	}
	hc.addLive(nix)
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
	db.mu.RLock()
	cur := db.idx.hist
	db.mu.RUnlock()
	if err := hc.finish(cur, db.seq, w); err != nil {
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
	nl.alt = nix.alternates()
	nl.marked = w.off
	nl.markBytes.Store(markSize + headerCopySize)
	nl.keptBytes.Store(keptBytes + plan.listBytes)
	var cs *carriedSet
	if len(kept) > 0 {
		cs = &carriedSet{gen: nl.gen, recs: kept}
	}
	db.mu.Lock()
	db.idx, db.log = nix, nl
	db.carried.Store(cs)
	damage := standingDamage(cs, nix, nl.gen)
	db.mu.Unlock()
	for _, k := range rc.recoded {
		db.cache.remove(k) // its value is now Recode's
	}
	if len(damage) > 0 {
		db.carriedFresh.Store(true)
		keys := make([]string, len(damage))
		for i, d := range damage {
			keys[i] = d.k.String()
		}
		db.opts.Logger.Error("blazedb: compaction kept damaged live records as they are, with their keys' newest intact older versions where there are any; reads of them fail until Repair (blaze repair) puts each key back at that version, or deletes it when there is none",
			"dir", db.dir, "records", len(damage), "keys", keys, "err", damageError(damage))
	}
	db.checkpointed.Store(0) // index.dat describes the old generation
	db.lastTrim.Store(time.Now().UnixNano())
	db.retiring.Add(1)
	old.retire(func() {
		if aside != "" {
			// A failure leaves a file that the next Open removes.
			db.fs.Remove(aside)
		}
		db.retiring.Done()
	})

	took := time.Since(start)
	db.stats.compactions.Add(1)
	db.stats.compactNanos.Add(int64(took))
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
	// ix, not nix: writers go on changing nix, the index, from here.
	db.opts.Logger.Info("blazedb: compacted chunks.dat", "dir", db.dir, "generation", nl.gen, "took", took,
		"bytes_before", end, "bytes_after", w.off, "keys", ix.count, "recompressed", rc.n)
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
// as (the operating system's, and vfstest.Inject's), and that name is gone. f
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

// copySnapshot copies every live record of snap from old into w, in key
// order, as top-level puts, and records them in nix. A damaged record
// that carry holds is carried (damage.go): the older version carry found
// for it, then its own bytes as they are; kept receives what was carried,
// located in w, and keptBytes the length of the older versions. It
// returns the damaged live records carry did not hold; when there are
// any, w is incomplete (the pass only looks for more once it meets the
// first) and the copy must start again.
func (db *DB) copySnapshot(old *logFile, snap *index, carry map[rkey]carried, w *appender, nix *index, kept map[rkey]carried, rc *recompressor, plan *aliasPlan) (newly map[rkey]carried, keptBytes int64, err error) {
	newly = map[rkey]carried{}
	var buf []byte
	snap.each(func(k rkey, e entry) bool {
		if db.stopping.Load() {
			err = errAborted
			return false
		}
		var bad error
		c, known := carry[k]
		if known && c.e == e {
			if len(newly) > 0 {
				return true // a pass to be redone: only looking for damage
			}
			var kc carried
			if kc, buf, err = carryRecord(old, k, c, buf, w, nix); err == nil && kc.e != (entry{}) {
				kept[k] = kc
				if kc.hasOlder {
					keptBytes += int64(kc.older.size)
				}
			}
			return err == nil
		}
		if plan.of[k] {
			return true // stored once, with its body (alias.go)
		}
		var r record
		if r, buf, bad, err = readLiveAlt(old, e, buf); err != nil {
			return false
		}
		if bad != nil {
			newly[k] = carried{e: e, reason: bad.Error()}
			return true
		}
		if len(newly) > 0 {
			return true
		}
		seq, pr := r.seq, r
		if r.kind == kindBody { // a body only this key still names
			seq = liveSeq(snap, k, 0)
			pr.kind, pr.key, pr.seq = kindPut, k.appendTo(nil), seq
		}
		if nr, ok := rc.rewrite(k, &pr); ok {
			err = writeRewritten(w, nix, k, &nr)
		} else {
			err = writeLive(w, nix, k, e, &r, buf, seq)
		}
		return err == nil
	})
	return newly, keptBytes, err
}

// readLive reads the record e points at in old into buf (scratch space,
// returned for reuse) and decodes it. bad is why its bytes do not verify,
// when they do not; err is a failed read, or an index pointing at a
// record that is no put.
func readLive(old *logFile, e entry, buf []byte) (r record, b []byte, bad, err error) {
	if cap(buf) < int(e.size) {
		buf = make([]byte, e.size)
	}
	buf = buf[:e.size]
	if n, err := old.f.ReadAt(buf, e.off); n < len(buf) {
		return r, buf, nil, fmt.Errorf("read %s at %d: %w", logName, e.off, err)
	}
	r, _, bad = decodeRecord(buf, buf[16]&0x80 == 0)
	if bad != nil {
		return r, buf, bad, nil
	}
	if r.kind != kindPut && r.kind != kindBatchPut && r.kind != kindBody {
		return r, buf, nil, corruptf(logName, e.off, "index points at a record of kind %#x", r.kind)
	}
	return r, buf, nil, nil
}

// writeLive appends r, the live record e of k read into b, to w as a
// top-level put and records it in nix. A body (alias.go) becomes a put of
// k again, with seq, k's sequence number.
func writeLive(w *appender, nix *index, k rkey, e entry, r *record, b []byte, seq uint64) error {
	off := w.pos()
	var err error
	switch r.kind {
	case kindPut:
		err = w.write(b)
	case kindBody:
		r.kind, r.key, r.seq = kindPut, k.appendTo(nil), seq
		b = appendRecord(nil, r)
		e.size = uint32(len(b))
		err = w.write(b)
	default:
		r.kind = kindPut
		err = w.write(appendRecord(nil, r))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", compactName, err)
	}
	nix.put(k, entry{off: off, size: e.size, vsum: e.vsum})
	return nil
}

// carryRecord copies c, the damaged live record of k, into w: the older
// version it keeps, if that still reads, then its own bytes as they are,
// which nix then points at. It returns c as located in w. Should the
// record verify after all, it is copied as any other, and nothing is
// carried (the zero carried).
func carryRecord(old *logFile, k rkey, c carried, buf []byte, w *appender, nix *index) (carried, []byte, error) {
	r, buf, bad, err := readLive(old, c.e, buf)
	if err != nil {
		return carried{}, buf, err
	}
	if bad == nil {
		return carried{}, buf, writeLive(w, nix, k, c.e, &r, buf, 0)
	}
	damaged := slices.Clone(buf)
	out := carried{reason: bad.Error()}
	if c.hasOlder {
		r, buf, bad, err = readLiveAlt(old, c.older, buf)
		if err != nil {
			return carried{}, buf, err
		}
		// An older version that decayed since it was found is no
		// version to go back to: it is left behind like any damaged
		// record that is not live.
		if bad == nil {
			if r.kind == kindBody { // an alias (alias.go): a put of k again
				r.key, r.seq = k.appendTo(nil), c.olderSeq
			}
			r.kind = kindPut
			rec := appendRecord(nil, &r)
			out.older, out.hasOlder, out.olderSeq = entry{off: w.pos(), size: uint32(len(rec)), vsum: c.older.vsum}, true, c.olderSeq
			if err := w.write(rec); err != nil {
				return carried{}, buf, fmt.Errorf("write %s: %w", compactName, err)
			}
		}
	}
	out.e = entry{off: w.pos(), size: c.e.size, vsum: c.e.vsum}
	if err := w.write(damaged); err != nil {
		return carried{}, buf, fmt.Errorf("write %s: %w", compactName, err)
	}
	nix.put(k, out.e)
	return out, buf, nil
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
