package worldcheck

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/progress"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
)

// Options tunes a check. The zero value works. Check reads it and never
// modifies it.
type Options struct {
	// Progress receives a progress bar. Nil draws none.
	Progress io.Writer
	// Log receives the provider's log. Default: discarded.
	Log *slog.Logger
}

// Failure is a column or player spawn that could not be read: a plain
// value, safe to copy and share.
type Failure struct {
	What string // "column [x z] (dimension)" or "player <uuid>"
	Err  error
}

func (f Failure) String() string { return fmt.Sprintf("%s: %v", f.What, f.Err) }

// Database is what a check found in one of the world's databases: the
// world's own or, in a segmented world (package segment), one region's.
// The check that returns it keeps no reference to it: the caller owns it.
type Database struct {
	Dir string
	// Opened reports that the database opened. When damage kept it from
	// opening, Engine says what, and Recovery is empty: nothing of the
	// database was read.
	Opened bool
	// Recovery is what opening the database found. A torn tail is what a
	// crash left of writes that were not yet durable, not damage, unless
	// LostBytes says durable bytes were lost; Corrupt regions and lost
	// durable data are damage.
	Recovery blazedb.Recovery
	// Engine is blazedb.DB.Check's finding: nil when the index matches a
	// scan of the log, the scan passes over no damaged stretch (one an
	// earlier open skipped counts until compaction drops it) and every
	// live record verifies. When damage kept the
	// database from opening (its block dictionary does not read), it is
	// that error, and nothing of the database was read.
	Engine error
	// DictionaryRestored lists the block dictionary entries that did not
	// read from the engine and were read from the world's copy of the
	// dictionary (dictionary.dat) instead: the next read-write open, or
	// blaze repair, writes them back.
	DictionaryRestored []int32
	// DictionaryCopyStale reports that dictionary.dat is missing or does
	// not hold exactly the dictionary's entries: not damage (the next
	// read-write open or close writes it), but no copy to restore from.
	DictionaryCopyStale bool
	// Settings is what opening found of level.dat and its checksummed
	// copy (provider.SettingsRecovery): damage when a byte of either went
	// bad or level.dat went missing; the settings then came from the
	// copy. The zero value for a region, which keeps no level.dat.
	Settings provider.SettingsRecovery
}

// Damaged reports whether the database holds damage.
func (d Database) Damaged() bool {
	return len(d.Recovery.Corrupt) > 0 || d.Recovery.HeaderDamage != "" || d.Recovery.LostBytes > 0 || len(d.Recovery.Lost) > 0 || d.Engine != nil || len(d.DictionaryRestored) > 0 || d.Settings.Damaged()
}

// Report says what a check found. The check that returns it keeps no
// reference to it: the caller owns it.
type Report struct {
	Databases []Database
	// Columns, Players (player spawns) and PlayerData (players' data,
	// provider.DB.Players) count what was read back.
	Columns, Players, PlayerData int
	// ColumnExtras and WorldExtras count the LevelDB records carried for
	// conversion back (provider/extrarecords.go) that were read back:
	// those kept with columns, and the world's.
	ColumnExtras, WorldExtras int
	// Failed lists everything that could not be read.
	Failed []Failure
	Took   time.Duration
}

// Damaged reports whether the check found damage: a damaged stretch of a
// log, an engine check that failed, or anything that could not be read.
func (r *Report) Damaged() bool {
	for _, d := range r.Databases {
		if d.Damaged() {
			return true
		}
	}
	return len(r.Failed) > 0
}

// Check verifies the Blaze world in dir, segmented or not, opening each of
// its databases read-only in turn (it fails with blazedb.ErrLocked while a
// server has the world open). The error is for what stopped the check;
// damage found is in the report.
func Check(dir string, o Options) (*Report, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	start := time.Now()
	regions, err := segment.Regions(dir)
	if err != nil {
		return nil, err
	}
	r := &Report{}
	// One bar for the whole world: a segmented world's total is only
	// known region by region.
	var bar *progress.Bar
	if len(regions) > 0 {
		bar = progress.New(o.Progress, -1, "checking")
	}
	if err := check(r, dir, false, bar, o); err != nil {
		return nil, err
	}
	for _, reg := range regions {
		if err := check(r, reg, true, bar, o); err != nil {
			return nil, err
		}
	}
	bar.Finish()
	r.Took = time.Since(start)
	return r, nil
}

