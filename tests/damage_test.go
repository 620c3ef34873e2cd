package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/worldcheck"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/google/uuid"
)

// Issue 35, "Done when": a damage sweep over every file of a world. Each
// trial damages one file of a cleanly closed world one way (a flipped
// byte, a truncation, a zeroed range), then checks it as `blaze check`
// does and opens it as a server would. The world must open either whole
// (from a redundant copy where the damage hit one) or with at most the
// columns whose records the damage hit missing, and then the check must
// have reported damage. A world that will not open must have been
// reported damaged by the check and open after repair, again missing at
// most what the damage hit.

// damageWorld is a small world built one column at a time in Safe mode,
// so that each column's record lies in a known stretch of a known
// chunks.dat.
type damageWorld struct {
	kind string // "plain", "segmented" or "overlay"
	// scratch holds each trial's copy of the world while it runs.
	scratch string
	// region is the one region of a segmented world whose files are swept.
	region string
	dir    string
	cols   []damageCol
	name   string // the settings stored: name, spawn and time
	wspawn cube.Pos
	wtime  int64
	spawn  cube.Pos
	// open opens the world in dir as a server would.
	open func(dir string) (damageProvider, error)
	// repair mends the world in dir as blaze repair does.
	repair func(dir string) error
	// reset holds, for an overlay, what each changed column reads as when
	// the match is forgotten: the template's version.
	reset map[int]*chunk.Column
	close func()
}

type damageProvider interface {
	LoadColumn(world.ChunkPos, world.Dimension) (*chunk.Column, error)
	Settings() *world.Settings
	LoadPlayerSpawnPosition(uuid.UUID) (cube.Pos, bool, error)
	Close() error
}

type damageCol struct {
	pos      world.ChunkPos
	dim      world.Dimension
	col      *chunk.Column
	file     string // the chunks.dat its record went to, relative to the world
	from, to int64  // the stretch of it the store appended
}

var damagePlayer = uuid.MustParse("7b3f3a2c-0d5e-4c1b-9d7e-1a2b3c4d5e6f")

var damageLog = slog.New(slog.DiscardHandler)

// damageProvider's writing side, as every kind of world has it.
type damageWriter interface {
	damageProvider
	StoreColumn(world.ChunkPos, world.Dimension, *chunk.Column) error
	SaveSettings(*world.Settings)
	SavePlayerSpawnPosition(uuid.UUID, cube.Pos) error
}

// fill stores n columns into p one at a time, noting which chunks.dat each
// went to (the only one that grew) and where.
func (w *damageWorld) fill(t testing.TB, p damageWriter, n, seed int) {
	t.Helper()
	s := p.Settings()
	s.Name = "Damage Sweep"
	s.Spawn = cube.Pos{100, 64, -200}
	s.Time = 123456
	s.CurrentTick = 987654
	p.SaveSettings(s)
	w.name, w.wspawn, w.wtime = s.Name, s.Spawn, s.Time
	dims := []world.Dimension{world.Overworld, world.Overworld, world.Nether, world.End}
	for i := range n {
		dim := dims[i%len(dims)]
		c := damageCol{pos: world.ChunkPos{int32(i%5-2) * 3, int32(i/5-2) * 3}, dim: dim}
		c.col = worldtest.Synthetic(uint64(i+seed)+1, dim, world.DefaultBlockRegistry)
		before := logSizes(t, w.dir)
		if err := p.StoreColumn(c.pos, c.dim, c.col); err != nil {
			t.Fatal(err)
		}
		// The log that grew most: an arena's spare generation, made in
		// the background, may grow a little meanwhile.
		for f, size := range logSizes(t, w.dir) {
			if size-before[f] > c.to-c.from {
				c.file, c.from, c.to = f, before[f], size
			}
		}
		if c.file == "" {
			t.Fatalf("column %d grew no log", i)
		}
		w.cols = append(w.cols, c)
	}
	if err := p.SavePlayerSpawnPosition(damagePlayer, w.spawn); err != nil {
		t.Fatal(err)
	}
}

