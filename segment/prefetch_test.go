package segment

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// regionDB returns the database of the open region holding pos.
func regionDB(t *testing.T, p *Provider, pos world.ChunkPos) *provider.DB {
	t.Helper()
	k, _ := p.keyFor(pos, world.Overworld)
	p.mu.Lock()
	s := p.segs[k]
	p.mu.Unlock()
	if s == nil || s.closing {
		t.Fatalf("the region of %v is not open", pos)
	}
	<-s.ready
	return s.db
}

// hitsOf reports the cache hits of the open region holding pos.
func hitsOf(t *testing.T, p *Provider, pos world.ChunkPos) int64 {
	t.Helper()
	h, _ := regionDB(t, p, pos).CacheStats()
	return h
}

// waitOpen waits until n regions are open, failing after five seconds.
func waitOpen(t *testing.T, p *Provider, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); p.OpenSegments() != n; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d regions open, want %d", p.OpenSegments(), n)
		}
	}
}

// storedAndReopened stores col(i) at the i-th of positions in a segmented
// world in dir, then reopens it, so that every region is closed.
func storedAndReopened(t *testing.T, dir string, conf Config, positions ...world.ChunkPos) *Provider {
	t.Helper()
	p := openSeg(t, dir, conf)
	for i, pos := range positions {
		if err := p.StoreColumn(pos, world.Overworld, col(uint64(i), world.Overworld)); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	return openSeg(t, dir, conf)
}

// A prefetch opens a closed region and leaves a ready copy there, which
// the World's load then takes; a region never written is not created.
func TestPrefetchOpensTheRegion(t *testing.T) {
	dir := t.TempDir()
	conf := Config{SegmentSize: 2}
	p := openSeg(t, dir, conf)
	pos := world.ChunkPos{0, 0}
	want := col(1, world.Overworld)
	if err := p.StoreColumn(pos, world.Overworld, want); err != nil {
		t.Fatal(err)
	}
	p.Close()
	p = openSeg(t, dir, conf)
	if did, err := p.Prefetch(pos, world.Overworld); !did || err != nil {
		t.Fatalf("prefetch of a stored column in a closed region: %v, %v", did, err)
	}
	if n := p.OpenSegments(); n != 1 {
		t.Fatalf("%d regions open after the prefetch, want 1", n)
	}
	got, err := p.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(got, want); err != nil {
		t.Fatal(err)
	}
	if made, taken := regionDB(t, p, pos).ReadyStats(); made != 1 || taken != 1 {
		t.Fatalf("ready copies made %d, taken %d; want 1 and 1", made, taken)
	}

	far := world.ChunkPos{100, 100}
	if did, err := p.Prefetch(far, world.Overworld); did || err != nil {
		t.Fatalf("prefetch in a region never written: %v, %v", did, err)
	}
	if k, _ := p.keyFor(far, world.Overworld); p.exists(k) || p.OpenSegments() != 1 {
		t.Fatal("a prefetch created a region")
	}
	p.Close()
	if _, err := p.Prefetch(pos, world.Overworld); !errors.Is(err, blazedb.ErrClosed) {
		t.Fatalf("prefetch after Close: %v", err)
	}
	if err := p.Pin(pos, world.Overworld); !errors.Is(err, blazedb.ErrClosed) {
		t.Fatalf("pin after Close: %v", err)
	}
}

// A pinned column keeps its region open past MaxOpen and the idle timeout,
// and stays in a column cache too small to keep anything else; Unpin lets
// the region close.
func TestPinKeepsItsRegionAndColumn(t *testing.T) {
	conf := Config{SegmentSize: 2, MaxOpen: 1, IdleTimeout: 10 * time.Millisecond, MaintainInterval: 2 * time.Millisecond,
		ColumnCacheBytes: 1}
	pinned, other := world.ChunkPos{0, 0}, world.ChunkPos{4, 0}
	p := storedAndReopened(t, t.TempDir(), conf, pinned, other)
	if err := p.Pin(pinned, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if _, err := p.LoadColumn(other, world.Overworld); err != nil {
		t.Fatal(err)
	}
	waitOpen(t, p, 1) // the other region closes when idle
	time.Sleep(50 * time.Millisecond)
	for i := 0; i < 2; i++ {
		h := hitsOf(t, p, pinned) // fails if the pinned region closed
		if _, err := p.LoadColumn(pinned, world.Overworld); err != nil {
			t.Fatal(err)
		}
		if hitsOf(t, p, pinned) != h+1 {
			t.Fatalf("load %d of the pinned column missed the cache", i)
		}
	}
	p.Unpin(pinned, world.Overworld)
	waitOpen(t, p, 0)
}

// A column of a region not written yet is pinned for when it is, and again
// when its region is deleted and written anew.
func TestPinBeforeTheRegionIsWritten(t *testing.T) {
	p := openSeg(t, t.TempDir(), Config{SegmentSize: 2, IdleTimeout: 10 * time.Millisecond, MaintainInterval: 2 * time.Millisecond,
		ColumnCacheBytes: 1})
	pos := world.ChunkPos{0, 0}
	if err := p.Pin(pos, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if k, _ := p.keyFor(pos, world.Overworld); p.exists(k) || p.OpenSegments() != 0 {
		t.Fatal("a pin created a region")
	}
	for round := 0; round < 2; round++ {
		if err := p.StoreColumn(pos, world.Overworld, col(uint64(round), world.Overworld)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // five idle timeouts
		h := hitsOf(t, p, pos)
		if _, err := p.LoadColumn(pos, world.Overworld); err != nil {
			t.Fatal(err)
		}
		if hitsOf(t, p, pos) != h+1 {
			t.Fatalf("round %d: the stored column left the cache", round)
		}
		if err := p.DeleteSegmentFor(pos, world.Overworld); err != nil {
			t.Fatal(err)
		}
	}
	p.Unpin(pos, world.Overworld)
	if err := p.StoreColumn(pos, world.Overworld, col(3, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	waitOpen(t, p, 0)
}

// A Pin that cannot read its column returns the error and counts no pin,
// whether its region was open or the Pin opened it.
func TestFailedPinPinsNothing(t *testing.T) {
	var failReads atomic.Bool
	fs := vfstest.Inject(vfstest.NewMem(), func(op vfstest.Op, name string) error {
		if op == vfstest.OpRead && failReads.Load() && filepath.Base(name) == "chunks.dat" {
			return errors.New("injected: read fails")
		}
		return nil
	})
	conf := Config{SegmentSize: 2, FS: fs}
	pos, beside := world.ChunkPos{0, 0}, world.ChunkPos{1, 0}
	p := storedAndReopened(t, "/w", conf, pos, beside)
	if _, err := p.LoadColumn(beside, world.Overworld); err != nil { // opens the region
		t.Fatal(err)
	}
	failReads.Store(true)
	if err := p.Pin(pos, world.Overworld); err == nil {
		t.Fatal("a pin of an unreadable column in an open region succeeded")
	}
	if len(p.pins) != 0 {
		t.Fatalf("a failed pin left pins %v", p.pins)
	}
	failReads.Store(false)
	p.Close()
	p = openSeg(t, "/w", conf)
	failReads.Store(true)
	if err := p.Pin(pos, world.Overworld); err == nil {
		t.Fatal("a pin of an unreadable column in a closed region succeeded")
	}
	if len(p.pins) != 0 {
		t.Fatalf("a failed pin left pins %v", p.pins)
	}
}

// A second Pin of a column whose first Pin is still reading it shares the
// read's outcome: it fails with a read that fails, and neither leaves a
// count behind; with a read that succeeds, both hold.
func TestSecondPinWaitsForTheFirstPinsRead(t *testing.T) {
	var block, failReads atomic.Bool
	var reading, release chan struct{}
	fs := vfstest.Inject(vfstest.NewMem(), func(op vfstest.Op, name string) error {
		if op != vfstest.OpRead || !block.Load() || filepath.Base(name) != "chunks.dat" {
			return nil
		}
		select {
		case reading <- struct{}{}:
		default:
		}
		<-release
		if failReads.Load() {
			return errors.New("injected: read fails")
		}
		return nil
	})
	conf := Config{SegmentSize: 2, FS: fs}
	pos, beside := world.ChunkPos{0, 0}, world.ChunkPos{1, 0}
	for _, fail := range []bool{true, false} {
		p := storedAndReopened(t, fmt.Sprintf("/w%v", fail), conf, pos, beside)
		if _, err := p.LoadColumn(beside, world.Overworld); err != nil { // opens the region
			t.Fatal(err)
		}
		k, _ := p.keyFor(pos, world.Overworld)
		reading, release = make(chan struct{}, 1), make(chan struct{})
		block.Store(true)
		failReads.Store(fail)
		first, second := make(chan error, 1), make(chan error, 1)
		go func() { first <- p.Pin(pos, world.Overworld) }()
		<-reading
		go func() { second <- p.Pin(pos, world.Overworld) }()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			p.mu.Lock()
			waiting := p.pinning[pinKey{k, pos}] != nil && p.pinning[pinKey{k, pos}].waiters == 1
			p.mu.Unlock()
			if waiting || len(second) > 0 || time.Now().After(deadline) {
				break
			}
		}
		close(release)
		errA, errB := <-first, <-second
		block.Store(false)
		if fail {
			if errA == nil || errB == nil {
				t.Fatalf("pins of an unreadable column returned %v and %v", errA, errB)
			}
			if len(p.pins) != 0 {
				t.Fatalf("failed pins left pins %v", p.pins)
			}
			continue
		}
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if n := p.pins[k][pos]; n != 2 {
			t.Fatalf("two pins counted %d", n)
		}
		p.Unpin(pos, world.Overworld)
		p.Unpin(pos, world.Overworld)
		if len(p.pins) != 0 {
			t.Fatalf("pins left after every Unpin: %v", p.pins)
		}
	}
}

// Pins, prefetches, loads, stores and deletions of several regions at
// once, with regions opening and closing under them: no race, no error,
// and once every pin is undone every region can close.
func TestPinAndPrefetchWhileRegionsComeAndGo(t *testing.T) {
	p := openSeg(t, t.TempDir(), Config{SegmentSize: 2, MaxOpen: 2, IdleTimeout: time.Millisecond, MaintainInterval: time.Millisecond})
	const workers, rounds = 3, 30
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				pos := world.ChunkPos{int32(w*2 + i%2), int32(i % 6)} // this worker's columns, three regions
				steps := []func() error{
					func() error { return p.StoreColumn(pos, world.Overworld, col(uint64(i), world.Overworld)) },
					func() error { return p.Pin(pos, world.Overworld) },
					func() error { _, err := p.Prefetch(world.ChunkPos{pos[0], pos[1] + 2}, world.Overworld); return err },
					func() error { _, err := p.LoadColumn(pos, world.Overworld); return err },
					func() error { p.Unpin(pos, world.Overworld); return nil },
				}
				if i%7 == 6 {
					steps = append(steps, func() error { return p.DeleteSegmentFor(pos, world.Overworld) })
				}
				for j, f := range steps {
					if err := f(); err != nil {
						t.Error(fmt.Errorf("worker %d, round %d, step %d: %w", w, i, j, err))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	p.mu.Lock()
	left := len(p.pins)
	p.mu.Unlock()
	if left != 0 {
		t.Fatalf("pins left after every Unpin: %v", p.pins)
	}
	waitOpen(t, p, 0)
}

// CacheStats and ReadyStats count over every region since Open, the
// regions closed or deleted since included.
func TestCacheStatsOutliveRegions(t *testing.T) {
	a, b := world.ChunkPos{0, 0}, world.ChunkPos{4, 0}
	p := storedAndReopened(t, t.TempDir(), Config{SegmentSize: 2, IdleTimeout: 10 * time.Millisecond, MaintainInterval: 2 * time.Millisecond}, a, b)
	if _, err := p.Prefetch(a, world.Overworld); err != nil {
		t.Fatal(err)
	}
	for _, pos := range []world.ChunkPos{a, b} {
		if _, err := p.LoadColumn(pos, world.Overworld); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		hits, misses := p.CacheStats()
		made, taken := p.ReadyStats()
		if hits != 1 || misses != 1 || made != 1 || taken != 1 {
			t.Fatalf("%s: hits %d, misses %d, ready copies made %d and taken %d; want 1 each", when, hits, misses, made, taken)
		}
	}
	check("both regions open")
	waitOpen(t, p, 0)
	check("both regions closed")
	if _, err := p.LoadColumn(b, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteSegmentFor(b, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if hits, misses := p.CacheStats(); hits != 1 || misses != 2 {
		t.Fatalf("after a load and the deletion of its region: hits %d, misses %d; want 1 and 2", hits, misses)
	}
}
