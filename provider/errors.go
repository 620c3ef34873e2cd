package provider

import (
	"errors"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider/internal/column"
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
	// ErrColumnCorrupt: a column record failed to decode, or uses a block
	// dictionary entry that was lost. Errors from damaged engine records
	// wrap blazedb.ErrCorrupt instead.
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
// decode. Errors from damaged engine records wrap blazedb.ErrCorrupt
// instead.
var ErrPlayerCorrupt = errors.New("provider: malformed player data record")
