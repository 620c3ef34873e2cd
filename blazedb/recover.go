package blazedb

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// Recovery reports what Open found and did. DB.Recovery returns a copy of
// its own each call (with CorruptRegion values), which nothing else refers
// to: the caller may use it from any goroutine.
type Recovery struct {
	// IndexLoaded is true when index.dat was used; IndexProblem says why
	// it was not (missing, damaged, made for another log generation, stale).
	IndexLoaded  bool
	IndexProblem string
	// ScannedBytes and ScannedRecords count the log replayed by scanning.
	ScannedBytes   int64
	ScannedRecords int
	// Corrupt lists damaged regions in the middle of the log that were
	// durable (a later sync mark says so) and were skipped. Keys whose
	// newest record lay there fall back to their previous valid version.
	Corrupt []CorruptRegion
	// TornBytes is the length of the torn tail: from the first damage that
	// was never durable to the end, whole records after it included, as a
	// crash left them unsynced. Cut in a read-write open, ignored in a
	// read-only one. When LostBytes is set, the tail includes bytes that
	// were durable.
	TornBytes int64
	// HeaderDamage says why the header of chunks.dat or its copy (the
	// log's first record) did not decode; "" when
	// both did. One damaged copy costs nothing: the other is used. A
	// read-write open rewrites a damaged header from its copy
	// (HeaderRewritten); a damaged copy goes at the next compaction
	// (Repair compacts).
	HeaderDamage    string
	HeaderRewritten bool
	// LostBytes counts bytes that were durable, as index.dat showed
	// (it covered them, and it is written only over durable bytes), but
	// that the log no longer holds: it is shorter than index.dat covers,
	// or the last part of it does not decode. Open refuses such a
	// database in a read-write open (ErrDurableLoss) unless
	// Options.AcceptDurableLoss is set. Lost names the keys it cost.
	LostBytes int64
	// Lost lists, in key order, every key whose state differs from the
	// durable one index.dat recorded: lost in LostBytes, or whose newest
	// durable record was found damaged by the scan.
	Lost []LostKey
}

// LostKey is a key whose newest durable state is lost (see
// Recovery.Lost): a plain value, safe to copy and to use from any
// goroutine.
type LostKey struct {
	Key   Key    // the chunk key, unless Named
	Name  string // the named key, if Named
	Named bool
	// Older: the key now holds an older version the log still had;
	// otherwise it has none. Revived: index.dat had the key deleted, and
	// the delete is what was lost, so an older version came back.
	Older, Revived bool
}

func (k LostKey) String() string {
	what := k.Key.String()
	if k.Named {
		what = fmt.Sprintf("%q", k.Name)
	}
	switch {
	case k.Revived:
		return what + " (deleted; an older version came back)"
	case k.Older:
		return what + " (back to an older version)"
	}
	return what + " (gone)"
}

// CorruptRegion is a damaged stretch of chunks.dat: a plain value, safe to
// copy and to use from any goroutine.
type CorruptRegion struct {
	Offset, Length int64
	Reason         string
}

// applyRecord applies a top-level record found at off to ix.
func applyRecord(ix *index, off int64, r *record) error {
	switch r.kind {
	case kindBody:
		return nil // its keys are in the alias list after it
	case kindAliases:
		a, err := readAliasList(off, r)
		if err != nil {
			return err
		}
		applyAliases(ix, a, true)
		return nil
	}
	return eachEntry(off, r, func(at int64, k rkey, e *record) error {
		if e.kind == kindDelete || e.kind == kindBatchDelete {
			ix.delAt(k, e.seq, uint32(e.size()))
		} else {
			ix.putAt(k, entry{off: at, size: uint32(e.size()), vsum: e.vsum}, e.seq)
		}
		return nil
	})
}

// eachEntry calls fn for the put or delete r is, or for each one of a
// batch, with its offset in the log and its key.
func eachEntry(off int64, r *record, fn func(at int64, k rkey, e *record) error) error {
	if r.kind == kindBody || r.kind == kindAliases {
		return nil // no key of their own (alias.go)
	}
	one := func(at int64, e *record) error {
		k, err := parseKey(e.key)
		if err != nil {
			return corruptf(logName, at, "%v", err)
		}
		return fn(at, k, e)
	}
	if r.kind != kindBatch {
		return one(off, r)
	}
	return forEachEntry(r.value, func(eo int, e record) error {
		return one(off+recHeaderSize+int64(eo), &e)
	})
}

