package blazedb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A named snapshot is a record of the log itself: a named key in a reserved
// space (snapshotPrefix, then the snapshot's name), whose sequence number
// is the snapshot's point (history.go) and whose value is below. Being a
// record, it rides the log's guarantees: it is written with Sync, so it is
// durable when CreateSnapshot returns, and as recovery keeps a prefix of
// the writes, a snapshot that survives a crash finds every write before it
// surviving too. Compaction copies it as any live record, keeping its
// sequence number, and keeps every version a snapshot's point reads
// (compacthistory.go), so a snapshot reads the same until DeleteSnapshot.
// Backup copies it with the log. A separate file would need its own
// replacement and its own ordering with the log's fsyncs.
//
// Snapshot value:
//
//	+--------+------+-------------------------------------------------+
//	| offset | size | field                                           |
//	+--------+------+-------------------------------------------------+
//	|      0 |    4 | signature "BSNP"                                |
//	|      4 |    1 | format version (1)                              |
//	|      5 |    8 | wall-clock time taken, int64 LE Unix nanoseconds|
//	+--------+------+-------------------------------------------------+
//
// Part of the on-disk format.
const (
	snapshotPrefix    = "\x00blaze/snapshot/"
	reservedPrefix    = "\x00blaze/"
	snapshotSignature = "BSNP"
	snapshotVersion   = 1
	snapshotValueLen  = 13
	// MaxSnapshotNameLen is the longest name of a snapshot.
	MaxSnapshotNameLen = MaxNameLen - len(snapshotPrefix)
)

// isSnapshotName reports whether a named key is a snapshot's record.
func isSnapshotName(name string) bool { return strings.HasPrefix(name, snapshotPrefix) }

// isReservedName reports whether a named key belongs to the engine: such
// keys are hidden from Names and ReadNamed and refused to writers.
func isReservedName(name string) bool { return strings.HasPrefix(name, reservedPrefix) }

// SnapshotInfo describes a named snapshot: a plain value, safe to copy and
// to use from any goroutine.
type SnapshotInfo struct {
	Name string
	// Seq is the snapshot's point: reads at it (GetAt, ChangedSince) see
	// every write made before the snapshot was taken.
	Seq uint64
	// Time is when it was taken, by the clock of the host that took it.
	Time time.Time
}

func encodeSnapshot(t time.Time) []byte {
	b := make([]byte, 0, snapshotValueLen)
	b = append(b, snapshotSignature...)
	b = append(b, snapshotVersion)
	return binary.LittleEndian.AppendUint64(b, uint64(t.UnixNano()))
}

// decodeSnapshot decodes a snapshot record's value.
func decodeSnapshot(b []byte) (time.Time, error) {
	switch {
	case len(b) != snapshotValueLen || string(b[:4]) != snapshotSignature:
		return time.Time{}, fmt.Errorf("%w: snapshot record of %d bytes without its signature", ErrCorrupt, len(b))
	case b[4] > snapshotVersion:
		return time.Time{}, fmt.Errorf("%w: snapshot record format version %d", ErrVersion, b[4])
	case b[4] != snapshotVersion:
		return time.Time{}, fmt.Errorf("%w: snapshot record format version %d", ErrCorrupt, b[4])
	}
	return time.Unix(0, int64(binary.LittleEndian.Uint64(b[5:]))), nil
}

func checkSnapshotName(name string) error {
	if len(name) == 0 || len(name) > MaxSnapshotNameLen {
		return fmt.Errorf("%w: snapshot name of %d bytes (want 1 to %d)", ErrTooLarge, len(name), MaxSnapshotNameLen)
	}
	return nil
}

// CreateSnapshot names the present state of the database: reads at the
// snapshot's point see it exactly, across restarts and compactions, until
// DeleteSnapshot. It is durable when CreateSnapshot returns, whatever the
// durability mode, and costs no copy: compaction keeps the versions it
// reads (only those of keys written after it). A name already taken gives
// ErrExists.
func (db *DB) CreateSnapshot(name string) (SnapshotInfo, error) {
	if err := checkSnapshotName(name); err != nil {
		return SnapshotInfo{}, fmt.Errorf("blazedb: create snapshot %q: %w", name, err)
	}
	db.snapMu.Lock()
	defer db.snapMu.Unlock()
	k := rkey{named: true, name: snapshotPrefix + name}
	db.mu.RLock()
	_, taken := db.idx.named[k.name]
	db.mu.RUnlock()
	if taken {
		return SnapshotInfo{}, fmt.Errorf("blazedb: create snapshot %q: %w", name, ErrExists)
	}
	now := time.Now()
	if err := db.write([]op{{k: k, key: appendNamedKey(nil, k.name), val: encodeSnapshot(now)}}, true); err != nil {
		return SnapshotInfo{}, fmt.Errorf("blazedb: create snapshot %q: %w", name, err)
	}
	db.mu.RLock()
	seq, ok := db.idx.hist.pins[name]
	db.mu.RUnlock()
	if !ok {
		return SnapshotInfo{}, fmt.Errorf("blazedb: create snapshot %q: %w", name, ErrClosed)
	}
	return SnapshotInfo{Name: name, Seq: seq, Time: now}, nil
}

// DeleteSnapshot deletes a named snapshot; the next compaction drops the
// versions only it kept. A missing name gives ErrNotFound.
func (db *DB) DeleteSnapshot(name string) error {
	if err := checkSnapshotName(name); err != nil {
		return fmt.Errorf("blazedb: delete snapshot %q: %w", name, err)
	}
	db.snapMu.Lock()
	defer db.snapMu.Unlock()
	k := rkey{named: true, name: snapshotPrefix + name}
	db.mu.RLock()
	_, ok := db.idx.named[k.name]
	db.mu.RUnlock()
	if !ok {
		return fmt.Errorf("blazedb: delete snapshot %q: %w", name, ErrNotFound)
	}
	if err := db.write([]op{{k: k, key: appendNamedKey(nil, k.name), del: true}}, false); err != nil {
		return fmt.Errorf("blazedb: delete snapshot %q: %w", name, err)
	}
	return nil
}

// Snapshots lists the named snapshots, oldest first.
func (db *DB) Snapshots() ([]SnapshotInfo, error) {
	db.mu.RLock()
	if db.log == nil {
		db.mu.RUnlock()
		return nil, ErrClosed
	}
	type item struct {
		name string
		seq  uint64
		e    entry
	}
	var items []item
	for name, seq := range db.idx.hist.pins {
		if e, ok := db.idx.named[snapshotPrefix+name]; ok {
			items = append(items, item{name, seq, e})
		}
	}
	l := db.log
	l.refs.Add(1)
	db.mu.RUnlock()
	defer l.refs.Done()
	out := make([]SnapshotInfo, 0, len(items))
	var errs []error
	for _, it := range items {
		v, err := readEntry(l, it.e, appendNamedKey(nil, snapshotPrefix+it.name), nil, false)
		var t time.Time
		if err == nil {
			t, err = decodeSnapshot(v)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("snapshot %q: %w", it.name, err))
			continue
		}
		out = append(out, SnapshotInfo{Name: it.name, Seq: it.seq, Time: t})
	}
	slices.SortFunc(out, func(a, b SnapshotInfo) int {
		if a.Seq != b.Seq {
			if a.Seq < b.Seq {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	if err := errors.Join(errs...); err != nil {
		return out, fmt.Errorf("blazedb: snapshots: %w", err)
	}
	return out, nil
}
