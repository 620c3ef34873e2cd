package segment

import (
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func col(seed uint64, dim world.Dimension) *chunk.Column {
	return worldtest.Synthetic(seed, dim, world.DefaultBlockRegistry)
}

func openSeg(t testing.TB, dir string, c Config) *Provider {
	t.Helper()
	c.Log = quiet
	p, err := c.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestFloorDiv(t *testing.T) {
	for _, c := range [][3]int32{{0, 32, 0}, {31, 32, 0}, {32, 32, 1}, {-1, 32, -1}, {-32, 32, -1}, {-33, 32, -2}} {
		if got := floorDiv(c[0], c[1]); got != c[2] {
			t.Errorf("floorDiv(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

// Columns land in the database of their region, in every dimension, with
// negative coordinates; a missing region is not created by a load.
func TestRoutingAndRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := openSeg(t, dir, Config{SegmentSize: 4})
	type place struct {
		pos world.ChunkPos
		dim world.Dimension
	}
	places := []place{{world.ChunkPos{0, 0}, world.Overworld}, {world.ChunkPos{3, 3}, world.Overworld}, {world.ChunkPos{4, 0}, world.Overworld},
		{world.ChunkPos{-1, -1}, world.Overworld}, {world.ChunkPos{-5, 9}, world.Nether}, {world.ChunkPos{100, -100}, world.End}}
	for i, pl := range places {
		if err := p.StoreColumn(pl.pos, pl.dim, col(uint64(i), pl.dim)); err != nil {
			t.Fatal(err)
		}
	}
	regions := map[string]bool{}
	for _, d := range []string{"0", "1", "2"} {
		names, _ := os.ReadDir(filepath.Join(dir, "regions", d))
		for _, n := range names {
			regions[d+"/"+n.Name()] = true
		}
	}
	want := []string{"0/r.0.0", "0/r.1.0", "0/r.-1.-1", "1/r.-2.2", "2/r.25.-25"}
	if len(regions) != len(want) {
		t.Fatalf("regions %v, want %v", regions, want)
	}
	for _, w := range want {
		if !regions[w] {
			t.Fatalf("region %s missing in %v", w, regions)
		}
	}
	if _, err := p.LoadColumn(world.ChunkPos{1000, 1000}, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("missing region: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "regions", "0", "r.250.250")); err == nil {
		t.Fatal("a load created a region")
	}
	p.Close()
	// The root world keeps the settings: a region has no level.dat.
	for _, w := range want {
		for _, name := range []string{"level.dat", "levelname.txt"} {
			if _, err := os.Stat(filepath.Join(dir, "regions", w, name)); err == nil {
				t.Fatalf("region %s has a %s", w, name)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "level.dat")); err != nil {
		t.Fatalf("the root world has no level.dat: %v", err)
	}
	p = openSeg(t, dir, Config{SegmentSize: 4})
	for i, pl := range places {
		got, err := p.LoadColumn(pl.pos, pl.dim)
		if err != nil {
			t.Fatal(err)
		}
		if err := worldtest.Compare(col(uint64(i), pl.dim), got); err != nil {
			t.Fatalf("%v: %v", pl, err)
		}
	}
}

// The open segments stay under MaxOpen; idle ones close; the shared pool
// maintains them without goroutines of their own.
func TestBoundsAndIdleClosing(t *testing.T) {
	// A segment the pool is maintaining cannot be closed, and the bound is
	// exceeded until it is idle (documented): the bound is checked with no
	// maintenance running, which a loaded machine makes slow enough to
	// meet (it did, under make fuzz).
	p := openSeg(t, t.TempDir(), Config{SegmentSize: 2, MaxOpen: 2, MaintainInterval: time.Hour})
	for i := int32(0); i < 6; i++ {
		if err := p.StoreColumn(world.ChunkPos{i * 2, 0}, world.Overworld, col(uint64(i), world.Overworld)); err != nil {
			t.Fatal(err)
		}
		if n := p.OpenSegments(); n > 2 {
			t.Fatalf("%d segments open, MaxOpen 2", n)
		}
	}
	p.Close()

	before := runtime.NumGoroutine()
	p = openSeg(t, t.TempDir(), Config{SegmentSize: 2, MaxOpen: 2, IdleTimeout: 20 * time.Millisecond, MaintainInterval: 5 * time.Millisecond, Workers: 1})
	for i := int32(0); i < 6; i++ {
		if err := p.StoreColumn(world.ChunkPos{i * 2, 0}, world.Overworld, col(uint64(i), world.Overworld)); err != nil {
			t.Fatal(err)
		}
	}
	// Workers + scheduler only: no goroutines per segment.
	if n := runtime.NumGoroutine() - before; n > 2 {
		t.Fatalf("%d goroutines for 2 open segments", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.OpenSegments() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := p.OpenSegments(); n != 0 {
		t.Fatalf("%d idle segments still open", n)
	}
	for i := int32(0); i < 6; i++ {
		if _, err := p.LoadColumn(world.ChunkPos{i * 2, 0}, world.Overworld); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDeleteAndCompactSegment(t *testing.T) {
	dir := t.TempDir()
	// History off: the rewritten columns' old versions are garbage.
	p := openSeg(t, dir, Config{SegmentSize: 4, History: -1})
	for i := int32(0); i < 8; i++ {
		p.StoreColumn(world.ChunkPos{i, 0}, world.Overworld, col(uint64(i), world.Overworld))
	}
	// Rewrite region 0 so it has garbage, then compact it alone.
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	for i := int32(0); i < 4; i++ {
		c, _ := p.LoadColumn(world.ChunkPos{i, 0}, world.Overworld)
		c.Chunk.SetBlock(0, 0, 0, 0, obsidian)
		p.StoreColumn(world.ChunkPos{i, 0}, world.Overworld, c)
	}
	log := filepath.Join(dir, "regions", "0", "r.0.0", "blaze", "chunks.dat")
	p.mu.Lock()
	s := p.segs[segKey{0, 0, 0}]
	p.mu.Unlock()
	s.db.Engine().Sync()
	before, _ := os.Stat(log)
	if err := p.CompactSegment(world.ChunkPos{1, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(log)
	if after.Size() >= before.Size()*3/4 {
		t.Fatalf("compaction left %d of %d bytes", after.Size(), before.Size())
	}
	if err := p.DeleteSegmentFor(world.ChunkPos{6, 1}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "regions", "0", "r.1.0")); err == nil {
		t.Fatal("region directory left")
	}
	check := func(p *Provider) {
		for i := int32(0); i < 8; i++ {
			_, err := p.LoadColumn(world.ChunkPos{i, 0}, world.Overworld)
			if i < 4 && err != nil {
				t.Fatalf("column %d of the kept region: %v", i, err)
			}
			if i >= 4 && !errors.Is(err, leveldb.ErrNotFound) {
				t.Fatalf("column %d of the deleted region: %v", i, err)
			}
		}
	}
	check(p)
	p.Close()
	check(openSeg(t, dir, Config{SegmentSize: 4}))
}

// A crash at any file operation of DeleteSegmentFor leaves the region
// wholly there or wholly gone.
func TestDeleteIsCrashSafe(t *testing.T) {
	crashes := 0
	for k := 1; k < 60; k++ {
		mem := vfstest.NewMem()
		p, err := Config{SegmentSize: 4, FS: mem, Log: quiet, MaintainInterval: time.Hour}.Open("/w")
		if err != nil {
			t.Fatal(err)
		}
		for i := int32(0); i < 4; i++ {
			if err := p.StoreColumn(world.ChunkPos{i, 0}, world.Overworld, col(uint64(i), world.Overworld)); err != nil {
				t.Fatal(err)
			}
		}
		p.StoreColumn(world.ChunkPos{9, 9}, world.Overworld, col(9, world.Overworld))
		p.mu.Lock()
		for _, s := range p.segs {
			s.db.Engine().Sync()
		}
		p.mu.Unlock()
		mem.CrashAfter(k)
		delErr := p.DeleteSegmentFor(world.ChunkPos{0, 0}, world.Overworld)
		crashed := mem.Crashed()
		// Unsynced changes to directories may persist in part (keep > 0).
		keeps := []float64{0, 0.5, 1}
		var clones []*vfstest.MemFS
		for _, keep := range keeps {
			clones = append(clones, mem.CrashClone(rand.New(rand.NewPCG(uint64(k), 2)), keep))
		}
		p.Close()
		for i, clone := range clones {
			keep := keeps[i]
			q, err := Config{SegmentSize: 4, FS: clone, Log: quiet}.Open("/w")
			if err != nil {
				t.Fatalf("k=%d keep %v: reopen: %v", k, keep, err)
			}
			present := 0
			for i := int32(0); i < 4; i++ {
				if _, err := q.LoadColumn(world.ChunkPos{i, 0}, world.Overworld); err == nil {
					present++
				}
			}
			if present != 0 && present != 4 {
				t.Fatalf("k=%d keep %v: %d of 4 columns of the region survived", k, keep, present)
			}
			if present == 4 && delErr == nil && !crashed {
				t.Fatalf("k=%d keep %v: a deletion that returned nil was undone", k, keep)
			}
			if _, err := q.LoadColumn(world.ChunkPos{9, 9}, world.Overworld); err != nil {
				t.Fatalf("k=%d keep %v: the other region: %v", k, keep, err)
			}
			q.Close()
		}
		if !crashed {
			break
		}
		crashes++
	}
	if crashes < 3 {
		t.Fatalf("only %d crash points", crashes)
	}
}

// A real Dragonfly world over segments.
func TestDragonflyWorld(t *testing.T) {
	dir := t.TempDir()
	open := func() *world.World {
		p := openSeg(t, dir, Config{SegmentSize: 2})
		return world.Config{Provider: p, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	}
	w := open()
	spots := []cube.Pos{{1, 60, 1}, {100, 70, -100}, {-300, 80, 40}}
	<-w.Do(func(tx *world.Tx) {
		for _, s := range spots {
			tx.SetBlock(s, block.Stone{}, nil)
		}
	}).Done()
	w.Close()
	w = open()
	defer w.Close()
	<-w.Do(func(tx *world.Tx) {
		for _, s := range spots {
			if _, ok := tx.Block(s).(block.Stone); !ok {
				t.Errorf("%v: %T", s, tx.Block(s))
			}
		}
	}).Done()
}

// Loads, stores, compactions and deletions at once, with few open
// segments and a busy pool. Run with -race.
func TestConcurrentSegments(t *testing.T) {
	p := openSeg(t, t.TempDir(), Config{SegmentSize: 2, MaxOpen: 3, IdleTimeout: time.Millisecond, MaintainInterval: time.Millisecond})
	var wg sync.WaitGroup
	dims := []world.Dimension{world.Overworld, world.Nether, world.End}
	for d, dim := range dims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				pos := world.ChunkPos{int32(i % 10), int32(d)}
				if err := p.StoreColumn(pos, dim, col(uint64(i), dim)); err != nil {
					t.Error(err)
					return
				}
				_, err := p.LoadColumn(pos, dim)
				deleted := dim == world.Overworld && pos[0] >= 8 && errors.Is(err, leveldb.ErrNotFound) // its region may be deleted in between
				if err != nil && !deleted {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			p.CompactSegment(world.ChunkPos{int32(i % 10), 0}, world.Overworld)
			if i%5 == 0 {
				if err := p.DeleteSegmentFor(world.ChunkPos{8, 0}, world.Overworld); err != nil {
					t.Error(err)
				}
			}
		}
	}()
	wg.Wait()
}

// DeleteSegmentFor claims a region in constant use: calls already inside
// finish, later ones wait, and the deletion does not starve.
func TestDeleteWhileInUse(t *testing.T) {
	p := openSeg(t, t.TempDir(), Config{SegmentSize: 4})
	c := col(1, world.Overworld)
	if err := p.StoreColumn(world.ChunkPos{1, 1}, world.Overworld, c); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := p.LoadColumn(world.ChunkPos{1, 1}, world.Overworld)
				if err != nil && !errors.Is(err, leveldb.ErrNotFound) {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan error, 1)
	go func() { done <- p.DeleteSegmentFor(world.ChunkPos{1, 1}, world.Overworld) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("DeleteSegmentFor starved by a region in constant use")
	}
	close(stop)
	wg.Wait()
	if _, err := p.LoadColumn(world.ChunkPos{1, 1}, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("after deletion: %v", err)
	}
}

// Regions lists every region of every dimension, and none being deleted.
func TestRegions(t *testing.T) {
	dir := t.TempDir()
	if r, err := Regions(dir); err != nil || len(r) != 0 {
		t.Fatalf("a world without regions: %v %v", r, err)
	}
	p := openSeg(t, dir, Config{SegmentSize: 4})
	for _, pos := range []world.ChunkPos{{0, 0}, {4, 0}, {-1, 9}} {
		p.StoreColumn(pos, world.Overworld, col(1, world.Overworld))
	}
	p.StoreColumn(world.ChunkPos{0, 0}, world.Nether, col(2, world.Nether))
	if err := p.DeleteSegmentFor(world.ChunkPos{4, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	p.Close()
	os.MkdirAll(filepath.Join(dir, "regions", "0", "deleting-r.7.7-1"), 0o755) // a deletion a crash cut short
	got, err := Regions(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(dir, "regions", "0", "r.-1.2"),
		filepath.Join(dir, "regions", "0", "r.0.0"),
		filepath.Join(dir, "regions", "1", "r.0.0"),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("regions %v, want %v", got, want)
	}
}

// A crash while a store makes a new region, at each of its file
// operations, leaves a world that opens, where that column is either
// stored whole or missing, and where the region takes a store again. The
// world is in DurabilitySafe, where a store that returned is durable: the
// other region's column must survive every crash, and the new one every
// crash after its store returned.
func TestNewRegionIsCrashSafe(t *testing.T) {
	pos, fresh := world.ChunkPos{40, 40}, col(5, world.Overworld)
	crashes := 0
	for k := 1; ; k++ {
		mem := vfstest.NewMem()
		p, err := Config{SegmentSize: 4, FS: mem, Log: quiet, MaintainInterval: time.Hour, Durability: blazedb.DurabilitySafe}.Open("/w")
		if err != nil {
			t.Fatal(err)
		}
		if err := p.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, col(1, world.Overworld)); err != nil {
			t.Fatal(err)
		}
		mem.CrashAfter(k)
		storeErr := p.StoreColumn(pos, world.Overworld, fresh)
		crashed := mem.Crashed()
		for _, keep := range []float64{0, 0.5, 1} {
			clone := mem.CrashClone(rand.New(rand.NewPCG(uint64(k), 4)), keep)
			q, err := Config{SegmentSize: 4, FS: clone, Log: quiet, Durability: blazedb.DurabilitySafe}.Open("/w")
			if err != nil {
				t.Fatalf("k=%d keep %v: reopen: %v", k, keep, err)
			}
			got, err := q.LoadColumn(pos, world.Overworld)
			switch {
			case errors.Is(err, leveldb.ErrNotFound):
				if storeErr == nil && !crashed {
					t.Fatalf("k=%d keep %v: a store that returned nil was lost", k, keep)
				}
			case err != nil:
				t.Fatalf("k=%d keep %v: the new region after the crash: %v", k, keep, err)
			default:
				if err := worldtest.Compare(fresh, got); err != nil {
					t.Fatalf("k=%d keep %v: the column read back differs: %v", k, keep, err)
				}
			}
			if err := q.StoreColumn(pos, world.Overworld, fresh); err != nil {
				t.Fatalf("k=%d keep %v: store into the region after the crash: %v", k, keep, err)
			}
			if _, err := q.LoadColumn(world.ChunkPos{0, 0}, world.Overworld); err != nil {
				t.Fatalf("k=%d keep %v: the other region: %v", k, keep, err)
			}
			if err := q.Close(); err != nil {
				t.Fatalf("k=%d keep %v: close: %v", k, keep, err)
			}
		}
		p.Close()
		if !crashed {
			break
		}
		crashes++
	}
	if crashes < 5 {
		t.Fatalf("only %d crash points", crashes)
	}
	t.Logf("%d crash points", crashes)
}

// A region whose open fails fails every load that waited for that open,
// not only the first one's.
func TestFailedRegionOpenFailsItsWaiters(t *testing.T) {
	dir := t.TempDir()
	p := openSeg(t, dir, Config{SegmentSize: 4})
	pos := world.ChunkPos{1, 1}
	if err := p.StoreColumn(pos, world.Overworld, col(1, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	p.Close()

	var armed atomic.Bool
	reached, release := make(chan struct{}), make(chan struct{})
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		if op == vfstest.OpOpen && strings.Contains(name, "/regions/") && armed.CompareAndSwap(true, false) {
			close(reached)
			<-release
			return errors.New("injected: the region cannot be opened")
		}
		return nil
	})
	p = openSeg(t, dir, Config{FS: fs})
	armed.Store(true)
	errs := make(chan error, 2)
	go func() { _, err := p.LoadColumn(pos, world.Overworld); errs <- err }()
	<-reached // the first load is opening the region
	go func() { _, err := p.LoadColumn(pos, world.Overworld); errs <- err }()
	time.Sleep(20 * time.Millisecond) // the second waits for that open
	close(release)
	for range 2 {
		if err := <-errs; err == nil || errors.Is(err, leveldb.ErrNotFound) {
			t.Fatalf("a load of a region whose open failed: %v", err)
		}
	}
	if _, err := p.LoadColumn(pos, world.Overworld); err != nil {
		t.Fatalf("a load once the region opens: %v", err)
	}
}

// A region closed to make room for another (MaxOpen) whose close fails is
// not only logged: the next Sync reports it, once, and otherwise the
// provider's Close.
func TestFailedEvictionReported(t *testing.T) {
	var armed atomic.Bool
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		if op == vfstest.OpRename && armed.Load() && strings.Contains(name, "/r.0.0/") {
			return errors.New("injected: rename fails")
		}
		return nil
	})
	p, err := Config{Log: quiet, FS: fs, SegmentSize: 2, MaxOpen: 1, MaintainInterval: time.Hour}.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, col(1, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	armed.Store(true) // closing the first region cannot write its index.dat
	if err := p.StoreColumn(world.ChunkPos{4, 0}, world.Overworld, col(2, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	armed.Store(false)
	if err := p.Sync(); err == nil || !strings.Contains(err.Error(), "injected: rename fails") {
		t.Fatalf("Sync after a failed eviction: %v", err)
	}
	if err := p.Sync(); err != nil {
		t.Fatalf("the failed eviction reported twice: %v", err)
	}
	if err := p.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, col(3, world.Overworld)); err != nil {
		t.Fatal(err) // the first region opens again
	}
	armed.Store(true) // and fails to close again
	if err := p.StoreColumn(world.ChunkPos{4, 0}, world.Overworld, col(4, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	armed.Store(false)
	if err := p.Close(); err == nil || !strings.Contains(err.Error(), "injected: rename fails") {
		t.Fatalf("Close after a failed eviction: %v", err)
	}
}

// Closing a region makes its stores durable in every mode: a region closed
// to make room or for being idle is not visited by the pool again, so
// nothing else would sync what it was last given.
func TestClosedRegionIsDurable(t *testing.T) {
	for _, mode := range []blazedb.Durability{blazedb.DurabilityFast, blazedb.DurabilityBalanced} {
		mem := vfstest.NewMem()
		// No maintenance: nothing syncs but the closes.
		p, err := Config{SegmentSize: 1, MaxOpen: 1, MaintainInterval: time.Hour, Durability: mode, FS: mem, Log: quiet}.Open("/w")
		if err != nil {
			t.Fatal(err)
		}
		for i := int32(0); i < 3; i++ {
			if err := p.StoreColumn(world.ChunkPos{i, 0}, world.Overworld, col(uint64(i), world.Overworld)); err != nil {
				t.Fatal(err)
			}
		}
		if n := p.OpenSegments(); n != 1 {
			t.Fatalf("%v: %d regions open, MaxOpen 1", mode, n)
		}
		for keep := range 3 {
			q, err := Config{FS: mem.CrashClone(rand.New(rand.NewPCG(uint64(keep), 8)), float64(keep)/2), Log: quiet}.Open("/w")
			if err != nil {
				t.Fatalf("%v: reopen after a crash: %v", mode, err)
			}
			for i := int32(0); i < 2; i++ { // the regions closed to make room
				got, err := q.LoadColumn(world.ChunkPos{i, 0}, world.Overworld)
				if err != nil {
					t.Fatalf("%v keep %v: column %d, whose region was closed: %v", mode, float64(keep)/2, i, err)
				}
				if err := worldtest.Compare(col(uint64(i), world.Overworld), got); err != nil {
					t.Fatalf("%v: column %d: %v", mode, i, err)
				}
			}
			q.Close()
		}
		p.Close()
	}
}

// Every call that can fail on a closed segmented world reports
// blazedb.ErrClosed, as the provider's do.
func TestClosedReportsErrClosed(t *testing.T) {
	p := openSeg(t, t.TempDir(), Config{SegmentSize: 4})
	pos := world.ChunkPos{1, 2}
	if err := p.StoreColumn(pos, world.Overworld, col(1, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_, loadErr := p.LoadColumn(pos, world.Overworld)
	_, _, spawnErr := p.LoadPlayerSpawnPosition(uuid.New())
	for name, err := range map[string]error{
		"LoadColumn":              loadErr,
		"StoreColumn":             p.StoreColumn(pos, world.Overworld, col(2, world.Overworld)),
		"LoadPlayerSpawnPosition": spawnErr,
		"SavePlayerSpawnPosition": p.SavePlayerSpawnPosition(uuid.New(), cube.Pos{}),
		"DeleteSegmentFor":        p.DeleteSegmentFor(pos, world.Overworld),
		"CompactSegment":          p.CompactSegment(pos, world.Overworld),
		"Backup":                  p.Backup(filepath.Join(t.TempDir(), "b")),
		"Sync":                    p.Sync(),
	} {
		if !errors.Is(err, blazedb.ErrClosed) {
			t.Errorf("%s on a closed world: %v, want ErrClosed", name, err)
		}
	}
}
