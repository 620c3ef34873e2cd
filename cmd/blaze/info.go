package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/world"
)

// worldInfo is what `blaze info` reports of a world: its databases' figures
// summed.
type worldInfo struct {
	name      string // from level.dat
	databases int
	columns   [3]int // by dimension: overworld, nether, end
	players   int
	data      int          // players' data records (provider.DB.Players)
	extraCols int          // columns (or positions) carrying LevelDB records
	extraWld  int          // the world's LevelDB records
	logBytes  int64        // the size of every chunks.dat
	live      int64        // of which records that hold live values
	garbage   int64        // of which what compaction would drop
	scanned   []string     // the databases whose index.dat was not used, and why
	damaged   int          // damaged stretches skipped by opening
	torn      int64        // bytes of torn tails (a crash's unsynced writes)
	settings  error        // what was wrong with level.dat or its copy, if anything
	lost      int64        // bytes that were durable and are gone (blazedb.Recovery.LostBytes)
	lostKeys  int          // keys they cost
	headers   int          // logs whose header or its copy is damaged
	extents   [3]extent    // by dimension, of every database's columns
	regions   []regionInfo // a segmented world's, in the order segment.Regions gives
}

// extent is where a set of columns lies: its count and the least and
// greatest chunk X and Z.
type extent struct {
	n                      int
	minX, maxX, minZ, maxZ int32
}

func (e *extent) add(x, z int32) {
	if e.n == 0 {
		e.minX, e.maxX, e.minZ, e.maxZ = x, x, z, z
	}
	e.n++
	e.minX, e.maxX, e.minZ, e.maxZ = min(e.minX, x), max(e.maxX, x), min(e.minZ, z), max(e.maxZ, z)
}

func (e extent) String() string {
	if e.n == 0 {
		return "0 columns"
	}
	return fmt.Sprintf("%s, chunk x %d..%d, z %d..%d", count(e.n, "column", "columns"), e.minX, e.maxX, e.minZ, e.maxZ)
}

// regionInfo is one region of a segmented world: its directory and the
// extent of its columns (all in one dimension).
type regionInfo struct {
	dir    string
	dim    string
	extent extent
}

// runInfo prints on out what the Blaze world in dir holds, without writing
// to it, and returns the exit status.
func runInfo(out io.Writer, dir string) int { return runInfoWith(out, dir, "") }

// runInfoWith is runInfo where dir may be an arena overlay over the world
// template (which may be empty), described as one.
func runInfoWith(out io.Writer, dir, template string) int {
	if isOverlay(dir) {
		return infoOverlay(out, dir, template)
	}
	if template != "" {
		return failed("info", fmt.Errorf("-template names the template of an arena overlay, and %s is not an overlay", dir))
	}
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
	var reg regionInfo
	for _, p := range places {
		if id, ok := world.DimensionID(p.Dim); ok && id >= 0 && id < len(w.columns) {
			w.columns[id]++
			w.extents[id].add(p.Pos[0], p.Pos[1])
			reg.dim = dimNames[id]
		}
		reg.extent.add(p.Pos[0], p.Pos[1])
	}
	if region {
		reg.dir = dir
		w.regions = append(w.regions, reg)
	}
	players, err := db.PlayerSpawns()
	if err != nil {
		return err
	}
	w.players += len(players)
	if err := w.addExtras(db); err != nil {
		return err
	}
	data, err := db.PlayerData()
	if err != nil {
		return err
	}
	w.data += len(data)
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

// dimNames are the dimensions' names, by id.
var dimNames = [3]string{"overworld", "nether", "end"}

func (w *worldInfo) print(out io.Writer, dir string) {
	what := "a Blaze world"
	if w.databases > 1 {
		what = fmt.Sprintf("a segmented Blaze world of %s", count(w.databases-1, "region", "regions"))
	}
	fmt.Fprintf(out, "%s: %s, %q\n", dir, what, w.name)
	w.printBody(out)
}

// printBody prints what print does after its first line.
func (w *worldInfo) printBody(out io.Writer) {
	w.printColumns(out)
	fmt.Fprintf(out, "  player spawns: %d\n", w.players)
	fmt.Fprintf(out, "  players' data: %d\n", w.data)
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

// printColumns prints the columns of each dimension and where they lie,
// and a segmented world's regions.
func (w *worldInfo) printColumns(out io.Writer) {
	total := w.columns[0] + w.columns[1] + w.columns[2]
	fmt.Fprintf(out, "  columns:       %d (overworld %d, nether %d, end %d)\n", total, w.columns[0], w.columns[1], w.columns[2])
	for id, e := range w.extents {
		if e.n > 0 {
			fmt.Fprintf(out, "  %-14s %v\n", dimNames[id]+":", e)
		}
	}
	for _, r := range w.regions {
		fmt.Fprintf(out, "  region:        %s (%s): %v\n", r.dir, r.dim, r.extent)
	}
}

// isOverlay reports whether dir is an arena overlay (package overlay): a
// CURRENT beside generations, none of them a world by itself.
func isOverlay(dir string) bool {
	gens, _ := filepath.Glob(filepath.Join(dir, "gen-*"))
	_, err := os.Stat(filepath.Join(dir, "CURRENT"))
	return err == nil && len(gens) > 0 && !provider.Config{}.Exists(dir)
}

// infoOverlay prints on out what the arena overlay in dir holds: the
// changes of its match, which template edition they began on and, given
// the template, whether it is that one. It returns the exit status.
func infoOverlay(out io.Writer, dir, template string) int {
	st, err := overlay.ReadState(dir)
	if err != nil {
		return failed("info", fmt.Errorf("%w (the next start of the arena forgets the match)", err))
	}
	var w worldInfo
	if err := w.add(st.Generation, false); err != nil {
		return failed("info", err)
	}
	fmt.Fprintf(out, "%s: an arena overlay, the changes of a match over a template (reset: forgotten)\n", dir)
	fmt.Fprintf(out, "  changes:       %s, a Blaze world\n", st.Generation)
	began := "edition " + st.Template.String()
	if st.Template.IsZero() {
		began = "a template without an edition (a LevelDB world)"
	}
	if template == "" {
		fmt.Fprintf(out, "  template:      %s (-template DIR compares a world with it)\n", began)
	} else {
		ed, err := editionOf(template)
		if err != nil {
			return failed("info", err)
		}
		same := "the one the match began on"
		if ed != st.Template {
			same = "the match began on " + began + ": the next start of the arena forgets the match"
		}
		fmt.Fprintf(out, "  template:      %s, edition %v (%s)\n", template, ed, same)
	}
	fmt.Fprintln(out, "  the columns the match changed:")
	w.printBody(out)
	return exitOK
}

// editionOf returns the edition of the plain Blaze world in dir, opened
// read-only.
func editionOf(dir string) (provider.Edition, error) {
	if regions, err := segment.Regions(dir); err != nil {
		return provider.Edition{}, err
	} else if len(regions) > 0 {
		return provider.Edition{}, fmt.Errorf("%s is a segmented world, whose edition blaze info does not compute: open the arena to compare", dir)
	}
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler), ReadOnly: true, CacheBytes: -1, ColumnCacheBytes: -1, ExternalMaintenance: true}.Open(dir)
	if err != nil {
		return provider.Edition{}, fmt.Errorf("template: %w", err)
	}
	defer db.Close()
	return db.Edition(), nil
}
