package provider

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

// View is a read-only world.Provider of the world as it was at a point in
// its history (a snapshot, or a time): set it as the Provider of a World
// with Config.ReadOnly, or read it directly (restore does). It copies
// nothing: each LoadColumn reads the column's version at the point from
// the engine (blazedb.DB.GetAt) and decodes it with the world's codec.
//
// What a View reads:
//
//   - Columns: as they were at the point, exactly; a column stored later
//     is missing (leveldb.ErrNotFound), one removed later is there.
//   - Block states: a column's record holds ids into the world's block
//     dictionary, and the View decodes them with the present dictionary.
//     That is exact: an entry is written in the batch of the first column
//     that uses it, or before, and never rewritten with other bytes nor
//     deleted (dictionary.go; dictionary.dat restores an entry the log lost
//     with the same bytes, from a copy of the same lineage), and a new
//     state always takes a new id. So every id a past record uses names
//     the same state now as it did then.
//   - Player spawns: as they were at the point (blazedb.DB.GetNamedAt).
//   - Settings: as the last SaveSettings before the point saved them
//     (each also puts them in the log: settingslog.go); for a point before
//     any such save, the world's settings as last saved to level.dat when
//     the View was opened. Either way a copy of their own: a World on the
//     View changes nothing of its DB's.
//
// A View over a snapshot holds it while open: this DB's DeleteSnapshot
// refuses it with ErrSnapshotInUse (the engine's own, called directly,
// does not know of Views), and compaction keeps what the snapshot reads. A
// View over a time reads what the engine's history holds: the point stays
// readable for as long as it is within blazedb.Options.History of the
// present; once the horizon passes it, loads fail with an error wrapping
// blazedb.ErrHistory, never a guess. (The engine offers no pin of an
// arbitrary point yet; take a snapshot to hold one for longer.)
//
// A View decodes with its DB's block registry: a World given another
// (Config.Blocks) gets an error from every load. Close it when done (a
// World closes its provider when it closes); loads after its DB is closed
// fail with ErrClosed.
//
// A View is safe for concurrent use, as a DB is.
type View struct {
	db    *DB
	at    point
	name  string // the point as given
	set   *world.Settings
	reg   world.BlockRegistry // the DB's registry when the View was opened
	regMu sync.Mutex
	// regErr is set when a World set another block registry than the
	// DB's: every load then fails with it.
	regErr error

	closed atomic.Bool
}

var _ world.Provider = (*View)(nil)

// At opens a View of the world as it was at point: a snapshot's name or an
// RFC 3339 time (see View). A point older than the history kept gives an
// error wrapping blazedb.ErrHistory; one that is neither ErrPoint.
// Opening one costs no copy of the world.
func (db *DB) At(point string) (*View, error) {
	if db.closed.Load() {
		return nil, fmt.Errorf("provider: view at %q: %w", point, ErrClosed)
	}
	// Under the lock DeleteSnapshot takes: the snapshot resolved is held
	// before it could be deleted.
	db.views.mu.Lock()
	p, err := db.resolvePoint(point)
	if err == nil && p.snap != "" {
		if db.views.of == nil {
			db.views.of = map[string]int{}
		}
		db.views.of[p.snap]++
	}
	db.views.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("provider: view at %q: %w", point, err)
	}
	db.setMu.Lock()
	ldat := *db.ldat // Settings counts a start on the copy, not the world's
	db.setMu.Unlock()
	if then, err := db.settingsAt(p.seq); err != nil {
		if p.snap != "" {
			db.views.release(p.snap)
		}
		return nil, fmt.Errorf("provider: view at %q: settings: %w", point, err)
	} else if then != nil {
		ldat = *then
	}
	db.regMu.Lock()
	reg := db.reg
	db.regMu.Unlock()
	return &View{db: db, at: p, name: point, set: ldat.Settings(), reg: reg}, nil
}

// Seq returns the View's point in the engine's sequence of writes
// (blazedb.DB.GetAt).
func (v *View) Seq() uint64 { return v.at.seq }

// Point returns the point the View was opened at, as given to At.
func (v *View) Point() string { return v.name }

// Settings returns the world's settings as they were at the View's point
// (see View); every call returns the same pointer.
func (v *View) Settings() *world.Settings { return v.set }

// SaveSettings does nothing: a View is read-only.
func (v *View) SaveSettings(*world.Settings) {}

// SetBlockRegistry accepts the registry the View's DB decodes with; any
// other makes every later load fail, as the View cannot decode with it
// without changing its DB's.
func (v *View) SetBlockRegistry(br world.BlockRegistry) {
	if br == nil {
		br = world.DefaultBlockRegistry
	}
	v.regMu.Lock()
	defer v.regMu.Unlock()
	if br != v.reg {
		v.regErr = fmt.Errorf("%w: a View decodes with its DB's block registry, and was given another", ErrInvalidView)
	}
}

// LoadPlayerSpawnPosition returns the spawn player id had at the View's
// point, if any.
func (v *View) LoadPlayerSpawnPosition(id uuid.UUID) (cube.Pos, bool, error) {
	if v.closed.Load() {
		return cube.Pos{}, false, fmt.Errorf("load spawn of player %v: %w", id, ErrClosed)
	}
	b, err := v.db.eng.GetNamedAt(playerPrefix+id.String(), v.at.seq)
	return decodeSpawn(id, b, err)
}

// SavePlayerSpawnPosition fails with blazedb.ErrReadOnly: a View is
// read-only.
func (v *View) SavePlayerSpawnPosition(id uuid.UUID, _ cube.Pos) error {
	return fmt.Errorf("save spawn of player %v: %w", id, blazedb.ErrReadOnly)
}

// LoadColumn reads the column at pos in dim as it was at the View's point.
// A column missing then gives an error satisfying errors.Is(err,
// leveldb.ErrNotFound); otherwise errors are LoadColumn's, and the
// caller owns the column, as with DB.LoadColumn.
func (v *View) LoadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error) {
	col, err := v.loadColumn(pos, dim)
	if err != nil {
		return nil, fmt.Errorf("load column %v (%v) at %q: %w", pos, dim, v.name, columnCorruption(pos, dim, err))
	}
	return col, nil
}

func (v *View) loadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error) {
	k, err := key(pos, dim)
	if err != nil {
		return nil, err
	}
	if v.closed.Load() {
		return nil, ErrClosed
	}
	v.regMu.Lock()
	err = v.regErr
	v.regMu.Unlock()
	if err != nil {
		return nil, err
	}
	rec, err := v.db.eng.GetAt(k, v.at.seq)
	if errors.Is(err, blazedb.ErrNotFound) {
		return nil, leveldb.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	v.db.regMu.Lock()
	reg := v.db.reg
	v.db.regMu.Unlock()
	if reg != v.reg {
		return nil, fmt.Errorf("%w: its DB's block registry changed since it was opened", ErrInvalidView)
	}
	return v.db.dict.codec.DecodeColumn(rec, dim.Range())
}

// StoreColumn fails with blazedb.ErrReadOnly: a View is read-only.
func (v *View) StoreColumn(pos world.ChunkPos, dim world.Dimension, _ *chunk.Column) error {
	return fmt.Errorf("store column %v (%v): %w", pos, dim, blazedb.ErrReadOnly)
}

// Close releases the View (and its hold on a snapshot). It never closes
// its DB, and is idempotent.
func (v *View) Close() error {
	if !v.closed.CompareAndSwap(false, true) {
		return nil
	}
	if v.at.snap != "" {
		v.db.views.release(v.at.snap)
	}
	return nil
}
