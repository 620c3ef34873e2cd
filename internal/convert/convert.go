package convert

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/blazeworld/blaze/internal/progress"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/google/uuid"
)

// Options tunes a conversion. The zero value works. Convert reads it and
// never modifies it.
type Options struct {
	// Progress receives a progress bar (columns, columns per second, time
	// left). Nil draws none.
	Progress io.Writer
	// Log receives warnings. Default: discarded.
	Log *slog.Logger
	// Compression is the codec of a Blaze destination's column data
	// (provider.Config.Compression). Default LZ4. A LevelDB destination
	// compresses as Dragonfly's LevelDB provider does.
	Compression blazedb.Compression
}

// Failure is a column that could not be converted: a plain value, safe to
// copy and share.
type Failure struct {
	Pos world.ChunkPos
	Dim world.Dimension
	Err error
}

func (f Failure) String() string { return fmt.Sprintf("column %v (%v): %v", f.Pos, f.Dim, f.Err) }

// PlayerFailure is a player spawn that could not be converted: a plain
// value, safe to copy and share.
type PlayerFailure struct {
	ID  string
	Err error
}

func (f PlayerFailure) String() string { return fmt.Sprintf("spawn of player %s: %v", f.ID, f.Err) }

// Report says what a conversion did. The conversion that returns it keeps
// no reference to it: the caller owns it.
type Report struct {
	From, To string // "leveldb" or "blaze"
	Columns  int    // columns written and verified
	Players  int    // player spawns copied
	Failed   []Failure
	// FailedPlayers are the player spawns that could not be read.
	FailedPlayers []PlayerFailure
	// Leftover is the directory a conversion to the same destination cut
	// short had left (the destination's name and BuildSuffix), deleted
	// before this one began; empty when there was none.
	Leftover string
	Took     time.Duration
	// ColumnRecords and WorldRecords count the LevelDB records carried
	// besides the columns (extras.go): those kept with a column, and the
	// world's.
	ColumnRecords, WorldRecords int
	// FailedRecords are the LevelDB records that could not be carried.
	FailedRecords []string
}

// engineDir is the directory of a Blaze world that holds its engine
// (package provider's layout).
const engineDir = "blaze"

// BuildSuffix is added to the destination's name for the directory the
// world is built in before it is renamed to the destination.
const BuildSuffix = ".convert-tmp"

// Kind reports whether dir holds a "leveldb" or a "blaze" world. A
// directory that holds both (db/ and blaze/) is refused with
// ErrAmbiguousWorld: every Blaze tool and the server refuse it alike, so
// that none reads one world where another reads the other.
func Kind(dir string) (string, error) {
	ldb := isDir(filepath.Join(dir, "db"))
	switch {
	case ldb && isDir(filepath.Join(dir, engineDir)):
		return "", fmt.Errorf("%w: %s has both db/ and blaze/; move one of them elsewhere", ErrAmbiguousWorld, dir)
	case ldb:
		return "leveldb", nil
	case provider.Config{}.Exists(dir):
		return "blaze", nil
	}
	return "", fmt.Errorf("%w: %s holds neither a LevelDB world (db/) nor a Blaze world", ErrUnknownSource, dir)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Convert copies the world in src to dst, in the direction src's kind
// implies. The error is for what stopped the conversion; columns that could
// not be read are in Report.Failed.
func Convert(src, dst string, o Options) (*Report, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	kind, err := Kind(src)
	if err != nil {
		return nil, err
	}
	if in, err := fsutil.Inside(dst, src); err != nil {
		return nil, err
	} else if in {
		return nil, fmt.Errorf("%w: %s is inside %s; give a destination outside it", ErrDestinationInSource, dst, src)
	}
	// A link to a directory: the world goes where it points.
	if st, err := os.Lstat(dst); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		if dst, err = filepath.EvalSymlinks(dst); err != nil {
			return nil, err
		}
	}
	dst = filepath.Clean(dst)
	empty := false // dst exists, empty: the world takes its place
	if entries, err := os.ReadDir(dst); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrDestinationNotEmpty, dst)
	} else if err == nil {
		empty = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	build := dst + BuildSuffix
	// The build directory is deleted as a leftover: never the source.
	if in, err := fsutil.Inside(src, build); err != nil {
		return nil, err
	} else if in {
		return nil, fmt.Errorf("%w: %s is inside %s, where a conversion to %s builds and which it deletes; give another destination or move the source", ErrSourceInBuildDir, src, build, dst)
	}
	leftover, err := removeLeftover(build, o.Log)
	if err != nil {
		return nil, err
	}
	// The parents synced into theirs: the converted world must survive a
	// power loss once Convert returns.
	if err := vfs.MkdirAll(vfs.Default, filepath.Dir(dst)); err != nil {
		return nil, err
	}
	// An empty destination goes now, so that the rename at the end cannot
	// fail on it (a mount point cannot go), and comes back if the
	// conversion fails.
	if empty {
		if err := os.Remove(dst); err != nil {
			return nil, fmt.Errorf("%s is empty but the converted world cannot take its place (%w): give a new directory, inside it for one", dst, err)
		}
	}
	if err := os.Mkdir(build, 0o755); err != nil {
		return nil, err
	}
	start := time.Now()
	var r *Report
	if kind == "leveldb" {
		r, err = fromLevelDB(src, build, o)
	} else {
		r, err = fromBlaze(src, build, o)
	}
	if err == nil {
		err = rename(build, dst)
	}
	if err != nil {
		if rerr := os.RemoveAll(build); rerr != nil {
			err = errors.Join(err, fmt.Errorf("remove %s: %w", build, rerr))
		}
		if empty {
			if rerr := os.Mkdir(dst, 0o755); rerr != nil && !errors.Is(rerr, fs.ErrExist) {
				err = errors.Join(err, fmt.Errorf("make the empty %s again: %w", dst, rerr))
			}
		}
	}
	if r != nil {
		r.Took = time.Since(start)
		if leftover {
			r.Leftover = build
		}
	}
	return r, err
}

