package blazedb

import (
	"errors"
	"fmt"
)

// Check verifies the database: it rebuilds an index by scanning the whole
// log, compares it with the index in use, and reads and verifies every live
// record. Damage skipped at Open does not count against it. It returns an
// error wrapping ErrCorrupt describing the first problem of each kind.
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
	if res.end != end {
		errs = append(errs, corruptf(logName, res.end, "the log's last %d bytes do not decode", end-res.end))
	}
	if d := snap.diff(scanned); d != "" {
		errs = append(errs, fmt.Errorf("%w: the index does not match a scan of the log: %s", ErrCorrupt, d))
	}
	snap.each(func(k rkey, e entry) bool {
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
