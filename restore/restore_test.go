package restore_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/google/uuid"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/restore"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/entity"
	"github.com/df-mc/dragonfly/server/item"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/biome"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/dragonfly/server/world/mcdb"
	"github.com/go-gl/mathgl/mgl64"
)

// The test area: 6×6 columns, with a margin of 2 columns around it that the
// worlds also hold.
var testArea = restore.Area{Dim: world.Overworld, Min: world.ChunkPos{0, 0}, Max: world.ChunkPos{5, 5}}

const margin = 2

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openDB(t testing.TB, dir string) *provider.DB {
	t.Helper()
	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func newWorld(db world.Provider, sync bool) *world.World {
	w := world.Config{Provider: db, Synchronous: sync, Log: quiet, Generator: world.NopGenerator{}, Entities: entity.DefaultRegistry}.New()
	// No random ticks: the job is then the only writer of the area.
	w.SetTickRange(0)
	return w
}

func each(a restore.Area, m int32, f func(pos world.ChunkPos)) {
	for x := a.Min[0] - m; x <= a.Max[0]+m; x++ {
		for z := a.Min[1] - m; z <= a.Max[1]+m; z++ {
			f(world.ChunkPos{x, z})
		}
	}
}

// call runs f on w's owner: directly on a Synchronous World.
// loadArea has the loader l load every chunk of area, n chunks a
// transaction, and fails tb if they are not all loaded within 30 seconds.
func loadArea(tb testing.TB, w *world.World, l *world.Loader, area restore.Area, n int) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		all := true
		call(tb, w, func(tx *world.Tx) {
			l.Load(tx, n)
			each(area, 0, func(pos world.ChunkPos) {
				if _, ok := l.Chunk(pos); !ok {
					all = false
				}
			})
		})
		if all {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatal("the viewer's chunks never loaded")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func call(t testing.TB, w *world.World, f func(tx *world.Tx)) {
	t.Helper()
	if _, err := world.Call(context.Background(), w, func(tx *world.Tx) (struct{}, error) {
		f(tx)
		return struct{}{}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// column hands out the World's own column at pos, through a loader as the
// job reaches it.
func column(tx *world.Tx, pos world.ChunkPos) *world.Column {
	l := world.NewLoader(0, tx.World(), world.NopViewer{})
	l.Move(tx, mgl64.Vec3{float64(pos[0])*16 + 8, 0, float64(pos[1])*16 + 8})
	l.Load(tx, 1)
	c, ok := l.Chunk(pos)
	if !ok {
		panic(fmt.Sprintf("column %v not loaded", pos))
	}
	l.Close(tx)
	return c
}

var noUpdates = &world.SetOpts{DisableBlockUpdates: true, DisableLiquidDisplacement: true, DisableRedstoneUpdates: true}

// surface returns the y above the highest block of the column at x, z.
func surface(tx *world.Tx, x, z int) int { return tx.HighestBlock(x, z) + 1 }

// buildSource writes synthetic columns (with water-logged blocks in layer
// 1 and varied biomes) and has a World add a chest with items, a sign and
// entities, so that what the source holds is what a World stores.
func buildSource(t testing.TB, dir string, a restore.Area, m int32) {
	t.Helper()
	db := openDB(t, dir)
	br := world.DefaultBlockRegistry
	each(a, m, func(pos world.ChunkPos) {
		col := worldtest.Synthetic(uint64(pos[0]*1000+pos[1]+5000), world.Overworld, br)
		col.Entities, col.ScheduledBlocks, col.BlockEntities = nil, nil, nil
		col.Tick = 0
		if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
	})
	w := newWorld(db, true)
	call(t, w, func(tx *world.Tx) {
		each(a, m, func(pos world.ChunkPos) {
			// Mark every column modified, so the World stores it as it
			// encodes columns, with the synthetic chests' entities made.
			p := cube.Pos{int(pos[0]) * 16, 0, int(pos[1]) * 16}
			tx.SetBiome(p, tx.Biome(p))
		})
		ch := block.NewChest()
		cp := cube.Pos{20, surface(tx, 20, 20), 20} // column 1,1
		tx.SetBlock(cp, ch, noUpdates)
		_ = ch.Inventory(tx, cp).SetItem(0, item.NewStack(item.Diamond{}, 5))
		_ = ch.Inventory(tx, cp).SetItem(7, item.NewStack(item.Bread{}, 12))
		sp := cube.Pos{40, surface(tx, 40, 20), 20} // column 2,1
		tx.SetBlock(sp, block.Sign{Wood: block.OakWood(), Front: block.SignText{Text: "welcome"}}, noUpdates)
		tx.AddEntity(entity.NewText("one", mgl64.Vec3{24.5, float64(surface(tx, 24, 40)) + 1, 40.5})) // column 1,2
		tx.AddEntity(entity.NewText("two", mgl64.Vec3{72.5, float64(surface(tx, 72, 72)) + 1, 72.5})) // column 4,4
		tx.AddEntity(entity.NewText("out", mgl64.Vec3{-8.5, float64(surface(tx, -9, 8)) + 1, 8.5}))   // column -1,0
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// modify changes the target world as a match would, inside the area and
// just outside it, with a World, and closes it.
func modify(t testing.TB, dir string) {
	t.Helper()
	db := openDB(t, dir)
	w := newWorld(db, true)
	call(t, w, func(tx *world.Tx) {
		// Block entities: the chest's items change, the sign goes, a new
		// chest comes.
		cp := cube.Pos{20, surface(tx, 20, 20) - 1, 20}
		ch, ok := tx.Block(cp).(block.Chest)
		if !ok {
			t.Fatalf("no chest at %v: %T", cp, tx.Block(cp))
		}
		_ = ch.Inventory(tx, cp).SetItem(0, item.NewStack(block.Dirt{}, 1))
		tx.SetBlockEntity(cp, ch)
		tx.SetBlock(cube.Pos{40, surface(tx, 40, 20) - 1, 20}, block.Air{}, noUpdates)
		tx.SetBlock(cube.Pos{70, surface(tx, 70, 30), 30}, block.NewChest(), noUpdates)
		// Entities: one goes, one comes.
		tx.Block(cube.Pos{24, 0, 40}) // load column 1,2
		for e := range tx.Entities() {
			if e.H().Type() == entity.TextType && e.(*entity.Ent).NameTag() == "one" {
				tx.RemoveEntity(e)
			}
		}
		tx.AddEntity(entity.NewText("intruder", mgl64.Vec3{56.5, float64(surface(tx, 56, 56)) + 1, 56.5}))
		// Blocks: carve, build and light up, spread over the area.
		for i := range 300 {
			x, z := (i*37)%96, (i*61)%96
			y := surface(tx, x, z) - 1 + i%3
			var b world.Block = block.Obsidian{}
			switch i % 4 {
			case 1:
				b = block.Air{}
			case 2:
				b = block.Glowstone{}
			}
			tx.SetBlock(cube.Pos{x, y, z}, b, noUpdates)
		}
		// A roof over column 3,3 and a light in column 2,2.
		for x := 48; x < 64; x++ {
			for z := 48; z < 64; z++ {
				tx.SetBlock(cube.Pos{x, 200, z}, block.Obsidian{}, noUpdates)
			}
		}
		tx.SetBlock(cube.Pos{40, surface(tx, 40, 40), 40}, block.Glowstone{}, noUpdates)
		// Layer 1: water-log some blocks, dry others, straight in the chunk.
		for _, pos := range []world.ChunkPos{{1, 1}, {3, 4}, {5, 5}} {
			c := column(tx, pos)
			air := world.DefaultBlockRegistry.AirRuntimeID()
			water := world.BlockRuntimeID(block.Water{Still: true, Depth: 8})
			for i := range 40 {
				x, z := uint8(i%16), uint8(i*7%16)
				y := int16(tx.HighestBlock(int(pos[0])*16+int(x), int(pos[1])*16+int(z)))
				if c.Block(x, y, z, 1) == air {
					c.SetBlock(x, y, z, 1, water)
				} else {
					c.SetBlock(x, y, z, 1, air)
				}
			}
			p := cube.Pos{int(pos[0]) * 16, 0, int(pos[1]) * 16}
			tx.SetBiome(p, tx.Biome(p)) // mark it modified
		}
		// Biomes.
		for i := range 20 {
			tx.SetBiome(cube.Pos{(i * 13) % 96, 64 + i, (i * 29) % 96}, biome.Desert{})
		}
		// Outside the area, which the restore must leave alone.
		tx.SetBlock(cube.Pos{-5, surface(tx, -5, 5), 5}, block.Obsidian{}, noUpdates)
		tx.SetBlock(cube.Pos{100, surface(tx, 100, 50), 50}, block.Glowstone{}, noUpdates)
		tx.AddEntity(entity.NewText("outside", mgl64.Vec3{-20.5, float64(surface(tx, -21, 30)) + 1, 30.5}))
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// normal returns col with what differs between two equal worlds by
// design cleared: the tick, scheduled updates, and the order of the block
// entities and entities, whose data are reduced to identity and place (an
// entity ages while the World ticks).
func normal(col *chunk.Column) *chunk.Column {
	c := *col
	c.Tick, c.ScheduledBlocks = 0, nil
	c.BlockEntities = slices.Clone(c.BlockEntities)
	slices.SortFunc(c.BlockEntities, func(a, b chunk.BlockEntity) int {
		return cmp.Or(cmp.Compare(a.Pos[0], b.Pos[0]), cmp.Compare(a.Pos[1], b.Pos[1]), cmp.Compare(a.Pos[2], b.Pos[2]))
	})
	c.Entities = nil
	for _, e := range col.Entities {
		c.Entities = append(c.Entities, chunk.Entity{ID: e.ID, Data: map[string]any{
			"identifier": e.Data["identifier"], "Pos": e.Data["Pos"], "NameTag": e.Data["NameTag"]}})
	}
	slices.SortFunc(c.Entities, func(a, b chunk.Entity) int { return cmp.Compare(a.ID, b.ID) })
	return &c
}

func readAll(t testing.TB, dir string, a restore.Area, m int32) map[world.ChunkPos]*chunk.Column {
	t.Helper()
	db := openDB(t, dir)
	defer db.Close()
	out := map[world.ChunkPos]*chunk.Column{}
	each(a, m, func(pos world.ChunkPos) {
		col, err := db.LoadColumn(pos, world.Overworld)
		if err != nil {
			t.Fatalf("load %v: %v", pos, err)
		}
		out[pos] = normal(col)
	})
	return out
}

// diff counts the blocks (per layer) and biome cells that differ between
// two columns, as the job counts what it sets.
func diff(a, b *chunk.Column) (blocks, biomes int) {
	r := a.Chunk.Range()
	for i, sa := range a.Chunk.Sub() {
		sb := b.Chunk.Sub()[i]
		for l := range uint8(max(len(sa.Layers()), len(sb.Layers()))) {
			for x := byte(0); x < 16; x++ {
				for y := byte(0); y < 16; y++ {
					for z := byte(0); z < 16; z++ {
						if sa.Block(x, y, z, l) != sb.Block(x, y, z, l) {
							blocks++
						}
					}
				}
			}
		}
	}
	for y := r[0]; y <= r[1]; y++ {
		for x := uint8(0); x < 16; x++ {
			for z := uint8(0); z < 16; z++ {
				if a.Chunk.Biome(x, int16(y), z) != b.Chunk.Biome(x, int16(y), z) {
					biomes++
				}
			}
		}
	}
	return blocks, biomes
}

// fixture is a source world and a target world changed from it.
type fixture struct {
	src, dst, ref string
	srcCols       map[world.ChunkPos]*chunk.Column
	before        map[world.ChunkPos]*chunk.Column // the target after the match
	blocks        int                              // blocks the restore must set
	biomes        int
	changed       int // columns that differ
}

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  error
	fixtureOK   bool
)

func newFixture(t *testing.T) *fixture {
	t.Helper()
	fixtureOnce.Do(func() {
		fixtureDir, fixtureErr = os.MkdirTemp("", "restore-fixture-")
		if fixtureErr != nil {
			return
		}
		buildSource(t, fixtureDir+"/src", testArea, margin)
		copyDir(t, fixtureDir+"/src", fixtureDir+"/dst")
		modify(t, fixtureDir+"/dst")
		fixtureOK = true
	})
	if fixtureErr != nil || !fixtureOK {
		t.Fatalf("no fixture: %v", fixtureErr)
	}
	base := t.TempDir()
	f := &fixture{src: base + "/src", dst: base + "/dst", ref: base + "/ref"}
	copyDir(t, fixtureDir+"/src", f.src)
	copyDir(t, fixtureDir+"/src", f.ref)
	copyDir(t, fixtureDir+"/dst", f.dst)
	f.srcCols = readAll(t, f.src, testArea, margin)
	f.before = readAll(t, f.dst, testArea, margin)
	each(testArea, 0, func(pos world.ChunkPos) {
		b, bi := diff(f.before[pos], f.srcCols[pos])
		f.blocks += b
		f.biomes += bi
		if b+bi > 0 || colcmp.Compare(f.before[pos], f.srcCols[pos]) != nil {
			f.changed++
		}
	})
	return f
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// recorder is a viewer standing in for a player: it counts what it is
// shown.
type recorder struct {
	world.NopViewer
	mu     sync.Mutex
	chunks map[world.ChunkPos]int
	blocks map[world.ChunkPos]int
}

func (r *recorder) ViewChunk(pos world.ChunkPos, _ world.Dimension, _ map[cube.Pos]world.Block, _ *chunk.Chunk) {
	r.mu.Lock()
	r.chunks[pos]++
	r.mu.Unlock()
}

func (r *recorder) ViewBlockUpdate(pos cube.Pos, _ world.Block, _ int) {
	r.mu.Lock()
	r.blocks[world.ChunkPos{int32(pos[0] >> 4), int32(pos[2] >> 4)}]++
	r.mu.Unlock()
}

func (r *recorder) seen(pos world.ChunkPos) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.chunks[pos] + r.blocks[pos]
}

// watch puts a viewer on every column of the area and waits until the
// World has shown it all of them.
func watch(t *testing.T, w *world.World) (*recorder, *world.Loader) {
	t.Helper()
	rec := &recorder{chunks: map[world.ChunkPos]int{}, blocks: map[world.ChunkPos]int{}}
	l := world.NewLoader(6, w, rec)
	call(t, w, func(tx *world.Tx) { l.Move(tx, mgl64.Vec3{3*16 + 8, 0, 3*16 + 8}) })
	loadArea(t, w, l, testArea, 200)
	rec.mu.Lock()
	clear(rec.chunks)
	clear(rec.blocks)
	rec.mu.Unlock()
	return rec, l
}

func wait(t testing.TB, job *restore.Job) restore.Stats {
	t.Helper()
	select {
	case <-job.Done():
	case <-time.After(2 * time.Minute):
		job.Cancel()
		t.Fatal("restore did not finish")
	}
	return job.Stats()
}

// Issue 36, live restore: a running World (ticking, or Synchronous) whose
// area a match changed (blocks in both layers, biomes, a chest's items, a
// sign, entities) is put back as the source holds it, column by column,
// with the chunks either held by a viewer (who is shown the change) or not
// held at all; what lies outside the area stays as the match left it; the
// light is what a load of the restored chunks computes; a second restore
// of the now unchanged area takes one tick and sets nothing.
func TestRestore(t *testing.T) {
	for _, tc := range []struct {
		name         string
		sync, viewed bool
	}{
		{"ticking/held", false, true},
		{"ticking/unloaded", false, false},
		{"synchronous/unloaded", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if f.blocks == 0 || f.biomes == 0 || f.changed < 10 {
				t.Fatalf("the match changed too little: %d blocks, %d biomes, %d columns", f.blocks, f.biomes, f.changed)
			}
			from := openDB(t, f.src)
			defer from.Close()
			w := newWorld(openDB(t, f.dst), tc.sync)
			var rec *recorder
			var viewer *world.Loader
			if tc.viewed {
				rec, viewer = watch(t, w)
			}

			job, err := restore.Config{TickBudget: 5 * time.Millisecond}.Start(w, from, testArea)
			if err != nil {
				t.Fatal(err)
			}
			st := wait(t, job)
			if err := job.Err(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", st)
			if st.Columns != 36 || st.ColumnsCompared != 36 || st.ColumnsMissing != 0 {
				t.Errorf("columns: %d, compared %d, missing %d", st.Columns, st.ColumnsCompared, st.ColumnsMissing)
			}
			if st.BlocksSet != f.blocks || st.BiomesSet != f.biomes || st.ColumnsChanged != f.changed {
				t.Errorf("set %d blocks, %d biomes in %d columns; the match changed %d, %d in %d",
					st.BlocksSet, st.BiomesSet, st.ColumnsChanged, f.blocks, f.biomes, f.changed)
			}
			if st.SubChunksChanged == 0 || st.BlockEntitiesSet < 3 || st.EntitiesAdded == 0 || st.EntitiesRemoved == 0 || st.ChunksRelit == 0 {
				t.Errorf("stats: %+v", st)
			}
			if st.Ticks != len(st.TickTimes) || st.Ticks < 2 || slices.Max(st.TickTimes) != st.MaxTick {
				t.Errorf("ticks %d, times %v, max %v", st.Ticks, st.TickTimes, st.MaxTick)
			}
			if tc.viewed {
				each(testArea, 0, func(pos world.ChunkPos) {
					differs := colcmp.Compare(f.before[pos], f.srcCols[pos]) != nil
					if differs && rec.seen(pos) == 0 {
						t.Errorf("the viewer was not shown the change of column %v", pos)
					}
				})
			}

			checkLight(t, w, f.ref)

			// Nothing differs any more: one tick, nothing set. (A long
			// budget: the race detector slows the comparison; its speed
			// is the benchmark's.)
			again, err := restore.Config{TickBudget: time.Second}.Start(w, from, testArea)
			if err != nil {
				t.Fatal(err)
			}
			st2 := wait(t, again)
			if again.Err() != nil || st2.Ticks != 1 || st2.ColumnsChanged != 0 || st2.BlocksSet != 0 || st2.ColumnsCompared != 36 || st2.ChunksRelit != 0 {
				t.Errorf("restore of an unchanged area: %v, %+v", again.Err(), st2)
			}

			if viewer != nil {
				call(t, w, func(tx *world.Tx) { viewer.Close(tx) })
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			after := readAll(t, f.dst, testArea, margin)
			each(testArea, margin, func(pos world.ChunkPos) {
				want := f.before[pos]
				if testArea.Contains(pos) {
					want = f.srcCols[pos]
				}
				if err := colcmp.Compare(after[pos], want); err != nil {
					t.Errorf("column %v (in area: %v): %v", pos, testArea.Contains(pos), err)
				}
			})
		})
	}
}

// checkLight compares the light of the area's inner columns with a World
// that loads the source afresh: Dragonfly computes light only on load, so
// without the job's relighting the match's glowstone and roof would stay
// in the light.
func checkLight(t *testing.T, w *world.World, refDir string) {
	t.Helper()
	ref := newWorld(openDB(t, refDir), true)
	defer ref.Close()
	type lights struct{ sky, all []uint8 }
	read := func(w *world.World, pos world.ChunkPos) lights {
		var l lights
		call(t, w, func(tx *world.Tx) {
			for dx := int32(-2); dx <= 2; dx++ {
				for dz := int32(-2); dz <= 2; dz++ {
					tx.Block(cube.Pos{int(pos[0]+dx) * 16, 0, int(pos[1]+dz) * 16})
				}
			}
			r := tx.Range()
			for x := range 16 {
				for z := range 16 {
					for y := r[0]; y <= r[1]; y++ {
						p := cube.Pos{int(pos[0])*16 + x, y, int(pos[1])*16 + z}
						l.sky = append(l.sky, tx.SkyLight(p))
						l.all = append(l.all, tx.Light(p))
					}
				}
			}
		})
		return l
	}
	for _, pos := range []world.ChunkPos{{2, 2}, {3, 3}, {2, 3}, {3, 2}} {
		got, want := read(w, pos), read(ref, pos)
		if !slices.Equal(got.sky, want.sky) || !slices.Equal(got.all, want.all) {
			n := 0
			for i := range got.sky {
				if got.sky[i] != want.sky[i] || got.all[i] != want.all[i] {
					n++
				}
			}
			t.Errorf("light of column %v: %d positions differ from a fresh load", pos, n)
		}
	}
}

// Issue 36, live restore: a slice does at least one unit of work whatever
// the budget, so a job advances and finishes with a budget shorter than
// any unit (before, a nanosecond's budget never compared a column).
func TestTinyBudgetAdvances(t *testing.T) {
	f := newFixture(t)
	from := openDB(t, f.src)
	defer from.Close()
	w := newWorld(openDB(t, f.dst), false)
	defer w.Close()
	area := restore.Area{Dim: world.Overworld, Min: world.ChunkPos{1, 1}, Max: world.ChunkPos{1, 1}}
	job, err := restore.Config{TickBudget: time.Nanosecond}.Start(w, from, area)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-job.Done():
	case <-time.After(60 * time.Second):
		job.Cancel()
		t.Fatalf("a job with a nanosecond's budget did not finish: %+v", job.Stats())
	}
	if st := job.Stats(); job.Err() != nil || st.ColumnsCompared != 1 || st.Ticks < 2 {
		t.Fatalf("a job with a nanosecond's budget: %v, %+v", job.Err(), st)
	}
}

// Issue 36, live restore: Cancel stops the job between slices with
// ErrCancelled, a context ends it with the context's error, and neither
// runs another slice afterwards.
func TestCancel(t *testing.T) {
	for _, byContext := range []bool{false, true} {
		t.Run(fmt.Sprint("context=", byContext), func(t *testing.T) {
			f := newFixture(t)
			from := openDB(t, f.src)
			defer from.Close()
			w := newWorld(openDB(t, f.dst), false)
			defer w.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// A budget of a nanosecond: one unit of work a tick.
			job, err := restore.Config{TickBudget: time.Nanosecond, Context: ctx}.Start(w, from, testArea)
			if err != nil {
				t.Fatal(err)
			}
			for job.Stats().Ticks < 3 {
				select {
				case <-job.Done():
					t.Fatalf("done before cancelled: %v, %+v", job.Err(), job.Stats())
				case <-time.After(5 * time.Millisecond):
				}
			}
			if byContext {
				cancel()
			} else {
				job.Cancel()
			}
			st := wait(t, job)
			want := restore.ErrCancelled
			if byContext {
				want = context.Canceled
			}
			if !errors.Is(job.Err(), want) {
				t.Fatalf("Err() = %v, want %v", job.Err(), want)
			}
			if st.ColumnsCompared >= st.Columns {
				t.Fatalf("cancelled job compared all %d columns", st.ColumnsCompared)
			}
			time.Sleep(200 * time.Millisecond)
			if later := job.Stats(); later.Ticks != st.Ticks {
				t.Fatalf("ran %d slices after being cancelled", later.Ticks-st.Ticks)
			}
		})
	}
}

// Issue 36, live restore: no slice takes much more than the budget. The
// job measures each slice itself; a slice may overshoot by one unit of
// work (a sub-chunk, one chunk's light, a 3×3 spread of light), which the
// slack below covers many times over even under the race detector on a
// loaded machine: what is asserted is that a slice stops, not a speed.
func TestBudget(t *testing.T) {
	f := newFixture(t)
	from := openDB(t, f.src)
	defer from.Close()
	w := newWorld(openDB(t, f.dst), false)
	defer w.Close()
	const budget = 2 * time.Millisecond
	job, err := restore.Config{TickBudget: budget}.Start(w, from, testArea)
	if err != nil {
		t.Fatal(err)
	}
	st := wait(t, job)
	if job.Err() != nil {
		t.Fatal(job.Err())
	}
	t.Logf("ticks %d, max %v", st.Ticks, st.MaxTick)
	if st.MaxTick > budget+250*time.Millisecond {
		t.Fatalf("a slice took %v against a budget of %v", st.MaxTick, budget)
	}
	// The slices' own CPU time (where measured), which a busy machine
	// does not inflate.
	for i, c := range st.TickCPU {
		if c > budget+100*time.Millisecond {
			t.Fatalf("slice %d used %v of CPU against a budget of %v", i, c, budget)
		}
	}
	if len(st.TickCPU) != 0 && len(st.TickCPU) != st.Ticks {
		t.Fatalf("%d CPU times for %d ticks", len(st.TickCPU), st.Ticks)
	}
	if st.Ticks < 3 {
		t.Fatalf("%d ticks: the budget did not split the work", st.Ticks)
	}
}

// Start refuses an area it cannot restore.
func TestStartErrors(t *testing.T) {
	w := newWorld(nil, true)
	defer w.Close()
	for _, a := range []restore.Area{
		{Min: world.ChunkPos{0, 0}, Max: world.ChunkPos{1, 1}},
		{Dim: world.Overworld, Min: world.ChunkPos{2, 0}, Max: world.ChunkPos{1, 1}},
		{Dim: world.Nether, Min: world.ChunkPos{0, 0}, Max: world.ChunkPos{1, 1}},
	} {
		if _, err := (restore.Config{}).Start(w, world.NopProvider{}, a); !errors.Is(err, restore.ErrArea) {
			t.Errorf("Start(%+v) = %v, want ErrArea", a, err)
		}
	}
}

// Issue 36, live restore: one changed block in the middle of the area
// relights its column and neighbours only; the columns around them, which
// are in the light windows but unchanged, are lit from the source as well
// (they once were spread over without light and the job panicked).
func TestRestoreOneColumn(t *testing.T) {
	f := newFixture(t)
	dst := t.TempDir() + "/one"
	copyDir(t, f.src, dst)
	db := openDB(t, dst)
	w := newWorld(db, false)
	call(t, w, func(tx *world.Tx) {
		tx.SetBlock(cube.Pos{56, surface(tx, 56, 56), 56}, block.Glowstone{}, noUpdates)
	})
	from := openDB(t, f.src)
	defer from.Close()
	job, err := restore.Config{}.Start(w, from, testArea)
	if err != nil {
		t.Fatal(err)
	}
	st := wait(t, job)
	if job.Err() != nil || st.BlocksSet != 1 || st.ColumnsChanged != 1 || st.ChunksRelit != 9 {
		t.Fatalf("%v, %+v", job.Err(), st)
	}
	checkLight(t, w, f.ref)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Issue 36, live restore: the source may be any provider; here Dragonfly's
// own LevelDB provider (mcdb) holding the source world's columns.
func TestRestoreFromMcdb(t *testing.T) {
	f := newFixture(t)
	src := openDB(t, f.src)
	ldb, err := mcdb.Config{Log: quiet}.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	each(testArea, margin, func(pos world.ChunkPos) {
		col, err := src.LoadColumn(pos, world.Overworld)
		if err != nil {
			t.Fatal(err)
		}
		if err := ldb.StoreColumn(pos, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
	})
	src.Close()
	defer ldb.Close()

	w := newWorld(openDB(t, f.dst), false)
	job, err := restore.Config{}.Start(w, ldb, testArea)
	if err != nil {
		t.Fatal(err)
	}
	st := wait(t, job)
	if job.Err() != nil || st.BlocksSet != f.blocks || st.ColumnsChanged != f.changed {
		t.Fatalf("%v, %+v", job.Err(), st)
	}
	again, err := restore.Config{TickBudget: time.Second}.Start(w, ldb, testArea)
	if err != nil {
		t.Fatal(err)
	}
	if st := wait(t, again); st.ColumnsChanged != 0 || st.Ticks != 1 {
		t.Errorf("restore of an unchanged area: %+v", st)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	after := readAll(t, f.dst, testArea, 0)
	each(testArea, 0, func(pos world.ChunkPos) {
		if err := colcmp.Compare(after[pos], f.srcCols[pos]); err != nil {
			t.Errorf("column %v: %v", pos, err)
		}
	})
}

// Issue 36, live restore: a change only to biomes, or only to layer 1, in
// an otherwise unchanged area is still put back, shown to a viewer and
// saved. Biomes are exchanged on the tick and compared off it, so only a
// later slice learns that they differed and marks the column modified.
func TestRestoreOnlyBiomesOrLayer1(t *testing.T) {
	f := newFixture(t)
	desert := uint32(biome.Desert{}.EncodeBiome())
	water := world.BlockRuntimeID(block.Water{Still: true, Depth: 8})
	for _, tc := range []struct {
		name         string
		sync, viewed bool
		pos          world.ChunkPos
		// change changes the column at pos and returns the biome cells
		// and the blocks it made differ from the source.
		change func(tx *world.Tx, pos world.ChunkPos) (biomes, blocks int)
	}{
		{"biomes/ticking/held", false, true, world.ChunkPos{2, 3}, nil},
		{"biomes/synchronous/unloaded", true, false, world.ChunkPos{4, 0}, nil},
		{"layer1/ticking/held", false, true, world.ChunkPos{4, 1}, nil},
		{"layer1/synchronous/unloaded", true, false, world.ChunkPos{0, 5}, nil},
	} {
		if tc.name[0] == 'b' {
			tc.change = func(tx *world.Tx, pos world.ChunkPos) (biomes, blocks int) {
				src := f.srcCols[pos].Chunk
				for i := range 60 {
					x, y, z := i*5%16, -60+i*6, i*11%16
					tx.SetBiome(cube.Pos{int(pos[0])*16 + x, y, int(pos[1])*16 + z}, biome.Desert{})
					if src.Biome(uint8(x), int16(y), uint8(z)) != desert {
						biomes++
					}
				}
				return biomes, 0
			}
		} else {
			tc.change = func(tx *world.Tx, pos world.ChunkPos) (biomes, blocks int) {
				tx.Block(cube.Pos{int(pos[0]) * 16, 0, int(pos[1]) * 16}) // load it
				c := column(tx, pos)
				air := world.DefaultBlockRegistry.AirRuntimeID()
				for i := range 16 { // distinct x, z
					x, z := uint8(i%16), uint8(i*7%16)
					y := int16(tx.HighestBlock(int(pos[0])*16+int(x), int(pos[1])*16+int(z)))
					if c.Block(x, y, z, 1) == air {
						c.SetBlock(x, y, z, 1, water)
					} else {
						c.SetBlock(x, y, z, 1, air)
					}
					blocks++
				}
				p := cube.Pos{int(pos[0]) * 16, 0, int(pos[1]) * 16}
				tx.SetBiome(p, tx.Biome(p)) // mark it modified
				return 0, blocks
			}
		}
		t.Run(tc.name, func(t *testing.T) {
			dst := t.TempDir() + "/dst"
			copyDir(t, f.src, dst)
			w := newWorld(openDB(t, dst), tc.sync)
			var biomes, blocks int
			call(t, w, func(tx *world.Tx) { biomes, blocks = tc.change(tx, tc.pos) })
			if biomes+blocks == 0 {
				t.Fatal("the change changed nothing")
			}
			if !tc.viewed {
				// Saved and let go: the job loads the column afresh.
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				w = newWorld(openDB(t, dst), tc.sync)
			}
			var rec *recorder
			var viewer *world.Loader
			if tc.viewed {
				rec, viewer = watch(t, w)
			}
			from := openDB(t, f.src)
			defer from.Close()
			job, err := restore.Config{}.Start(w, from, testArea)
			if err != nil {
				t.Fatal(err)
			}
			st := wait(t, job)
			if job.Err() != nil || st.BiomesSet != biomes || st.BlocksSet != blocks || st.ColumnsChanged != 1 || st.ColumnsCompared != 36 {
				t.Fatalf("%v; set %d biomes, %d blocks in %d columns, want %d, %d in 1: %+v",
					job.Err(), st.BiomesSet, st.BlocksSet, st.ColumnsChanged, biomes, blocks, st)
			}
			if rec != nil && rec.seen(tc.pos) == 0 {
				t.Errorf("the viewer was not shown the change of column %v", tc.pos)
			}
			call(t, w, func(tx *world.Tx) {
				tx.Block(cube.Pos{int(tc.pos[0]) * 16, 0, int(tc.pos[1]) * 16})
				live := column(tx, tc.pos)
				if b, n := diff(&chunk.Column{Chunk: live.Chunk}, f.srcCols[tc.pos]); b != 0 || n != 0 {
					t.Errorf("the World's column %v differs from the source in %d blocks, %d biomes", tc.pos, b, n)
				}
			})
			if viewer != nil {
				call(t, w, func(tx *world.Tx) { viewer.Close(tx) })
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			after := readAll(t, dst, testArea, 0)
			each(testArea, 0, func(pos world.ChunkPos) {
				if err := colcmp.Compare(after[pos], f.srcCols[pos]); err != nil {
					t.Errorf("column %v as saved: %v", pos, err)
				}
			})
		})
	}
}

// Issue 36, live restore: players are never touched. A player standing in
// a column the restore changes, whom the source does not hold, is there
// after it, where it would remove any other entity the source lacks.
func TestRestoreLeavesPlayers(t *testing.T) {
	f := newFixture(t)
	from := openDB(t, f.src)
	defer from.Close()
	w := newWorld(openDB(t, f.dst), false)
	defer w.Close()
	_, viewer := watch(t, w) // the area loaded, as around a player
	defer call(t, w, func(tx *world.Tx) { viewer.Close(tx) })
	id := uuid.New()
	at := mgl64.Vec3{20.5, 90, 20.5}
	<-w.Do(func(tx *world.Tx) {
		tx.AddEntity(world.EntitySpawnOpts{Position: at, ID: id}.New(player.Type, player.Config{Name: "Alex", UUID: id, Position: at}))
	}).Done()
	present := func() (found bool, where mgl64.Vec3, typ string) {
		<-w.Do(func(tx *world.Tx) {
			for e := range tx.Entities() {
				if e.H().UUID() == id {
					found, where, typ = true, e.Position(), e.H().Type().EncodeEntity()
				}
			}
		}).Done()
		return
	}
	if ok, p, typ := present(); !ok || typ != "minecraft:player" {
		t.Fatalf("the player was not added: %v at %v, %s", ok, p, typ)
	}
	job, err := restore.Config{TickBudget: time.Second}.Start(w, from, testArea)
	if err != nil {
		t.Fatal(err)
	}
	if st := wait(t, job); job.Err() != nil || st.EntitiesRemoved == 0 {
		t.Fatalf("restore: %v, %+v (the fixture's match added entities the source lacks)", job.Err(), st)
	}
	if ok, _, _ := present(); !ok {
		t.Fatal("the restore removed a player standing in its area")
	}
}