// logSizes returns the size of every chunks.dat under dir.
func logSizes(t testing.TB, dir string) map[string]int64 {
	t.Helper()
	sizes := map[string]int64{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || e.Name() != "chunks.dat" {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		sizes[rel] = fi.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sizes
}

func buildPlainWorld(t testing.TB, n int) *damageWorld {
	t.Helper()
	w := &damageWorld{kind: "plain", dir: filepath.Join(t.TempDir(), "world"), spawn: cube.Pos{12, 70, -4}}
	db, err := provider.Config{Log: damageLog, Durability: blazedb.DurabilitySafe}.Open(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	w.fill(t, db, n, 0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	conf := provider.Config{Log: damageLog}
	w.open = func(dir string) (damageProvider, error) { return conf.Open(dir) }
	w.repair = func(dir string) error { _, err := conf.Repair(dir); return err }
	return w
}

func buildSegmentedWorld(t testing.TB, n int) *damageWorld {
	t.Helper()
	w := &damageWorld{kind: "segmented", dir: filepath.Join(t.TempDir(), "world"), spawn: cube.Pos{12, 70, -4}}
	conf := segment.Config{Log: damageLog, Durability: blazedb.DurabilitySafe, SegmentSize: 8}
	p, err := conf.Open(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	w.fill(t, p, n, 100)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	conf.Durability = 0
	w.open = func(dir string) (damageProvider, error) { return conf.Open(dir) }
	w.repair = func(dir string) error {
		regions, err := segment.Regions(dir)
		if err != nil {
			return err
		}
		rc := provider.Config{Log: damageLog, SegmentRoot: true}
		for _, d := range append([]string{dir}, regions...) {
			if _, err := rc.Repair(d); err != nil {
				return err
			}
		}
		return nil
	}
	return w
}

// buildOverlayWorld is an arena: a plain template of n columns, opened
// read-only, under an overlay whose match changed half of them.
func buildOverlayWorld(t testing.TB, n int) *damageWorld {
	t.Helper()
	tmpl := buildPlainWorld(t, n)
	tdb, err := provider.Config{Log: damageLog, ReadOnly: true}.Open(tmpl.dir)
	if err != nil {
		t.Fatal(err)
	}
	w := &damageWorld{kind: "overlay", dir: filepath.Join(t.TempDir(), "arena"), spawn: cube.Pos{1, 80, 1}, reset: map[int]*chunk.Column{}}
	conf := overlay.Config{Log: damageLog, Durability: blazedb.DurabilitySafe}
	p, err := conf.Open(tdb, w.dir)
	if err != nil {
		t.Fatal(err)
	}
	w.fill(t, p, n/2, 200)
	for i := range w.cols {
		w.reset[i] = tmpl.cols[i].col
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	conf.Durability = 0
	w.open = func(dir string) (damageProvider, error) { return conf.Open(tdb, dir) }
	w.repair = func(dir string) error { return errors.New("an arena has no repair: it is reset") }
	w.close = func() { tdb.Close() }
	return w
}

// damage is one way of damaging a file.
type damage struct {
	kind string // "flip", "truncate", "zero", "remove"
	off  int64
	n    int64 // zeroed length
}

func (d damage) String() string {
	switch d.kind {
	case "zero":
		return fmt.Sprintf("zero %d bytes at %d", d.n, d.off)
	case "remove":
		return "remove"
	}
	return fmt.Sprintf("%s at %d", d.kind, d.off)
}

func (d damage) apply(path string) error {
	if d.kind == "remove" {
		return os.Remove(path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	switch d.kind {
	case "flip":
		b[d.off] ^= 0x5a
	case "truncate":
		b = b[:d.off]
	case "zero":
		clear(b[d.off:min(d.off+d.n, int64(len(b)))])
	}
	return os.WriteFile(path, b, 0o644)
}

// hit reports the stretch of the file the damage reaches: [from, to).
func (d damage) hit(size int64) (int64, int64) {
	switch d.kind {
	case "flip":
		return d.off, d.off + 1
	case "truncate":
		return d.off, size
	case "zero":
		return d.off, min(d.off+d.n, size)
	}
	return 0, size
}

// damages lists the trials for a file of the given size: every byte
// flipped in the first head bytes (a log's header), a sample beyond;
// truncations and zeroed ranges at sampled offsets.
func damages(size, head int64, sample int, rng *rand.Rand) []damage {
	var ds []damage
	offs := map[int64]bool{}
	for o := range min(size, head) {
		offs[o] = true
	}
	for range sample {
		offs[rng.Int64N(size)] = true
	}
	sorted := make([]int64, 0, len(offs))
	for o := range offs {
		sorted = append(sorted, o)
	}
	slices.Sort(sorted)
	for _, o := range sorted {
		ds = append(ds, damage{kind: "flip", off: o})
	}
	cuts := []int64{0, 1, size / 4, size / 2, size - 1}
	for range sample / 8 {
		cuts = append(cuts, rng.Int64N(size))
	}
	for _, o := range cuts {
		ds = append(ds, damage{kind: "truncate", off: o})
	}
	for range max(sample/8, 4) {
		ds = append(ds, damage{kind: "zero", off: rng.Int64N(size), n: 64})
	}
	ds = append(ds, damage{kind: "remove"})
	return ds
}

// damageOutcome is what one trial found.
type damageOutcome struct {
	whole     bool // opened with every column and setting intact
	repaired  bool // needed blaze repair to open
	lost      []int
	reported  bool // the check reported damage
	reset     bool // an arena forgot its match
	violation string
}

// trial damages a copy of w's file rel and judges the result.
func (w *damageWorld) trial(t testing.TB, rel string, d damage) damageOutcome {
	t.Helper()
	dir, err := os.MkdirTemp(w.scratch, "trial-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.CopyFS(dir, os.DirFS(w.dir)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, rel)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.apply(path); err != nil {
		t.Fatal(err)
	}
	var out damageOutcome
	if w.kind != "overlay" {
		rep, cerr := worldcheck.Check(dir, worldcheck.Options{Log: damageLog})
		out.reported = cerr != nil || rep.Damaged()
	}

	p, err := w.open(dir)
	if err == nil && w.kind == "segmented" {
		// A region is opened at its first load, and refuses there.
		for _, c := range w.cols {
			if _, lerr := p.LoadColumn(c.pos, c.dim); errors.Is(lerr, blazedb.ErrDurableLoss) {
				p.Close()
				err = lerr
				break
			}
		}
	}
	if err != nil {
		out.repaired = true
		if w.kind == "overlay" {
			out.violation = fmt.Sprintf("an arena did not open (%v)", err)
			return out
		}
		if !out.reported {
			out.violation = fmt.Sprintf("open refused (%v) but check reported no damage", err)
			return out
		}
		if rerr := w.repair(dir); rerr != nil {
			out.violation = fmt.Sprintf("open refused (%v) and repair failed: %v", err, rerr)
			return out
		}
		if p, err = w.open(dir); err != nil {
			out.violation = fmt.Sprintf("open after repair refused: %v", err)
			return out
		}
	}
	defer p.Close()

	// Which columns may be lost: those whose records the damage reached.
	from, to := d.hit(fi.Size())
	allowed := map[int]bool{}
	for i, c := range w.cols {
		if filepath.Clean(c.file) == filepath.Clean(rel) && c.from < to && from < c.to {
			allowed[i] = true
		}
	}
	var reset []int
	for i, c := range w.cols {
		got, err := p.LoadColumn(c.pos, c.dim)
		if err == nil && colcmp.Compare(c.col, got) == nil {
			continue
		}
		out.lost = append(out.lost, i)
		if err == nil && w.reset != nil && colcmp.Compare(w.reset[i], got) == nil {
			reset = append(reset, i)
		}
	}
	// An arena's match may be forgotten whole (a reset), never in part.
	if w.kind == "overlay" && len(reset) == len(w.cols) {
		out.lost = nil
		out.reset = true
	}
	for _, i := range out.lost {
		if !allowed[i] && out.violation == "" {
			c := w.cols[i]
			out.violation = fmt.Sprintf("column %v (%v) lost outside the damage", c.pos, c.dim)
		}
	}
	s := p.Settings()
	settingsOK := w.kind == "overlay" || s.Name == w.name && s.Spawn == w.wspawn && s.Time == w.wtime
	if !settingsOK && out.violation == "" {
		out.violation = fmt.Sprintf("settings changed: name %q spawn %v time %d", s.Name, s.Spawn, s.Time)
	}
	pos, ok, err := p.LoadPlayerSpawnPosition(damagePlayer)
	spawnOK := err == nil && ok && pos == w.spawn
	if !spawnOK && out.violation == "" && filepath.Base(rel) != "chunks.dat" && !out.reset {
		out.violation = fmt.Sprintf("player spawn lost: %v %v %v", pos, ok, err)
	}
	out.whole = len(out.lost) == 0 && settingsOK && spawnOK && !out.reset
	if len(out.lost) > 0 && w.kind != "overlay" && !out.reported && out.violation == "" {
		out.violation = fmt.Sprintf("%d columns lost but check reported no damage", len(out.lost))
	}
	// Durable bytes gone from the end of a log are loss, not a crash's
	// torn tail: a server's open must refuse it (issue 35 item 1).
	if len(out.lost) > 0 && w.kind != "overlay" && (d.kind == "truncate" || d.kind == "remove") && !out.repaired && out.violation == "" {
		out.violation = fmt.Sprintf("%d columns lost to a %s, and the open accepted it", len(out.lost), d.kind)
	}
	return out
}

// damageRow sums the trials of one file and one kind of damage.
type damageRow struct {
	file, kind                       string
	trials, whole, repaired, reports int
	worst                            int
	violations                       []string
}

func TestDamageSweep(t *testing.T) {
	sample := 16
	if os.Getenv("BLAZE_SOAK") != "" {
		sample = 400
	}
	var tab bytes.Buffer
	fmt.Fprintln(&tab, "| world | file | damage | trials | opened whole | opened after repair | check reported damage | most columns lost | violations |")
	fmt.Fprintln(&tab, "|---|---|---|---|---|---|---|---|---|")
	var violations []string
	for _, build := range damageBuilds() {
		w := build(t, 16)
		w.scratch = t.TempDir()
		if w.close != nil {
			defer w.close()
		}
		violations = append(violations, w.sweep(t, sample, &tab)...)
	}
	t.Logf("damage sweep:\n%s", tab.String())
	if out := os.Getenv("BLAZE_DAMAGE_TABLE"); out != "" {
		os.WriteFile(out, tab.Bytes(), 0o644)
	}
	for i, v := range violations {
		if i == 30 && os.Getenv("BLAZE_DAMAGE_ALL") == "" {
			t.Errorf("... and %d more", len(violations)-30)
			break
		}
		t.Error(v)
	}
}

// sweeps reports whether the sweep damages the file rel of w: every file
// but a segmented world's regions past the first, whose files are those
// of a plain world's database.
func (w *damageWorld) sweeps(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) < 3 || parts[0] != "regions" {
		return true
	}
	if w.region == "" {
		w.region = parts[1] + "/" + parts[2]
	}
	return parts[1]+"/"+parts[2] == w.region
}

// sweep damages every file of w in turn, adds a row per file and kind of
// damage to tab and returns the violations.
func (w *damageWorld) sweep(t *testing.T, sample int, tab *bytes.Buffer) []string {
	rng := rand.New(rand.NewPCG(35, uint64(len(w.kind))))
	var files []string
	err := filepath.WalkDir(w.dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(w.dir, path)
		if e.Name() != "LOCK" && w.sweeps(rel) {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	rows := map[[2]string]*damageRow{}
	var order [][2]string
	for _, rel := range files {
		fi, err := os.Stat(filepath.Join(w.dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() == 0 {
			continue
		}
		head := int64(0)
		if filepath.Base(rel) == "chunks.dat" {
			head = 256 // the header, its copy and the first records
		}
		if sample > 100 && fi.Size() <= 16<<10 {
			head = fi.Size() // a soak flips every byte of every small file
		}
		for _, d := range damages(fi.Size(), head, sample, rng) {
			key := [2]string{rel, d.kind}
			row := rows[key]
			if row == nil {
				row = &damageRow{file: rel, kind: d.kind}
				rows[key] = row
				order = append(order, key)
			}
			o := w.trial(t, rel, d)
			row.trials++
			if o.whole {
				row.whole++
			}
			if o.repaired {
				row.repaired++
			}
			if o.reported {
				row.reports++
			}
			row.worst = max(row.worst, len(o.lost))
			if o.violation != "" {
				row.violations = append(row.violations, fmt.Sprintf("%s %s, %v: %s", w.kind, rel, d, o.violation))
			}
		}
	}
	var violations []string
	for _, k := range order {
		r := rows[k]
		fmt.Fprintf(tab, "| %s | %s | %s | %d | %d | %d | %d | %d | %d |\n", w.kind, filepath.ToSlash(r.file), r.kind, r.trials, r.whole, r.repaired, r.reports, r.worst, len(r.violations))
		violations = append(violations, r.violations...)
	}
	return violations
}

func damageBuilds() []func(testing.TB, int) *damageWorld {
	all := map[string]func(testing.TB, int) *damageWorld{"plain": buildPlainWorld, "segmented": buildSegmentedWorld, "overlay": buildOverlayWorld}
	if k := os.Getenv("BLAZE_DAMAGE_KIND"); k != "" {
		return []func(testing.TB, int) *damageWorld{all[k]}
	}
	return []func(testing.TB, int) *damageWorld{buildPlainWorld, buildSegmentedWorld, buildOverlayWorld}
}
