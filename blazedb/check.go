package blazedb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Check verifies the database: it rebuilds an index by scanning the whole
// log, compares it with the index in use, and reads and verifies every live
// record. Every damaged stretch the scan passes over is reported, with the
// keys the damaged records' headers name and where each of those keys
// stands now, for as long as the bytes are in chunks.dat: damage that Open
// skipped (Recovery.Corrupt), in this open or an earlier one whose
// index.dat now covers it, counts until compaction or Repair drops it. A
// stretch a scan must pass over is a risk while it stays: should index.dat
// be lost, an Open after a crash may take it for a torn tail and cut
// everything after it. Check returns an error wrapping ErrCorrupt that
// names each damaged stretch and the first problem of every other kind.
// Writes continue while it runs; compaction waits for it.
func (db *DB) Check() error {
	if db.closed.Load() {
		return ErrClosed
	}
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	l, snap, end, _, err := db.snapshot()
	if err != nil {
		return err
	}
	defer l.refs.Done()

	scanned := newIndex()
	res, err := scanLog(l.f, fileHeaderSize, end, false, func(off int64, r *record) error { return applyRecord(scanned, off, r) })
	if err != nil {
		return fmt.Errorf("blazedb: check: %w", err)
	}
	var errs []error
	for _, c := range res.corrupt {
		errs = append(errs, corruptf(logName, c.Offset, "%d damaged bytes, which stay in the log until Repair drops them, or compaction once no key points there (%s)%s",
			c.Length, c.Reason, damagedKeys(l, snap, c)))
	}
	if res.end != end {
		errs = append(errs, corruptf(logName, res.end, "the log's last %d bytes do not decode", end-res.end))
	}
	if len(res.corrupt) > 0 {
		// A live record in a damaged stretch (compaction carries one as
		// it is: damage.go) is named with the stretch; the scan passed
		// over it, which is no fault of the index.
		snap.each(func(k rkey, e entry) bool {
			if inRegion(res.corrupt, e.off) {
				scanned.put(k, e)
			}
			return true
		})
	}
	if d := snap.diff(scanned); d != "" {
		errs = append(errs, fmt.Errorf("%w: the index does not match a scan of the log: %s", ErrCorrupt, d))
	}
	snap.each(func(k rkey, e entry) bool {
		if inRegion(res.corrupt, e.off) {
			return true // named with its stretch above
		}
		if _, err := readEntry(l, e, k.appendTo(nil), nil, true); err != nil {
			errs = append(errs, fmt.Errorf("key %v: %w", k, err))
			return false
		}
		return true
	})
	errs = append(errs, checkHistory(l, snap)...) // older versions (history.go)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("blazedb: check: %w", err)
	}
	return nil
}

// inRegion reports whether off lies in one of the regions.
func inRegion(regions []CorruptRegion, off int64) bool {
	for _, c := range regions {
		if off >= c.Offset && off < c.Offset+c.Length {
			return true
		}
	}
	return false
}

// maxNamedRegion is the most of a damaged stretch damagedKeys reads for
// the keys its record names: a batch's entries are spread over its body.
const maxNamedRegion = 16 << 20

// damagedKeys describes, for a report, the keys that the damaged records in
// c name, and where each stands in ix: still pointing into the damaged
// bytes (its reads fail), fallen back to an older version, written again
// since, or without a value. The bytes failed their checksum, so what they
// name is unverified, and said to be: keys are named only when the
// stretch is a run of well-formed record headers whose lengths span it
// exactly (a batch's entries likewise), which flipped bytes in values
// leave true and a damaged header almost never does. Otherwise the
// stretch is reported without keys.
func damagedKeys(l *logFile, ix *index, c CorruptRegion) string {
	const unnamed = "; the keys written there cannot be read from it"
	b := make([]byte, min(c.Length, maxNamedRegion))
	if m, err := l.f.ReadAt(b, c.Offset); m < len(b) {
		return fmt.Sprintf("; it cannot be read again to name its keys (%v)", err)
	}
	var keys []string
	name := func(at int64, h []byte) bool {
		switch h[16] {
		case kindBody: // alias.go
			keys = append(keys, "a copy of a value that several chunk keys hold, which reads take from its other copy")
			return true
		case kindAliases:
			keys = append(keys, "an alias list (the chunk keys that hold such values: index.dat keeps them, and compaction writes the list again)")
			return true
		}
		kl := int(binary.LittleEndian.Uint16(h[18:]))
		if recHeaderSize+kl > len(h) {
			return false
		}
		k, err := parseKey(h[recHeaderSize : recHeaderSize+kl])
		if err != nil {
			return false
		}
		what := k.String()
		if h[16]&0x7f == kindDelete {
			what = "the delete of " + what
		}
		keys = append(keys, what+" "+keyStanding(ix, k, c, at))
		return true
	}
	// A record compaction carries as it is may be a batch's entry
	// (damage.go), so entries are taken at the top level too.
	for p := 0; int64(p) < c.Length; {
		size, err := checkHeader(b[p:], true)
		if err != nil {
			size, err = checkHeader(b[p:], false)
		}
		if err != nil || int64(p+size) > c.Length {
			return unnamed
		}
		if p+size > len(b) {
			return unnamed // longer than is read to name keys
		}
		at := c.Offset + int64(p)
		if b[p+16] != kindBatch {
			if !name(at, b[p:p+size]) {
				return unnamed
			}
		} else {
			body := b[p+recHeaderSize : p+size]
			for q := 0; q < len(body); {
				n, err := checkHeader(body[q:], false)
				if err != nil || q+n > len(body) || !name(at+recHeaderSize+int64(q), body[q:q+n]) {
					keys = append(keys, "and entries that cannot be read")
					break
				}
				q += n
			}
		}
		p += size
	}
	return "; its headers, unverified, name " + strings.Join(keys, ", ")
}

// keyStanding says where k stands in ix, next to the damaged stretch c
// whose record of k lies at at.
func keyStanding(ix *index, k rkey, c CorruptRegion, at int64) string {
	e, ok := ix.get(k)
	switch {
	case !ok:
		return "(now without a value)"
	case e.off == at:
		return "(still live there: its reads fail)"
	case e.off < c.Offset:
		return "(fell back to an older version)"
	default:
		return "(written again since)"
	}
}
