package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// worldInfo is what `blaze info` reports of a world: its databases' figures
// summed.
type worldInfo struct {
	name      string // from level.dat
	databases int
	columns   [3]int // by dimension: overworld, nether, end
	players   int
	extraCols int      // columns (or positions) carrying LevelDB records
	extraWld  int      // the world's LevelDB records
	logBytes  int64    // the size of every chunks.dat
	live      int64    // of which records that hold live values
	garbage   int64    // of which what compaction would drop
	scanned   []string // the databases whose index.dat was not used, and why
	damaged   int      // damaged stretches skipped by opening
	torn      int64    // bytes of torn tails (a crash's unsynced writes)
	settings  error    // what was wrong with level.dat or its copy, if anything
	lost      int64    // bytes that were durable and are gone (blazedb.Recovery.LostBytes)
	lostKeys  int      // keys they cost
	headers   int      // logs whose header or its copy is damaged
}

// runInfo prints on out what the Blaze world in dir holds, without writing
// to it, and returns the exit status.
func runInfo(out io.Writer, dir string) int {
	dbs, err := databases(dir)
	if err != nil {
		return failed("info", err)
	}
	var w worldInfo
	for i, d := range dbs {
		if err := w.add(d, i > 0); err != nil {
			return failed("info", err)
		}
	}
	w.print(out, dir)
	return exitOK
}

// add opens the database in dir read-only (a region's when region is set)
// and adds its figures to w. Opening it reads its index (or scans its log
// when index.dat cannot be used) and its block dictionary, not its columns.
func (w *worldInfo) add(dir string, region bool) error {
	db, err := provider.Config{
		Log: slog.New(slog.DiscardHandler), ReadOnly: true, NoLevelDat: region, SegmentRoot: true,
		CacheBytes: -1, ColumnCacheBytes: -1, ExternalMaintenance: true,
	}.Open(dir)
	if err != nil {
		return err
	}
	defer db.Close() // for the returns before the last: Close is idempotent
	if !region {
		w.name = db.Settings().Name
		if s := db.SettingsRecovery(); s.Damaged() {
			w.settings = s.LevelDat
			if w.settings == nil {
				w.settings = s.Copy
			}
		}
	}
	w.databases++
	places, err := db.Columns()
	if err != nil {
		return err
	}
	for _, p := range places {
		if id, ok := world.DimensionID(p.Dim); ok && id >= 0 && id < len(w.columns) {
			w.columns[id]++
		}
	}
	players, err := db.PlayerSpawns()
	if err != nil {
		return err
	}
	w.players += len(players)
	if err := w.addExtras(db); err != nil {
		return err
	}
	s, rec := db.Engine().Stats(), db.Engine().Recovery()
	w.logBytes, w.live, w.garbage = w.logBytes+s.LogBytes, w.live+s.LiveBytes, w.garbage+s.GarbageBytes
	if !rec.IndexLoaded {
		w.scanned = append(w.scanned, fmt.Sprintf("%s (%s)", dir, rec.IndexProblem))
	}
	w.damaged += len(rec.Corrupt)
	if rec.LostBytes > 0 {
		w.lost, w.lostKeys = w.lost+rec.LostBytes, w.lostKeys+len(rec.Lost)
	} else {
		w.torn += rec.TornBytes
	}
	if rec.HeaderDamage != "" {
		w.headers++
	}
	return db.Close()
}

func (w *worldInfo) print(out io.Writer, dir string) {
	what := "a Blaze world"
	if w.databases > 1 {
		what = fmt.Sprintf("a segmented Blaze world of %s", count(w.databases-1, "region", "regions"))
	}
	fmt.Fprintf(out, "%s: %s, %q\n", dir, what, w.name)
	total := w.columns[0] + w.columns[1] + w.columns[2]
	fmt.Fprintf(out, "  columns:       %d (overworld %d, nether %d, end %d)\n", total, w.columns[0], w.columns[1], w.columns[2])
	fmt.Fprintf(out, "  player spawns: %d\n", w.players)
	if w.extraCols+w.extraWld > 0 {
		fmt.Fprintf(out, "  LevelDB records kept for conversion back: with %d columns, %d of the world\n", w.extraCols, w.extraWld)
	}
	logs := "chunks.dat:   "
	if w.databases > 1 {
		logs = "logs:         "
	}
	share := 0.0
	if w.logBytes > 0 {
		share = 100 * float64(w.garbage) / float64(w.logBytes)
	}
	fmt.Fprintf(out, "  %s %s (%s live, %s or %.0f%% garbage)\n",
		logs, size(w.logBytes), size(w.live), size(w.garbage), share)
	if len(w.scanned) > 0 {
		fmt.Fprintf(out, "  index.dat:     not used, the log was scanned: %s\n", strings.Join(w.scanned, "; "))
	}
	if w.damaged > 0 {
		fmt.Fprintf(out, "  damage:        %s skipped on opening: run blaze check, then blaze repair\n",
			count(w.damaged, "damaged stretch of a log", "damaged stretches of logs"))
	}
	if w.settings != nil {
		fmt.Fprintf(out, "  level.dat:     damaged (%v): run blaze check, then blaze repair\n", w.settings)
	}
	if w.headers > 0 {
		fmt.Fprintf(out, "  header:        %s of chunks.dat damaged (the other copy is read; nothing is lost): run blaze repair\n",
			count(w.headers, "header or its copy", "headers or their copies"))
	}
	if w.lost > 0 {
		fmt.Fprintf(out, "  DURABLE DATA LOST: %s that were durable are gone, costing %s: run blaze check to name them, then blaze repair\n",
			size(w.lost), count(w.lostKeys, "key", "keys"))
	}
	if w.torn > 0 {
		fmt.Fprintf(out, "  torn tail:     %s of writes a crash left unsynced, cut when a server next opens the world\n", size(w.torn))
	}
}

// addExtras adds the LevelDB records db carries to w, from its index.
func (w *worldInfo) addExtras(db *provider.DB) error {
	places, err := db.ExtraColumns()
	if err != nil {
		return err
	}
	n, err := db.WorldExtraCount()
	w.extraCols, w.extraWld = w.extraCols+len(places), w.extraWld+n
	return err
}
