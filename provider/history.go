package provider

import (
	"fmt"
	"sync"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/world"
)

// History: the engine keeps every version of every column within its
// history horizon (blazedb.Options.History) and every version a named
// snapshot reads (see blazedb's doc). The provider names points as a
// server owner does: a point is a snapshot's name or an RFC 3339 time
// ("2026-11-27T04:00:00Z"). A snapshot name that would read as a time is
// refused, so a point never means two things.
//
// A snapshot names what the provider holds: the columns a World has
// stored. A running World keeps changed chunks in memory until it saves
// them (as it unloads them, and on Save and Close), so call World.Save
// before Snapshot to include them.

// SnapshotInfo describes a named snapshot: a plain value, safe to copy and
// to use from any goroutine.
type SnapshotInfo struct {
	Name string
	// Time is when it was taken, by the clock of the host that took it.
	Time time.Time
	// Seq is its point in the engine's sequence of writes: it reads every
	// write made before it was taken.
	Seq uint64
}

// Snapshot names the world's present state (every column and player spawn
// stored before the call): At(name) reads it, across restarts and
// compactions, until DeleteSnapshot. It is durable when it returns and
// copies nothing. A name already taken gives an error wrapping
// blazedb.ErrExists; one that reads as an RFC 3339 time ErrPoint.
func (db *DB) Snapshot(name string) error {
	if _, err := time.Parse(time.RFC3339, name); err == nil {
		return fmt.Errorf("provider: snapshot %q: %w: the name reads as a time", name, ErrPoint)
	}
	if db.conf.ReadOnly {
		return fmt.Errorf("provider: snapshot %q: %w", name, blazedb.ErrReadOnly)
	}
	if err := db.flushStores(); err != nil {
		return fmt.Errorf("provider: snapshot %q: %w", name, err)
	}
	if _, err := db.eng.CreateSnapshot(name); err != nil {
		return fmt.Errorf("provider: snapshot %q: %w", name, err)
	}
	return nil
}

// Snapshots lists the named snapshots, oldest first. A snapshot whose
// record does not read is left out, and the error says which.
func (db *DB) Snapshots() ([]SnapshotInfo, error) {
	ss, err := db.eng.Snapshots()
	out := make([]SnapshotInfo, len(ss))
	for i, s := range ss {
		out[i] = SnapshotInfo{Name: s.Name, Time: s.Time, Seq: s.Seq}
	}
	if err != nil {
		return out, fmt.Errorf("provider: snapshots: %w", err)
	}
	return out, nil
}

// DeleteSnapshot deletes a named snapshot; the engine's next compaction
// drops the versions only it kept. A missing name gives an error wrapping
// blazedb.ErrNotFound; a snapshot an open View reads ErrSnapshotInUse.
func (db *DB) DeleteSnapshot(name string) error {
	if db.conf.ReadOnly {
		return fmt.Errorf("provider: delete snapshot %q: %w", name, blazedb.ErrReadOnly)
	}
	db.views.mu.Lock()
	defer db.views.mu.Unlock()
	if n := db.views.of[name]; n > 0 {
		return fmt.Errorf("provider: delete snapshot %q: %w (%d open)", name, ErrSnapshotInUse, n)
	}
	if err := db.eng.DeleteSnapshot(name); err != nil {
		return fmt.Errorf("provider: delete snapshot %q: %w", name, err)
	}
	return nil
}

// ChangedSince returns where the columns changed after point are (stored
// or removed since), dimension by dimension (overworld, nether, end), each
// in Morton order: what a restore to point needs to look at. A point older
// than the history kept gives an error wrapping blazedb.ErrHistory.
func (db *DB) ChangedSince(point string) ([]Place, error) {
	p, err := db.resolvePoint(point)
	if err != nil {
		return nil, fmt.Errorf("provider: changed since %q: %w", point, err)
	}
	out, err := db.changedSince(p.seq)
	if err != nil {
		return nil, fmt.Errorf("provider: changed since %q: %w", point, err)
	}
	return out, nil
}

// changedSince returns where the columns changed at or after seq are.
func (db *DB) changedSince(seq uint64) ([]Place, error) {
	if err := db.flushStores(); err != nil {
		return nil, err
	}
	cs, err := db.eng.ChangedSince(seq)
	if err != nil {
		return nil, err
	}
	var out []Place
	for _, c := range cs {
		if c.Named {
			continue
		}
		dim, ok := world.DimensionByID(int(c.Key.Dim))
		if !ok {
			continue // not a column the provider wrote
		}
		out = append(out, Place{Pos: world.ChunkPos{c.Key.X, c.Key.Z}, Dim: dim})
	}
	return out, nil
}

// point is a point resolved: its sequence number, and the snapshot that
// names it, if one does.
type point struct {
	seq  uint64
	snap string
}

// resolvePoint reads point as a snapshot's name or an RFC 3339 time. Both
// at once is refused (a snapshot made by the engine directly can be named
// like a time).
func (db *DB) resolvePoint(s string) (point, error) {
	ss, err := db.eng.Snapshots()
	if err != nil {
		return point{}, err
	}
	t, terr := time.Parse(time.RFC3339, s)
	for _, sn := range ss {
		if sn.Name != s {
			continue
		}
		if terr == nil {
			return point{}, fmt.Errorf("%w: %q is both a snapshot and a time", ErrPoint, s)
		}
		return point{seq: sn.Seq, snap: s}, nil
	}
	if terr != nil {
		return point{}, fmt.Errorf("%w: %q is neither a snapshot nor an RFC 3339 time", ErrPoint, s)
	}
	seq, err := db.eng.SeqAt(t)
	if err != nil {
		return point{}, err
	}
	return point{seq: seq}, nil
}

// viewPins counts the open Views of each snapshot, which DeleteSnapshot
// refuses to delete.
type viewPins struct {
	mu sync.Mutex
	of map[string]int
}

// release drops one View's hold on snapshot name.
func (v *viewPins) release(name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.of[name]--; v.of[name] <= 0 {
		delete(v.of, name)
	}
}
