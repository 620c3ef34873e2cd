package blazedb

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// window reads a file sequentially through a large buffer, so a scan costs
// one read per few MiB rather than two per record.
type window struct {
	f       vfs.File
	end     int64
	base    int64
	buf     []byte
	decodes int // calls of decodeAt
}

const windowSize = 4 << 20

// at returns up to n bytes at off (fewer only at the end of the scanned
// range). The slice is valid until the next call.
func (w *window) at(off int64, n int) ([]byte, error) {
	if rem := w.end - off; int64(n) > rem {
		n = int(max(rem, 0))
	}
	if off >= w.base && off+int64(n) <= w.base+int64(len(w.buf)) {
		return w.buf[off-w.base : off-w.base+int64(n)], nil
	}
	size := int64(max(n, windowSize))
	if rem := w.end - off; size > rem {
		size = rem
	}
	if int64(cap(w.buf)) < size {
		w.buf = make([]byte, size)
	}
	w.buf = w.buf[:size]
	m, err := w.f.ReadAt(w.buf, off)
	if int64(m) < size {
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("%s ends at %d, before %d", logName, off+int64(m), off+size)
		}
		w.buf = w.buf[:0]
		return nil, fmt.Errorf("read %s at %d: %w", logName, off, err)
	}
	w.base = off
	return w.buf[:n], nil
}

// decodeAt decodes the top-level record at off. A header whose record
// would run past the end of the range is short without reading its body: a
// resync tries every offset of a damaged stretch, and the bytes it tries
// may claim a body of hundreds of MiB.
func (w *window) decodeAt(off int64) (record, int, error) {
	w.decodes++
	h, err := w.at(off, recHeaderSize)
	if err != nil {
		return record{}, 0, err
	}
	size, err := checkHeader(h, true)
	if err != nil {
		return record{}, 0, err
	}
	if off+int64(size) > w.end {
		return record{}, 0, errShortRecord
	}
	b, err := w.at(off, size)
	if err != nil {
		return record{}, 0, err
	}
	return decodeRecord(b, true)
}

// scanResult is the outcome of scanning a stretch of the log.
type scanResult struct {
	end     int64 // end of the last valid record
	records int   // valid records but sync marks and header copies
	marks   int64 // bytes of valid sync marks and header copies
	corrupt []CorruptRegion
	maxSeq  uint64
	// points and floor are what time marks said (timeline.go).
	points  []timePoint
	floor   uint64
	decodes int // records decoded, or tried at a resync: the scan's cost
}

// isDecodeErr tells damage apart from I/O failure.
func isDecodeErr(err error) bool {
	return errors.Is(err, errBadRecord) || errors.Is(err, errShortRecord)
}

// scanLog decodes the top-level records in [from, end) and calls apply for
// each valid one but sync marks and header copies, in log order. On damage
// it looks for the next offset at which a valid record starts. If there is
// none, the damage is a torn tail and result.end marks where it begins. If
// there is one, the damaged stretch is skipped and reported, unless marks
// is set and no sync mark after it shows it was durable: then it is a write
// a crash left unsynced, and so is everything after it (an fsync covers all
// that was written before it), so the scan ends there as at a torn tail.
// Everything durable survives either way, and what survives of the rest is
// a prefix of the writes. Record slices passed to apply are valid only
// during the call.
//
// The marks after a damaged stretch are learnt once, by one look ahead
// from the first damage to the end (lookAhead), which also notes where
// each later damaged stretch ends; the scan then answers every later
// damage from those notes. A scan thus reads the records after the first
// damage twice at most, however many damaged stretches there are.
func scanLog(f vfs.File, from, end int64, marks bool, apply func(off int64, r *record) error) (scanResult, error) {
	w := &window{f: f, end: end, base: -1}
	res := scanResult{end: from}
	var ahead *lookAhead
	var bodies map[int64]bodySeen // the bodies met (alias.go)
	for off := from; off < end; {
		r, n, err := w.decodeAt(off)
		switch {
		case err == nil && r.kind == kindBody:
			if bodies == nil {
				bodies = map[int64]bodySeen{}
			}
			bodies[off] = bodySeen{size: uint32(n), vsum: r.vsum}
		case err == nil && r.kind == kindAliases:
			// A list that names no body is damage, however well its
			// checksum verifies.
			err = checkAliasList(off, &r, from, bodies, res.corrupt)
		}
		if err == nil {
			if r.kind == kindMark || r.kind == kindHeaderCopy {
				res.marks += int64(n)
				if p, f, ok := r.timeMark(); ok {
					res.points, res.floor = append(res.points, p), max(res.floor, f)
					res.marks -= int64(n) // counted with the history
				}
			} else {
				if err := apply(off, &r); err != nil {
					res.decodes = w.decodes
					return res, err
				}
				res.records++
				res.maxSeq = max(res.maxSeq, r.seq+batchLen(&r))
			}
			off += int64(n)
			res.end = off
			continue
		}
		if !isDecodeErr(err) {
			res.decodes = w.decodes
			return res, err
		}
		next, known := int64(0), false
		if ahead != nil {
			next, known = ahead.skips[off]
		}
		if !known {
			var rerr error
			if next, rerr = resync(w, off+1); rerr != nil {
				res.decodes = w.decodes
				return res, rerr
			}
		}
		if next < 0 {
			break // torn tail: nothing valid follows
		}
		if marks {
			if ahead == nil {
				var aerr error
				if ahead, aerr = scanAhead(w, next); aerr != nil {
					res.decodes = w.decodes
					return res, aerr
				}
			}
			if !ahead.durable(next, off) {
				break
			}
		}
		res.corrupt = append(res.corrupt, CorruptRegion{Offset: off, Length: next - off, Reason: err.Error()})
		off = next
	}
	res.decodes = w.decodes
	return res, nil
}

