package blazedb

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Compaction with history (history.go). The new log is laid out as
//
//	header | time marks still needed | history records | live records |
//	records appended meanwhile | time marks of the copy | sync mark
//
// History records are the versions of each key that reads at the new
// floor or at a snapshot's point still need, oldest first, keys in index
// order: puts re-framed as top-level puts, deletions as delete records,
// each keeping its sequence number. They come before every live record,
// so a scan meets each key's versions in sequence order and rebuilds the
// same chains (the live records staying together in key order, as reads
// of neighbours want). A time mark written by compaction claims as durable
// only bytes before it, which the whole file is once it is installed.

// historyCopy is the history side of one compaction.
type historyCopy struct {
	src     *history // the history of the index being compacted
	floor   uint64   // the new floor
	keys    []rkey   // keys whose chains survive, in index order
	keep    map[rkey][]bool
	nh      *history // the new log's
	npoints int      // points src held at the snapshot
}

// historyCopy decides what compaction of snap keeps at now and gives nix
// the history it builds.
func (db *DB) historyCopy(snap, nix *index, now time.Time) *historyCopy {
	src := snap.hist
	if src == nil {
		src = newHistory()
	}
	hc := &historyCopy{src: src, floor: db.horizon(src, now), keep: map[rkey][]bool{}, nh: newHistory(), npoints: len(src.points)}
	pins := src.pinList()
	for k, c := range src.chains.all() {
		if keep, ok := keepVersions(c, hc.floor, pins); ok {
			hc.keys = append(hc.keys, k)
			hc.keep[k] = keep
		}
	}
	slices.SortFunc(hc.keys, compareRkey)
	for n, p := range src.pins {
		hc.nh.pins[n] = p
	}
	hc.nh.floor, hc.nh.next, hc.nh.off = hc.floor, src.next, db.opts.History < 0
	nix.hist = hc.nh
	return hc
}

// writeHistory writes the time marks and history records kept into w,
// the records as rc rewrites them.
func (hc *historyCopy) writeHistory(db *DB, old *logFile, w *appender, rc *recompressor) error {
	for _, p := range trimPoints(hc.src.points, hc.floor) {
		if err := w.write(appendTimeMark(nil, w.pos(), p, hc.floor)); err != nil {
			return fmt.Errorf("write %s: %w", compactName, err)
		}
		hc.nh.addPoint(p)
	}
	var buf, out []byte
	for _, k := range hc.keys {
		if db.stopping.Load() {
			return errAborted
		}
		c, _ := hc.src.chains.get(k)
		keep := hc.keep[k]
		for i, v := range c {
			if !keep[i] || (i == len(c)-1 && !v.deleted()) {
				continue // dropped, or live (copied with the live records)
			}
			at := w.pos()
			if v.deleted() {
				out = appendRecord(out[:0], &record{seq: v.seq, kind: kindDelete, key: k.appendTo(nil)})
				hc.nh.appendVersion(k, version{seq: v.seq, off: -1, size: uint32(len(out))})
			} else {
				var r record
				var err error
				r, buf, err = readVersion(old, v, buf)
				if err != nil && !isDecodeErr(err) && !errors.Is(err, errNotPut) {
					return err
				}
				if err == nil && r.kind == kindBody {
					// A version that was an alias (alias.go): a put of
					// its key again.
					r.key, r.seq = k.appendTo(nil), v.seq
				}
				if err == nil && db.repairing.Load() {
					_, err = r.rawValue() // Repair verifies values as Check does
				}
				if err != nil && db.repairing.Load() {
					// Repair drops it, and raises the floor past it so that
					// no read but a snapshot's can miss it.
					if i+1 < len(c) {
						hc.floor = max(hc.floor, c[i+1].seq+1)
					}
					db.opts.Logger.Warn("blazedb: repair dropped a damaged old version; reads before it fail with ErrHistory",
						"dir", db.dir, "key", k.String(), "seq", v.seq, "offset", v.off, "err", err)
					for name, p := range hc.src.pins {
						if p > v.seq && (i+1 == len(c) || p <= c[i+1].seq) {
							db.opts.Logger.Warn("blazedb: a snapshot read the damaged version dropped; it now reads the version before it for this key",
								"dir", db.dir, "snapshot", name, "key", k.String())
						}
					}
					continue
				}
				if err != nil {
					return corruptf(logName, v.off, "a version of %v the history keeps cannot be compacted (Repair, or blaze repair, drops it): %v", k, err)
				}
				r.kind = kindPut
				if nr, ok := rc.rewrite(k, &r); ok {
					r = nr
				}
				out = appendRecord(out[:0], &r)
				hc.nh.appendVersion(k, version{seq: r.seq, off: at, size: uint32(len(out)), vsum: r.vsum})
			}
			if err := w.write(out); err != nil {
				return fmt.Errorf("write %s: %w", compactName, err)
			}
		}
	}
	return nil
}

// addLive appends to the kept chains their live versions, once the live
// records are copied into nix.
func (hc *historyCopy) addLive(nix *index) {
	for _, k := range hc.keys {
		c, _ := hc.src.chains.get(k)
		last := c[len(c)-1]
		if last.deleted() {
			continue
		}
		if e, ok := nix.get(k); ok {
			hc.nh.appendVersion(k, version{seq: last.seq, off: e.off, size: e.size, vsum: e.vsum})
		}
	}
}

// finish writes, under the write lock, the time marks added since the
// snapshot (cur is the history in use) and one for now, whose point is
// next, and completes the new history.
func (hc *historyCopy) finish(cur *history, next uint64, w *appender) error {
	var tail []timePoint
	if cur != nil && len(cur.points) >= hc.npoints {
		tail = cur.points[hc.npoints:]
	}
	for _, p := range append(slices.Clone(tail), timePoint{seq: next, at: time.Now().UnixNano()}) {
		if err := w.write(appendTimeMark(nil, w.pos(), p, hc.floor)); err != nil {
			return fmt.Errorf("write %s: %w", compactName, err)
		}
		hc.nh.addPoint(p)
	}
	hc.nh.next = max(hc.nh.next, next)
	hc.nh.floor = max(hc.nh.floor, hc.floor)
	hc.nh.recount()
	return nil
}

// errNotPut: a version the history keeps is a record of another kind.
var errNotPut = errors.New("not a put")

// readVersion reads and decodes the record of v, a version of a key, into
// buf (scratch space, returned for reuse): a put, or a body (alias.go),
// from its second copy when the first does not decode. A failed read is
// returned as it is; bytes that do not decode as a decode error.
func readVersion(old *logFile, v version, buf []byte) (record, []byte, error) {
	read := func(off int64) (record, error) {
		if cap(buf) < int(v.size) {
			buf = make([]byte, v.size)
		}
		buf = buf[:v.size]
		if n, err := old.f.ReadAt(buf, off); n < len(buf) {
			return record{}, fmt.Errorf("read %s at %d: %w", logName, off, err)
		}
		r, _, err := decodeRecord(buf, buf[16]&0x80 == 0)
		if err == nil && r.kind != kindPut && r.kind != kindBatchPut && r.kind != kindBody {
			err = fmt.Errorf("%w: record of kind %#x", errNotPut, r.kind)
		}
		return r, err
	}
	r, err := read(v.off)
	if second, ok := old.alt[v.off]; ok && err != nil && isDecodeErr(err) {
		if r2, err2 := read(second); err2 == nil {
			return r2, buf, nil
		}
		r, err = read(v.off) // buf holds the first copy again, as reported
	}
	return r, buf, err
}
