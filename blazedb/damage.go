package blazedb

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Damaged live records and compaction.
//
// A live record whose bytes no longer verify (decay after index.dat was
// written, so Open never scanned it) cannot be copied as a put, and it
// must not be dropped: its bytes are the only copy of the key's newest
// version, and going back to an older one is a choice that belongs to
// whoever runs Repair, not to a background task. So compaction carries it:
//
//   - it copies the damaged record as it is, byte for byte, and the new
//     index points at the copy, so the key reads as before (ErrCorrupt,
//     naming the offset) and Check and Repair find it as before;
//   - just before it, it copies the key's newest intact version older than
//     the damaged one, when the log holds one, so that Repair can still go
//     back to it (and a scan of the new log, should index.dat be lost,
//     falls back to it past the damage, as Open does with decay);
//   - it remembers both (carried), and the damage is reported on and on:
//     by every Sync, Compact and Close, by Maintain after each compaction
//     that carried it, in a log line at each such compaction, and in
//     Stats.DamagedKeys, until the key is written, deleted or repaired.
//
// Everything else compacts as usual, so the log stays bounded around the
// damage. The first compaction to meet a damaged record finds the older
// versions with one scan of the log; later ones take them from what the
// previous one carried.

// carried is a damaged live record compaction carries, and the newest
// intact older version of its key it keeps beside it.
type carried struct {
	e        entry  // the damaged record
	reason   string // why it does not verify
	older    entry  // the older version, when hasOlder
	hasOlder bool
	// olderSeq is the older version's sequence number: a body (alias.go)
	// holds none, and is carried as a put of the key with this one.
	olderSeq uint64
}

// carriedSet is what the compaction that wrote log generation gen
// carried, keyed by key. Never modified once published.
type carriedSet struct {
	gen  uint64
	recs map[rkey]carried
}

// standingDamage returns the records of cs that are still live in ix, the
// index of log generation gen, in log order: a key written or deleted
// since no longer points at its damaged record.
func standingDamage(cs *carriedSet, ix *index, gen uint64) []carriedKey {
	if cs == nil || cs.gen != gen {
		return nil
	}
	var out []carriedKey
	for k, c := range cs.recs {
		if e, ok := ix.get(k); ok && e == c.e {
			out = append(out, carriedKey{k, c})
		}
	}
	slices.SortFunc(out, func(a, b carriedKey) int { return cmp.Compare(a.c.e.off, b.c.e.off) })
	return out
}

type carriedKey struct {
	k rkey
	c carried
}

// maxDamageNamed is how many damaged records an error names one by one.
const maxDamageNamed = 8

// damageErr returns the standing damage report: an error wrapping
// ErrCorrupt for each damaged live record compaction carries (the first
// few named), or nil.
func (db *DB) damageErr() error {
	db.mu.RLock()
	if db.log == nil {
		db.mu.RUnlock()
		return nil
	}
	d := standingDamage(db.carried.Load(), db.idx, db.log.gen)
	db.mu.RUnlock()
	return damageError(d)
}

// damageReport is the standing damage report: one *CorruptionError for
// each damaged live record named, joined. It wraps ErrCorrupt.
type damageReport struct{ err error }

func (r *damageReport) Error() string { return r.err.Error() }
func (r *damageReport) Unwrap() error { return r.err }

// IsDamageReport reports whether err, returned by Sync, Compact, Maintain
// or Close, holds nothing but the report of damaged live records that
// compaction carries as they are (see Stats.DamagedKeys): the call itself
// did all it had to (Sync made the writes durable, Close closed the
// database cleanly), and the records stay damaged until Repair mends them.
func IsDamageReport(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *damageReport:
		return true
	case interface{ Unwrap() []error }:
		for _, x := range e.Unwrap() {
			if !IsDamageReport(x) {
				return false
			}
		}
		return len(e.Unwrap()) > 0
	}
	return IsDamageReport(errors.Unwrap(err))
}

func damageError(d []carriedKey) error {
	if len(d) == 0 {
		return nil
	}
	return &damageReport{damageErrors(d)}
}

func damageErrors(d []carriedKey) error {
	var errs []error
	for i, ck := range d {
		if i == maxDamageNamed {
			errs = append(errs, fmt.Errorf("%w: and %d more damaged live records", ErrCorrupt, len(d)-i))
			break
		}
		back := "it has no intact older version, so Repair (blaze repair) deletes the key"
		if ck.c.hasOlder {
			back = "its newest intact older version is kept beside it, and Repair (blaze repair) puts the key back at that"
		}
		errs = append(errs, corruptf(logName, ck.c.e.off, "the live record of %v is damaged (%s): compaction keeps it as it is, so reads of it fail; %s", ck.k, ck.c.reason, back))
	}
	return errors.Join(errs...)
}

// findOlder sets, for each record of bad, the newest version of its key
// written before it that reads intact, from one scan of l up to end.
func findOlder(l *logFile, end int64, bad map[rkey]carried) error {
	offs := make(map[rkey]int64, len(bad))
	for k, c := range bad {
		offs[k] = c.e.off
	}
	older, _, err := olderVersions(l, end, offs)
	if err != nil {
		return err
	}
	for k, v := range older {
		c := bad[k]
		c.older, c.hasOlder, c.olderSeq = v.entry(), true, v.seq
		bad[k] = c
	}
	return nil
}

// olderVersions returns, for each key of bad, the newest version written
// before the offset bad gives it whose value reads intact, from a scan of
// l up to end, and the damage the scan passed over. Later puts replace
// earlier ones and a delete forgets them; the scan passes over records
// damaged outright, and a whole record whose value does not verify is
// passed over here.
func olderVersions(l *logFile, end int64, bad map[rkey]int64) (map[rkey]version, []CorruptRegion, error) {
	older := map[rkey]version{}
	res, err := scanLog(l.f, fileHeaderSize, end, false, func(off int64, r *record) error {
		if r.kind == kindAliases {
			// The keys an alias list names hold its bodies from the
			// list on (alias.go): a version like any put's.
			a, err := readAliasList(off, r)
			if err != nil {
				return err
			}
			for _, ak := range a.keys {
				k := rkey{chunk: ak.k}
				if d, ok := bad[k]; ok && off < d {
					bd := a.bodies[ak.body]
					older[k] = version{seq: ak.seq, off: bd.first, size: bd.size, vsum: bd.vsum}
				}
			}
			return nil
		}
		return eachEntry(off, r, func(at int64, k rkey, e *record) error {
			if d, ok := bad[k]; !ok || at >= d {
				return nil
			}
			if e.kind == kindDelete || e.kind == kindBatchDelete {
				delete(older, k)
			} else if _, err := e.rawValue(); err == nil {
				older[k] = version{seq: e.seq, off: at, size: uint32(e.size()), vsum: e.vsum}
			}
			return nil
		})
	})
	if err != nil {
		return nil, nil, err
	}
	// A version that does not read as a read reads it is no better than
	// none.
	for k, v := range maps.Clone(older) {
		if _, err := readEntry(l, v.entry(), k.appendTo(nil), nil, true); errors.Is(err, ErrCorrupt) {
			delete(older, k)
		} else if err != nil {
			return nil, nil, err
		}
	}
	return older, res.corrupt, nil
}