// recovered is what recoverIndex found.
type recovered struct {
	ix      *index
	end     int64 // end of the log's last valid record
	nextSeq uint64
	marks   int64 // bytes of sync marks known to be in the log
	// endMarked: the last record is a sync mark saying all before it is
	// durable, as Close and compaction leave a log.
	endMarked bool
}

// recoverIndex builds the index for a log of the given size: from
// index.dat when it is valid for this log, then by replaying what follows.
// In a read-write open a torn tail is cut (and the cut synced).
//
// index.dat is evidence as well as an accelerator: it covers only bytes
// that were durable when it was written. A log shorter than it covers has
// lost durable bytes (a copy cut short, a filesystem that lost the end of
// the file), which no crash explains. Then the whole log is scanned, as
// without index.dat, and each key whose state differs from the one
// index.dat recorded is lost; a read-write open refuses with
// ErrDurableLoss unless Options.AcceptDurableLoss is set, and nothing has
// been changed on disk when it does. A log that was gone and is rebuilt
// as its header alone (db.lostLog, lostlog.go) has lost all index.dat
// covers, its header included.
func (db *DB) recoverIndex(f vfs.File, h fileHeader, size int64) (recovered, error) {
	rec := &db.recovery
	ix, meta, problem := db.loadIndex(h.generation, size)
	from := int64(fileHeaderSize)
	nextSeq := h.baseSeq
	var durable *index // index.dat's entries, when it shows durable bytes lost
	if problem == "" && (meta.covered > size || db.lostLog != nil) {
		durable, ix = ix, nil
		problem = fmt.Sprintf("index.dat covers %d bytes of %s, which were durable when it was written, but the log has %d", meta.covered, logName, size)
		if db.lostLog != nil {
			problem = db.lostLog.problem()
		}
		nextSeq = max(nextSeq, meta.nextSeq)
	}
	if problem == "" {
		rec.IndexLoaded = true
		from = meta.covered
		db.checkpointed.Store(meta.covered)
		nextSeq = max(nextSeq, meta.nextSeq)
	} else {
		rec.IndexProblem = problem
		ix = newIndex()
		if size > fileHeaderSize && durable == nil {
			db.opts.Logger.Info("blazedb: rebuilding the index by scanning the log", "dir", db.dir, "reason", problem)
		}
	}
	ix.ensureHistory()
	res, err := scanLog(f, from, size, true, func(off int64, r *record) error { return applyRecord(ix, off, r) })
	if err != nil {
		return recovered{}, err
	}
	if res.records > 0 {
		nextSeq = max(nextSeq, res.maxSeq+1)
	}
	ix.hist.recovered(res.points, res.floor, nextSeq)
	ix.settle()
	rec.ScannedBytes = size - from
	rec.ScannedRecords = res.records
	rec.Corrupt = res.corrupt
	rec.TornBytes = size - res.end
	if durable != nil {
		rec.LostBytes = meta.covered - res.end
		if db.lostLog != nil {
			rec.LostBytes = meta.covered // the header was lost too, and rebuilt
		}
		rec.Lost = lostKeys(durable, ix)
		if err := db.reportLoss(meta.covered); err != nil {
			return recovered{}, err
		}
	}
	for _, c := range res.corrupt {
		db.opts.Logger.Warn("blazedb: skipped a damaged region of the log; its keys fall back to their previous versions",
			"dir", db.dir, "offset", c.Offset, "length", c.Length, "reason", c.Reason)
	}
	if rec.TornBytes > 0 {
		if db.opts.ReadOnly {
			db.opts.Logger.Warn("blazedb: ignoring a torn tail (read-only open)", "dir", db.dir, "offset", res.end, "length", rec.TornBytes)
		} else {
			db.opts.Logger.Warn("blazedb: cutting a torn tail left by a crash", "dir", db.dir, "offset", res.end, "length", rec.TornBytes)
			if err := f.Truncate(res.end); err != nil {
				return recovered{}, fmt.Errorf("cut torn tail: %w", err)
			}
		}
	}
	marked, err := endsInMark(f, res.end)
	if err != nil {
		return recovered{}, err
	}
	out := recovered{ix: ix, end: res.end, nextSeq: nextSeq, marks: res.marks, endMarked: marked}
	if out.endMarked && res.end-markSize < from {
		out.marks += markSize // in the part index.dat covers, so not scanned
	}
	if from > fileHeaderSize {
		out.marks += headerCopySize // likewise
	}
	return out, nil
}