// check checks the database in dir (a region's when region is set) and adds
// what it found to r, counting columns on bar (nil: a bar of its own).
func check(r *Report, dir string, region bool, bar *progress.Bar, o Options) error {
	// Nothing cached: every column is read from the file, and memory stays
	// flat however large the world.
	db, err := provider.Config{
		Log: o.Log, ReadOnly: true, NoLevelDat: region, SegmentRoot: true, // the root's regions are checked one by one
		CacheBytes: -1, ColumnCacheBytes: -1, ExternalMaintenance: true,
	}.Open(dir)
	if errors.Is(err, blazedb.ErrCorrupt) {
		// The provider refuses a database whose block dictionary does not
		// read, or whose level.dat does not and has no intact copy: that
		// is damage to report, not a reason to stop.
		r.Databases = append(r.Databases, Database{Dir: dir, Engine: err})
		return nil
	}
	if err != nil {
		return err
	}
	defer db.Close()
	eng := db.Engine()
	// The engine's check reads the whole log, as long as reading the
	// columns: a phase of its own, shown while a world's bar waits.
	what := "checking the log of " + dir
	var step *progress.Step
	if bar != nil {
		step = bar.Start(what)
	} else {
		step = progress.Start(o.Progress, what)
	}
	engErr := eng.Check()
	step.Done()
	r.Databases = append(r.Databases, Database{Dir: dir, Opened: true, Recovery: eng.Recovery(), Engine: engErr,
		DictionaryRestored: db.DictionaryRestored(), DictionaryCopyStale: !db.DictionaryCopyCurrent(),
		Settings: db.SettingsRecovery()})

	places, err := db.Columns()
	if err != nil {
		return err
	}
	own := bar == nil
	if own {
		bar = progress.New(o.Progress, len(places), "checking")
	}
	for _, pl := range places {
		if _, err := db.LoadColumn(pl.Pos, pl.Dim); err != nil {
			r.Failed = append(r.Failed, Failure{fmt.Sprintf("column %v (%v)", pl.Pos, pl.Dim), err})
		} else {
			r.Columns++
		}
		bar.Add()
	}
	if own {
		bar.Finish()
	}

	spawns, err := db.PlayerSpawns()
	if err != nil {
		return err
	}
	for _, p := range spawns {
		if p.Err != nil {
			r.Failed = append(r.Failed, Failure{"player " + p.Name, p.Err})
		} else {
			r.Players++
		}
	}
	data, err := db.PlayerData()
	if err != nil {
		return err
	}
	for _, p := range data {
		if p.Err != nil {
			r.Failed = append(r.Failed, Failure{"data of player " + p.Name, p.Err})
		} else {
			r.PlayerData++
		}
	}
	return checkExtras(r, db)
}

// checkExtras reads back the LevelDB records db carries and adds them to r.
func checkExtras(r *Report, db *provider.DB) error {
	places, err := db.ExtraColumns()
	if err != nil {
		return err
	}
	for _, pl := range places {
		recs, err := db.ColumnExtras(pl.Pos, pl.Dim)
		if err != nil {
			r.Failed = append(r.Failed, Failure{fmt.Sprintf("LevelDB records of column %v (%v)", pl.Pos, pl.Dim), err})
		}
		r.ColumnExtras += len(recs)
	}
	// One that does not read stops the reading: the rest are not counted.
	if err := db.WorldExtras(func(provider.ExtraRecord) error { r.WorldExtras++; return nil }); err != nil {
		r.Failed = append(r.Failed, Failure{"LevelDB records of the world", err})
	}
	return nil
}
