package provider

import (
	"errors"
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/df-mc/dragonfly/server/world"
)

var (
	// ErrUnknownState: a column holds a block state the current block
	// registry does not know (say, after a downgrade or with a plugin's block
	// missing). Blaze refuses to load such a column rather than replace the
	// state with something else, and refuses to store over it while the DB
	// is open, until a registry is set under which the column decodes, so
	// the column survives until a registry that knows the state is used.
	// When the state itself is lost (its dictionary entry gone with damaged
	// log records), the error wraps ErrColumnCorrupt too.
	ErrUnknownState = errors.New("provider: unknown block state")
	// ErrColumnCorrupt: a record that reads intact from its file does not
	// decode (a column, a player spawn, a block dictionary entry,
	// dictionary.dat), or a column uses a block dictionary entry that was
	// lost. It wraps blazedb.ErrCorrupt, as every damage the provider
	// reports does (see CorruptionError); errors from records whose
	// checksum fails wrap blazedb.ErrCorrupt alone.
	ErrColumnCorrupt = column.ErrCorrupt
	// ErrInvalidColumn: StoreColumn was given a column it cannot store
	// so that it reads back as given: a sub-chunk or layer missing, an
	// index beyond its palette, a runtime id the registry does not know,
	// NBT of a type Bedrock's NBT has no tag for. A Dragonfly World never
	// makes such a column; Dragonfly's LevelDB provider does, from some
	// damaged worlds. Nothing is written.
	ErrInvalidColumn = errors.New("provider: invalid column")
	// ErrLevelDBWorld: the directory holds a LevelDB (mcdb) world, or is the
	// LevelDB database folder of one (its db/, holding CURRENT and a
	// MANIFEST). Convert the world with `blaze convert` first.
	ErrLevelDBWorld = errors.New("provider: directory holds a LevelDB world")
	// ErrSegmentedWorld: the directory is the root of a segmented world
	// (package segment), whose chunks a plain provider would not find. Open
	// it with segment.Config.
	ErrSegmentedWorld = errors.New("provider: directory holds a segmented world")
	// ErrClosed: the DB was closed. It is blazedb.ErrClosed itself, which
	// every closed Blaze handle (engine, provider, overlay, segments)
	// reports, so that one errors.Is covers them all.
	ErrClosed = blazedb.ErrClosed
)

var (
	// ErrPoint: a point in the world's history is neither a snapshot's
	// name nor an RFC 3339 time, or is both.
	ErrPoint = errors.New("provider: not a point in history")
	// ErrSnapshotInUse: a snapshot an open View reads cannot be deleted.
	ErrSnapshotInUse = errors.New("provider: snapshot in use by a view")
)

// ErrInvalidView: a View was given a block registry other than its DB's,
// or its DB's changed since it was opened.
var ErrInvalidView = errors.New("provider: view cannot decode")

// ErrPlayerCorrupt: a player's data record (playerdata.go) failed to
// decode. A stored record's comes in a CorruptionError, so that it
// satisfies errors.Is(err, blazedb.ErrCorrupt) as all damage does; a
// document given to SavePlayerData that does not decode is refused with
// ErrPlayerCorrupt alone.
var ErrPlayerCorrupt = errors.New("provider: malformed player data record")

// chunksFile is the engine's log, which holds every record, as a
// CorruptionError names it.
const chunksFile = "chunks.dat"

// CorruptionError says where the provider found damage: the file and the
// record in it. Every error the provider returns for damaged or
// undecodable bytes wraps one, and every one satisfies errors.Is(err,
// blazedb.ErrCorrupt); Err, the cause, may wrap ErrColumnCorrupt or a
// *blazedb.CorruptionError with the offset too. Its message is Err's: the
// context around it names the record in words, as in `load column %v
// (%v): %w`. Test it with errors.As and a CorruptionError (a value), or a
// *CorruptionError as for blazedb.CorruptionError. It is a value nothing
// changes, safe to share between goroutines.
type CorruptionError struct {
	// File is the base name of the file: chunks.dat (the engine's log,
	// holding columns, player spawns, dictionary entries and named
	// records), dictionary.dat, level.dat or level.dat.blaze.
	File string
	// Record names what in File is damaged: "column (3, -2) in Overworld",
	// "player spawn <uuid>", "dictionary entry 7", "named record
	// \"edition\""; empty when the whole file is.
	Record string
	// Pos and Dim are the column's place when the record is a column; Dim
	// is nil otherwise.
	Pos world.ChunkPos
	Dim world.Dimension
	// Err is the cause.
	Err error
}

func (e CorruptionError) Error() string { return e.Err.Error() }

// Unwrap gives the cause. It is one error, not a list with
// blazedb.ErrCorrupt (Is says that), so that tools which walk a chain of
// single causes for its context (blaze check's findings) keep the
// context around it.
func (e CorruptionError) Unwrap() error { return e.Err }

// Is reports that a CorruptionError is blazedb.ErrCorrupt, whatever its
// cause wraps.
func (e CorruptionError) Is(target error) bool { return target == blazedb.ErrCorrupt }

// As fills a *CorruptionError target, the form blazedb.CorruptionError is
// tested with, so that both forms work.
func (e CorruptionError) As(target any) bool {
	if p, ok := target.(**CorruptionError); ok {
		c := e
		*p = &c
		return true
	}
	return false
}

// corruption wraps err, damage found in record of file, in a
// CorruptionError (see locate).
func corruption(file, record string, err error) error {
	return locate(CorruptionError{File: file, Record: record, Err: err})
}

// columnCorruption wraps err, damage found loading the column at pos in
// dim, in a CorruptionError (see locate).
func columnCorruption(pos world.ChunkPos, dim world.Dimension, err error) error {
	if err == nil {
		return nil
	}
	return locate(CorruptionError{File: chunksFile, Record: fmt.Sprintf("column %v in %v", pos, dim), Pos: pos, Dim: dim, Err: err})
}

// locate returns e, or e.Err alone when it is nil, is no damage, or says
// where already.
func locate(e CorruptionError) error {
	if e.Err == nil || !errors.Is(e.Err, blazedb.ErrCorrupt) || errors.As(e.Err, new(CorruptionError)) {
		return e.Err
	}
	return e
}

// Checkpoint errors.
var (
	// ErrNoCheckpoint: Checkpoint found no Blaze world to checkpoint: the
	// server's worlds are not on a DB whose Players() is its player
	// provider, or are read-only.
	ErrNoCheckpoint = errors.New("provider: no Blaze world with its players to checkpoint")
	// ErrCheckpointBusy: players kept joining, leaving or changing
	// dimension while a world was saved, each of checkpointTries times.
	// What was gathered is written all the same.
	ErrCheckpointBusy = errors.New("provider: players kept moving during the checkpoint")
)