// removeLeftover deletes what a conversion cut short left in build, the
// directory it was building in. Only a directory by that name is taken for
// one: anything else there (a file, a link) is refused, not deleted. It
// reports whether it deleted one.
func removeLeftover(build string, log *slog.Logger) (bool, error) {
	st, err := os.Lstat(build)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !st.IsDir():
		return false, fmt.Errorf("%s is in the way of the conversion and is not a directory it left: move it elsewhere", build)
	}
	log.Warn("deleting what a conversion cut short left", "dir", build)
	if err := os.RemoveAll(build); err != nil {
		return false, fmt.Errorf("remove what a conversion cut short left: %w", err)
	}
	return true, nil
}

// rename makes the verified world in build durable and renames it to dst.
func rename(build, dst string) error {
	if err := fsutil.SyncTree(build); err != nil {
		return err
	}
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) { // made meanwhile
		return fmt.Errorf("%w: %s appeared during the conversion", ErrDestinationNotEmpty, dst)
	}
	if err := vfs.Default.Rename(build, dst); err != nil {
		return err
	}
	return vfs.Default.SyncDir(filepath.Dir(dst))
}

// place is a column's position.
type place = provider.Place

// pair is the two sides of a conversion.
type pair struct {
	from, to world.Provider
}

// copyColumns copies every place from p.from to p.to, one column at a time,
// counting them on bar (nil: a bar of its own). It stops at the first
// failure of the destination; the columns that cannot be read, or that the
// destination refuses as invalid, are reported in the order of places.
// (A LevelDB source is read by readLevelDB instead, on every core.)
func copyColumns(p pair, places []place, o Options, r *Report, bar *progress.Bar) error {
	own := bar == nil
	if own {
		bar = progress.New(o.Progress, len(places), "converting")
	}
	failed := make([]error, len(places))
	var fatal error
	for i, pl := range places {
		col, err := load(p.from, pl)
		if err == nil {
			err = p.to.StoreColumn(pl.Pos, pl.Dim, col)
			if err != nil && !errors.Is(err, provider.ErrInvalidColumn) {
				fatal = fmt.Errorf("write: %w", err) // the destination is failing: stop
				break
			}
		}
		failed[i] = err
		bar.Add()
	}
	if fatal != nil {
		return fatal
	}
	reportColumns(r, o, places, func(i int) error { return failed[i] })
	if own {
		bar.Finish()
	}
	return nil
}