// reportLoss reports the durable loss db.recovery describes: an error
// (ErrDurableLoss) for a read-write open that does not accept it, else a
// log entry at error level. Accepted in a read-write open, index.dat goes
// (durably) before the log is cut, so that it is not taken for evidence
// of a loss that was accepted; the next Open after a crash scans instead.
func (db *DB) reportLoss(covered int64) error {
	rec := &db.recovery
	keys := make([]string, 0, min(len(rec.Lost), 10))
	for _, k := range rec.Lost[:min(len(rec.Lost), 10)] {
		keys = append(keys, k.String())
	}
	list := strings.Join(keys, ", ")
	if len(rec.Lost) > len(keys) {
		list += fmt.Sprintf(" and %d more", len(rec.Lost)-len(keys))
	}
	what := fmt.Sprintf("%d of the %d bytes of %s that index.dat shows were durable are missing or do not decode; %d keys lost their newest durable state", rec.LostBytes, covered, logName, len(rec.Lost))
	if db.lostLog != nil {
		what = db.lostLog.reason + ": " + what
	}
	if len(rec.Lost) > 0 {
		what += ": " + list
	}
	if !db.opts.ReadOnly && !db.opts.AcceptDurableLoss {
		return fmt.Errorf("%w: %s (Options.AcceptDurableLoss opens it without them; blaze repair does, and names them)", ErrDurableLoss, what)
	}
	db.opts.Logger.Error("blazedb: durable data lost", "dir", db.dir, "lost", what)
	if db.opts.ReadOnly {
		return nil
	}
	if err := db.fs.Remove(db.path(indexName)); err != nil && !errors.Is(err, vfs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", indexName, err)
	}
	if err := db.fs.SyncDir(db.dir); err != nil {
		return fmt.Errorf("remove %s: %w", indexName, err)
	}
	return nil
}

// lostKeys compares the index recovered by a scan with the durable one
// index.dat recorded and returns every key whose state differs, in key
// order.
func lostKeys(durable, now *index) []LostKey {
	var lost []LostKey
	add := func(k rkey, older, revived bool) {
		lost = append(lost, LostKey{Key: k.chunk, Name: k.name, Named: k.named, Older: older, Revived: revived})
	}
	durable.each(func(k rkey, e entry) bool {
		if cur, ok := now.get(k); !ok {
			add(k, false, false)
		} else if cur != e {
			add(k, true, false)
		}
		return true
	})
	now.each(func(k rkey, _ entry) bool {
		if _, ok := durable.get(k); !ok {
			add(k, true, true)
		}
		return true
	})
	slices.SortFunc(lost, compareLost)
	return lost
}

// compareLost orders lost keys as Keys does: chunk keys by dimension, X
// and Z, then named keys by name.
func compareLost(a, b LostKey) int {
	if a.Named != b.Named {
		if a.Named {
			return 1
		}
		return -1
	}
	return cmp.Or(cmp.Compare(a.Key.Dim, b.Key.Dim), cmp.Compare(a.Key.X, b.Key.X), cmp.Compare(a.Key.Z, b.Key.Z), cmp.Compare(a.Name, b.Name))
}

// endsInMark reports whether the log's last record is a sync mark saying
// everything before it is durable.
func endsInMark(f vfs.File, end int64) (bool, error) {
	if end < fileHeaderSize+markSize {
		return false, nil
	}
	b := make([]byte, markSize)
	if _, err := f.ReadAt(b, end-markSize); err != nil {
		// The scan has just read these bytes, so even io.EOF is a failure.
		return false, fmt.Errorf("read %s at %d: %w", logName, end-markSize, err)
	}
	r, _, err := decodeRecord(b, true)
	return err == nil && r.kind == kindMark && r.markValue() == end-markSize, nil
}

// loadIndex reads index.dat and returns it if it describes this log
// generation; else the reason it cannot be used. The caller checks that it
// covers no more than the log holds.
func (db *DB) loadIndex(gen uint64, size int64) (*index, indexMeta, string) {
	b, err := vfs.ReadFile(db.fs, filepath.Join(db.dir, indexName))
	if err != nil {
		if errors.Is(err, vfs.ErrNotExist) {
			return nil, indexMeta{}, "index.dat is missing"
		}
		return nil, indexMeta{}, err.Error()
	}
	ix, meta, err := decodeIndex(b)
	switch {
	case err != nil:
		return nil, meta, err.Error()
	case meta.generation != gen:
		return nil, meta, fmt.Sprintf("index.dat describes log generation %d, the log is generation %d", meta.generation, gen)
	}
	return ix, meta, ""
}
