package blazedb

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// Repair mends damage in live records: the damage Check reports and reads
// return as ErrCorrupt. Open sees damage only in the part of the log it
// scans, so a record damaged after index.dat was written (a failing disk,
// a bad copy) stays live and unreadable; compaction carries it as it is,
// with the key's newest intact older version beside it (damage.go), and
// reports it until Repair mends it.
//
// Repair opens the database in dir read-write and reads every live record.
// A key whose newest record is damaged is put back at its newest intact
// version written before it, found by a scan of the log, or deleted when
// there is none; the old version is appended as a new record, so every
// step is an ordinary write and a crash leaves a database Repair can be
// run on again. Then, when anything was damaged (including stretches Open
// itself skipped), it compacts, which leaves the damaged bytes behind.
// Like a scan at Open, it can only go back to versions the log still
// holds: a key whose damaged record was a delete keeps its last value.
//
// Durable data lost (ErrDurableLoss: the log is shorter than index.dat
// shows was durable, or gone: lostlog.go) is accepted and named in the
// report: each key that lost its newest durable state keeps the older
// version the log still holds, or is gone, except that a key index.dat
// had deleted (the delete was lost, and an older version came back) is
// deleted again.
func Repair(dir string, opts Options) (*RepairReport, error) {
	if opts.ReadOnly {
		return nil, fmt.Errorf("blazedb: repair %s: %w", dir, ErrReadOnly)
	}
	// Open would make a new database where there is none to repair.
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if !exists(o.FS, dir) {
		return nil, fmt.Errorf("blazedb: repair %s: no %s: %w", dir, logName, vfs.ErrNotExist)
	}
	// A compaction of its own starting before the damage is mended would
	// fail on it, and its error would be the next Compact's.
	opts.DisableAutoCompaction = true
	// Durable bytes the log no longer holds cannot be brought back: Repair
	// gives up the keys they cost, and names them (RepairReport.Lost).
	opts.AcceptDurableLoss = true
	rebuilt, err := rebuildHeader(dir, o)
	if err != nil {
		return nil, fmt.Errorf("blazedb: repair %s: %w", dir, err)
	}
	db, err := Open(dir, opts)
	if err != nil {
		return nil, err
	}
	db.repairing.Store(true)
	rep, err := db.repair()
	if rebuilt != "" {
		rep.Header, rep.HeaderRebuilt = rebuilt, true
	}
	if err = errors.Join(err, db.Close()); err != nil {
		return rep, fmt.Errorf("blazedb: repair %s: %w", dir, err)
	}
	return rep, nil
}

// RepairReport says what Repair found and did. Like Repaired, it is a
// plain value that nothing else refers to, safe to use from any goroutine.
type RepairReport struct {
	// Skipped is the damage Open skipped while scanning (Recovery.Corrupt):
	// the keys written there had already fallen back to older versions.
	Skipped []CorruptRegion
	// Found is the damage a scan of the whole log found, live or not:
	// damage in old versions harms nothing until index.dat is lost and a
	// scan must find its way past it.
	Found []CorruptRegion
	// Keys are the live keys whose newest record was damaged, in key order.
	Keys []Repaired
	// OldVersions counts the damaged older versions the history held
	// (history.go): the compaction drops them and raises the history floor
	// past them.
	OldVersions int
	// LostBytes and Lost are the durable data Open found lost
	// (Recovery.LostBytes, Recovery.Lost): the keys Repair gave up, each
	// left at the older version the log still had, or gone.
	LostBytes int64
	Lost      []LostKey
	// Header is Recovery.HeaderDamage: a damaged header, which Open
	// rewrote from its copy, or a damaged copy, which the compaction
	// replaced; or, when HeaderRebuilt, how a header neither copy held
	// was rebuilt from the records (header.go).
	Header        string
	HeaderRebuilt bool
	// Compacted reports that the log was rewritten without the damage.
	Compacted bool
}

// Repaired is a key whose newest record was damaged: a plain value, safe to
// copy and to use from any goroutine.
type Repaired struct {
	Key   Key    // the chunk key, unless Named
	Name  string // the named key, if Named
	Named bool
	// Err is what reading the damaged record found.
	Err error
	// Restored is true when the key now holds its newest intact older
	// version, false when it was deleted (no intact version was left).
	Restored bool
}

func (db *DB) repair() (*RepairReport, error) {
	rep := &RepairReport{Skipped: slices.Clone(db.recovery.Corrupt), LostBytes: db.recovery.LostBytes, Lost: slices.Clone(db.recovery.Lost), Header: db.recovery.HeaderDamage}
	found, scanned, err := db.damagedKeys()
	if err != nil {
		return rep, err
	}
	rep.Found = scanned
	for _, k := range rep.Lost {
		if !k.Revived {
			continue
		}
		if k.Named {
			err = db.DeleteNamed(k.Name)
		} else {
			err = db.Delete(k.Key)
		}
		if err != nil {
			return rep, fmt.Errorf("repair: delete %v again: %w", k, err)
		}
	}
	for _, d := range found {
		r := Repaired{Key: d.k.chunk, Name: d.k.name, Named: d.k.named, Err: d.err, Restored: d.restore}
		switch {
		case d.restore && d.k.named:
			err = db.PutNamed(d.k.name, d.older)
		case d.restore:
			err = db.Put(d.k.chunk, d.older)
		case d.k.named:
			err = db.DeleteNamed(d.k.name)
		default:
			err = db.Delete(d.k.chunk)
		}
		if err != nil {
			return rep, fmt.Errorf("repair %v: %w", d.k, err)
		}
		rep.Keys = append(rep.Keys, r)
	}
	if rep.OldVersions, err = db.damagedHistory(); err != nil {
		return rep, err
	}
	if len(rep.Keys) > 0 || len(rep.Skipped) > 0 || len(rep.Found) > 0 || rep.LostBytes > 0 || rep.Header != "" || rep.OldVersions > 0 {
		if err := db.Compact(); err != nil {
			return rep, err
		}
		rep.Compacted = true
	}
	return rep, nil
}

// damage is a live key whose record does not read, and its newest intact
// older value, if one is left (restore).
type damage struct {
	k       rkey
	err     error
	older   []byte
	restore bool
}

// damagedKeys reads every live record and, for each one that fails, finds
// the newest intact version of its key written before it, in a scan of the
// whole log that also returns the damage it met.
func (db *DB) damagedKeys() ([]damage, []CorruptRegion, error) {
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	l, snap, end, _, err := db.snapshot()
	if err != nil {
		return nil, nil, err
	}
	defer l.refs.Done()
	bad := map[rkey]int64{}
	var found []damage
	snap.each(func(k rkey, e entry) bool {
		if _, err := readEntry(l, e, k.appendTo(nil), nil, true); err != nil {
			bad[k] = e.off
			found = append(found, damage{k: k, err: err})
		}
		return true
	})
	older, corrupt, err := olderVersions(l, end, bad)
	if err != nil {
		return nil, nil, err
	}
	for i := range found {
		if o, ok := older[found[i].k]; ok {
			v, err := readEntry(l, o.entry(), found[i].k.appendTo(nil), nil, true)
			if err != nil {
				return nil, nil, err
			}
			found[i].older, found[i].restore = v, true
		}
	}
	slices.SortFunc(found, func(a, b damage) int { return cmp.Compare(a.k.String(), b.k.String()) })
	return found, corrupt, nil
}