// lookAhead is what one scan from a damaged stretch to the end of the log
// found: the valid sync marks, and where each damaged stretch it met ends.
type lookAhead struct {
	at    []int64         // offsets of the valid marks, ascending
	most  []int64         // most[i]: the largest value of marks at[i:]
	skips map[int64]int64 // damaged stretch start -> next valid record, or -1
}

// scanAhead scans from the valid record at from to the end of w's range.
func scanAhead(w *window, from int64) (*lookAhead, error) {
	a := &lookAhead{skips: map[int64]int64{}}
	var vals []int64
	for p := from; p < w.end; {
		r, n, err := w.decodeAt(p)
		if err == nil {
			if r.kind == kindMark {
				a.at = append(a.at, p)
				vals = append(vals, r.markValue())
			}
			p += int64(n)
			continue
		}
		if !isDecodeErr(err) {
			return nil, err
		}
		next, err := resync(w, p+1)
		if err != nil {
			return nil, err
		}
		a.skips[p] = next
		if next < 0 {
			break
		}
		p = next
	}
	a.most = make([]int64, len(vals))
	for i := len(vals) - 1; i >= 0; i-- {
		a.most[i] = vals[i]
		if i+1 < len(vals) {
			a.most[i] = max(a.most[i], a.most[i+1])
		}
	}
	return a, nil
}

// durable reports whether a valid sync mark at or after from says the byte
// at off was durable.
func (a *lookAhead) durable(from, off int64) bool {
	i, _ := slices.BinarySearch(a.at, from)
	return i < len(a.at) && a.most[i] > off
}

// batchLen is the number of sequence numbers beyond r.seq a record uses.
func batchLen(r *record) uint64 {
	if r.kind != kindBatch {
		return 0
	}
	var n uint64
	forEachEntry(r.value, func(int, record) error { n++; return nil })
	return n - 1
}

// resync returns the first offset at or after from where a valid top-level
// record starts, or -1. It tries every offset, but decodes (reads and
// sums) only where the bytes hold a plausible header. A plausible header
// found in the damaged bytes may claim a body of many MiB; one claiming
// more than bigCandidate bytes is decoded only when another plausible
// header (or the end of the range) follows where it says it ends, so that
// the scan does not sum the rest of the log at each such false start. A
// real record that large whose successor's header is damaged too is
// passed over with it: a second fault next to the first.
func resync(w *window, from int64) (int64, error) {
	for p := from; p+recHeaderSize <= w.end; p++ {
		h, err := w.at(p, recHeaderSize)
		if err != nil {
			return 0, err
		}
		size, fault := inspectHeader(h, true)
		if fault != headerOK || p+int64(size) > w.end {
			continue
		}
		if next := p + int64(size); size > bigCandidate && next+recHeaderSize <= w.end {
			nh, err := w.at(next, recHeaderSize)
			if err != nil {
				return 0, err
			}
			if !plausibleHeader(nh, true) {
				continue
			}
		}
		if _, _, err := w.decodeAt(p); err == nil {
			return p, nil
		} else if !isDecodeErr(err) {
			return 0, err
		}
	}
	return -1, nil
}

// bigCandidate: see resync.
const bigCandidate = 64 << 10
