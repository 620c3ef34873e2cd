package segment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

// A segmented world's edition is zero while no region has one, changes
// with a stored column that differs, with a deleted region and with a
// region changed by another program, and not with an unchanged store, a
// reopen or a read; it is the same whether the first call finds the
// regions on disk or the provider noted them as they were written.
func TestEdition(t *testing.T) {
	dir := t.TempDir()
	conf := Config{SegmentSize: 4, MaxOpen: 1} // regions closed and opened again as used
	p := openSeg(t, dir, conf)
	if e := p.Edition(); !e.IsZero() {
		t.Fatalf("a new world has edition %v", e)
	}
	a, b, c := world.ChunkPos{0, 0}, world.ChunkPos{9, 9}, world.ChunkPos{-3, 0}
	for i, pos := range []world.ChunkPos{a, b, c} {
		if err := p.StoreColumn(pos, world.Overworld, col(uint64(i), world.Overworld)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.StoreColumn(a, world.Nether, col(7, world.Nether)); err != nil {
		t.Fatal(err)
	}
	e1 := p.Edition()
	if e1.IsZero() || p.Edition() != e1 {
		t.Fatalf("edition %v, then %v", e1, p.Edition())
	}
	if _, err := p.LoadColumn(b, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if err := p.StoreColumn(b, world.Overworld, col(1, world.Overworld)); err != nil { // as it was
		t.Fatal(err)
	}
	if e := p.Edition(); e != e1 {
		t.Fatalf("a read and an unchanged store changed the edition: %v, was %v", e, e1)
	}
	reopen := func() {
		t.Helper()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		p = openSeg(t, dir, conf)
	}
	reopen()
	if e := p.Edition(); e != e1 {
		t.Fatalf("reopened, the edition read from the regions is %v, was %v", e, e1)
	}

	if err := p.StoreColumn(b, world.Overworld, col(5, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	e2 := p.Edition()
	if e2 == e1 {
		t.Fatal("a changed column left the edition as it was")
	}
	reopen()
	if p.Edition() != e2 {
		t.Fatal("reopened, the edition is not the one before")
	}

	if err := p.DeleteSegmentFor(c, world.Overworld); err != nil {
		t.Fatal(err)
	}
	e3 := p.Edition()
	if e3 == e2 || e3.IsZero() {
		t.Fatalf("deleting a region gave edition %v, was %v", e3, e2)
	}
	reopen()
	if p.Edition() != e3 {
		t.Fatal("reopened after a deletion, the edition is not the one before")
	}

	// Another program (a tool) writes a region while the world is closed.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	regions, err := Regions(dir)
	if err != nil || len(regions) != 3 {
		t.Fatalf("regions %v, %v", regions, err)
	}
	r, err := provider.Config{Log: quiet, NoLevelDat: true}.Open(regions[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := r.StoreColumn(a, world.Overworld, col(11, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	p = openSeg(t, dir, conf)
	e4 := p.Edition()
	if e4 == e3 || e4.IsZero() {
		t.Fatalf("a region another program changed left the edition %v", e4)
	}

	// Damage found when a region opens again gives it a new edition (its
	// columns fell back to older versions), and so the world.
	if _, err := p.LoadColumn(a, world.Nether); err != nil { // MaxOpen 1: the others close
		t.Fatal(err)
	}
	var damaged string
	for _, r := range regions {
		if filepath.Base(r) == segName(segKey{rx: 2, rz: 2}) && filepath.Base(filepath.Dir(r)) == "0" {
			damaged = filepath.Join(r, "blaze")
		}
	}
	log := filepath.Join(damaged, "chunks.dat")
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(damaged, "index.dat")); err != nil {
		t.Fatal(err)
	}
	// The column falls back to an older version, or to none.
	if _, err := p.LoadColumn(b, world.Overworld); err != nil && !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatal(err)
	}
	if e := p.Edition(); e == e4 || e.IsZero() {
		t.Fatalf("damage found opening a region left the edition %v", e)
	}
}

// A region that cannot be opened gives a new edition at each call, never
// the old one, and its error is reported.
func TestEditionUnreadable(t *testing.T) {
	dir := t.TempDir()
	p := openSeg(t, dir, Config{SegmentSize: 4})
	if err := p.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, col(0, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	e1 := p.Edition()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	regions, err := Regions(dir)
	if err != nil || len(regions) != 1 {
		t.Fatalf("regions %v, %v", regions, err)
	}
	// A file no Blaze database holds makes the region refuse to open.
	if err := os.WriteFile(filepath.Join(regions[0], "blaze", "stranger"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	p = openSeg(t, dir, Config{SegmentSize: 4})
	e2, e3 := p.Edition(), p.Edition()
	if e2 == e1 || e3 == e1 || e2 == e3 || e2.IsZero() {
		t.Fatalf("editions %v and %v of an unreadable world, was %v", e2, e3, e1)
	}
	if err := p.Close(); !errors.Is(err, blazedb.ErrNotBlaze) {
		t.Fatalf("Close after an unreadable region: %v", err)
	}
}

// First calls of Edition racing each other open each region as often as
// one call alone does: calls that start while the first is reading the
// regions wait for it instead of reading them again.
func TestEditionFirstCallsShareTheScan(t *testing.T) {
	dir := t.TempDir()
	conf := Config{SegmentSize: 2, MaxOpen: 1} // an idle region closes, so a second scan would open it again
	p := openSeg(t, dir, conf)
	const regions = 4
	for i := range regions {
		if err := p.StoreColumn(world.ChunkPos{int32(i * 2), 0}, world.Overworld, col(uint64(i), world.Overworld)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	regionsDir := filepath.ToSlash(filepath.Join(dir, "regions")) + "/" // as Inject names files
	var (
		opens  atomic.Int32
		lastAt atomic.Int32 // once opens reaches it, the scan is opening its last region
		last   = make(chan struct{})
		signal sync.Once
	)
	conf.FS = vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		if op == vfstest.OpOpen && strings.HasPrefix(name, regionsDir) && filepath.Base(name) == "chunks.dat" {
			if n := opens.Add(1); lastAt.Load() > 0 && n >= lastAt.Load() {
				signal.Do(func() { close(last) })
			}
			time.Sleep(5 * time.Millisecond) // the later calls start while this open lasts
		}
		return nil
	})

	// What one first call opens, with nothing racing it.
	p = openSeg(t, dir, conf)
	opens.Store(0) // Open itself opens every region once, to check its size
	alone := p.Edition()
	one := opens.Load()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if one < regions || one%regions != 0 {
		t.Fatalf("a first call opened regions %d times; %d regions", one, regions)
	}

	// Seven more calls start once the first is opening the last region, by
	// when the earlier regions are closed again.
	p = openSeg(t, dir, conf)
	opens.Store(0)
	lastAt.Store(one - one/regions + 1)
	eds := make([]provider.Edition, 8)
	var wg sync.WaitGroup
	wg.Go(func() { eds[0] = p.Edition() })
	<-last
	for i := 1; i < len(eds); i++ {
		wg.Go(func() { eds[i] = p.Edition() })
	}
	wg.Wait()
	for _, e := range eds {
		if e != alone || e.IsZero() {
			t.Fatalf("racing first calls gave editions %v; alone, %v", eds, alone)
		}
	}
	if n := opens.Load(); n != one {
		t.Fatalf("%d racing first calls opened regions %d times, one call alone %d", len(eds), n, one)
	}
}

// Edition beside stores, deletions and region opens and closes, for the
// race detector; once they are done it is the edition a fresh provider
// reads from disk.
func TestEditionConcurrent(t *testing.T) {
	dir := t.TempDir()
	conf := Config{SegmentSize: 2, MaxOpen: 2}
	p := openSeg(t, dir, conf)
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 12 {
				pos := world.ChunkPos{int32(i * 2), int32(g * 2)}
				if err := p.StoreColumn(pos, world.Overworld, col(uint64(g*100+i), world.Overworld)); err != nil {
					t.Error(err)
					return
				}
				if i%5 == 4 {
					if err := p.DeleteSegmentFor(pos, world.Overworld); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			p.Edition()
		}
	}()
	wg.Wait()
	e := p.Edition()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := openSeg(t, dir, conf).Edition(); got != e || e.IsZero() {
		t.Fatalf("reopened: edition %v, was %v", got, e)
	}
}