// reportColumns counts in r each of places that was converted, and lists
// each that was not, with errOf(its index): the source's reader could not
// read it, or read it into one that cannot be what the world held (a layer
// missing, an index beyond its palette).
func reportColumns(r *Report, o Options, places []place, errOf func(int) error) {
	for i, pl := range places {
		if err := errOf(i); err != nil {
			r.Failed = append(r.Failed, Failure{pl.Pos, pl.Dim, err})
			o.Log.Warn("cannot read column", "pos", pl.Pos, "dim", fmt.Sprint(pl.Dim), "err", err)
		} else {
			r.Columns++
		}
	}
}

// load reads the column at pl from p. Dragonfly's LevelDB provider panics
// on some damaged data (gophertunnel's NBT decoder on a damaged length, in
// a block entity, say): a panic is returned as the column's error, so that
// the column is listed with the others that cannot be read.
func load(p world.Provider, pl place) (col *chunk.Column, err error) {
	defer recovered(&err)
	return p.LoadColumn(pl.Pos, pl.Dim)
}

// loadSpawn reads player id's spawn from p as load reads a column: besides
// damaged NBT, Dragonfly's LevelDB provider panics on a spawn coordinate
// that is not an int32.
func loadSpawn(p world.Provider, id uuid.UUID) (pos cube.Pos, ok bool, err error) {
	defer recovered(&err)
	return p.LoadPlayerSpawnPosition(id)
}

// recovered, deferred by a reader, turns its panic into *err. The reader's
// other results are then left zero: the panic came before its return.
func recovered(err *error) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("%w: its reader panicked: %v", ErrUnreadable, v)
	}
}

// LevelDBView returns what a column becomes after a round trip through
// Dragonfly's LevelDB provider, which cannot hold everything Blaze does:
// mcdb overwrites every entity's UniqueID with the entity's ID and every
// block entity's x, y and z with its position (which a block entity that
// Dragonfly encoded itself does not hold), and keeps the scheduled-update
// tick only when there are scheduled updates, as an int32. col is not
// modified.
func LevelDBView(col *chunk.Column) *chunk.Column {
	out := *col
	out.BlockEntities = make([]chunk.BlockEntity, len(col.BlockEntities))
	for i, b := range col.BlockEntities {
		data := make(map[string]any, len(b.Data)+3)
		for k, v := range b.Data {
			data[k] = v
		}
		data["x"], data["y"], data["z"] = int32(b.Pos[0]), int32(b.Pos[1]), int32(b.Pos[2])
		out.BlockEntities[i] = chunk.BlockEntity{Pos: b.Pos, Data: data}
	}
	out.Entities = make([]chunk.Entity, len(col.Entities))
	for i, e := range col.Entities {
		data := make(map[string]any, len(e.Data)+1)
		for k, v := range e.Data {
			data[k] = v
		}
		data["UniqueID"] = e.ID
		out.Entities[i] = chunk.Entity{ID: e.ID, Data: data}
	}
	if len(col.ScheduledBlocks) == 0 {
		out.Tick = 0
	} else {
		out.Tick = int64(int32(col.Tick))
	}
	return &out
}

// verify reloads every written column from both sides and compares them,
// the source side seen through view (nil: as it is).
func verify(from, to world.Provider, places []place, failed []Failure, view func(*chunk.Column) *chunk.Column) error {
	return verifyCounting(from, to, places, failed, view, nil)
}

// verifyCounting is verify counting each column it compares on bar.
func verifyCounting(from, to world.Provider, places []place, failed []Failure, view func(*chunk.Column) *chunk.Column, bar *progress.Bar) error {
	skip := map[place]bool{}
	for _, f := range failed {
		skip[place{Pos: f.Pos, Dim: f.Dim}] = true
	}
	for _, pl := range places {
		if skip[pl] {
			continue
		}
		a, err := load(from, pl)
		if err != nil {
			return fmt.Errorf("verify: reread source column %v (%v): %w", pl.Pos, pl.Dim, err)
		}
		b, err := to.LoadColumn(pl.Pos, pl.Dim)
		if err != nil {
			return fmt.Errorf("verify: read back column %v (%v): %w", pl.Pos, pl.Dim, err)
		}
		if view != nil {
			a = view(a)
		}
		if err := colcmp.Compare(a, b); err != nil {
			return fmt.Errorf("verify: column %v (%v) differs after conversion: %w", pl.Pos, pl.Dim, err)
		}
		bar.Add()
	}
	return nil
}

// fromLevelDB converts a LevelDB world to Blaze.
