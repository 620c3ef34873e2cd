package overlay

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// plainTemplate hides every method of its template but world.Provider's,
// as a template of another kind (a LevelDB world) has.
type plainTemplate struct{ world.Provider }

// tinyCacheTemplate opens the template in dir read-only with a column cache
// too small to keep any column that is not pinned.
func tinyCacheTemplate(t *testing.T, dir string, fs vfs.FS) *provider.DB {
	t.Helper()
	tp, err := provider.Config{Log: quiet, ReadOnly: true, ColumnCacheBytes: 1, FS: fs}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tp.Close() })
	return tp
}

// readyMade reports the ready copies db's Prefetch made.
func readyMade(db *provider.DB) int64 { made, _ := db.ReadyStats(); return made }

// A prefetch goes to whichever holds the column, the overlay for a column
// the match changed and the template for the rest, and the World's load
// then takes the ready copy.
func TestPrefetchGoesToWhoeverHoldsTheColumn(t *testing.T) {
	tp := openTemplate(t, template(t, 3))
	o, err := Config{Log: quiet}.Open(tp, filepath.Join(t.TempDir(), "arena"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	changed, kept := changedPos, world.ChunkPos{2, 2}
	orig := changeOneColumn(t, tp, o)

	inTemplate := readyMade(tp)
	if did, err := o.Prefetch(changed, world.Overworld); !did || err != nil {
		t.Fatalf("prefetch of a changed column: %v, %v", did, err)
	}
	if readyMade(o.cur) != 1 || readyMade(tp) != inTemplate {
		t.Fatal("the prefetch of a changed column did not go to the overlay alone")
	}
	if got, err := o.LoadColumn(changed, world.Overworld); err != nil || worldtest.Compare(got, orig) == nil {
		t.Fatalf("the load after the prefetch is not the match's column: %v", err)
	}
	if _, taken := o.cur.ReadyStats(); taken != 1 {
		t.Fatal("the load of a changed column did not take the overlay's ready copy")
	}

	if did, err := o.Prefetch(kept, world.Overworld); !did || err != nil {
		t.Fatalf("prefetch of a template column: %v, %v", did, err)
	}
	if readyMade(o.cur) != 1 || readyMade(tp) != inTemplate+1 {
		t.Fatal("the prefetch of a template column did not go to the template alone")
	}
	_, takenBefore := tp.ReadyStats()
	want, _ := tp.LoadColumn(kept, world.Overworld)
	if got, err := o.LoadColumn(kept, world.Overworld); err != nil || worldtest.Compare(got, want) != nil {
		t.Fatalf("the load after the prefetch is not the template's column: %v", err)
	}
	// The template's own load above took the copy, or the overlay's did.
	if _, taken := tp.ReadyStats(); taken != takenBefore+1 {
		t.Fatal("no load took the template's ready copy")
	}

	if did, err := o.Prefetch(world.ChunkPos{50, 50}, world.Overworld); did || err != nil {
		t.Fatalf("prefetch of a column neither holds: %v, %v", did, err)
	}
	plain, err := Config{Log: quiet}.Open(plainTemplate{tp}, filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Shutdown()
	if did, err := plain.Prefetch(kept, world.Overworld); did || err != nil {
		t.Fatalf("prefetch over a template that cannot prefetch: %v, %v", did, err)
	}
	if err := plain.Pin(kept, world.Overworld); err != nil {
		t.Fatalf("pin over a template that cannot pin: %v", err)
	}
	o.Close()
	if _, err := o.Prefetch(kept, world.Overworld); !errors.Is(err, blazedb.ErrClosed) {
		t.Fatalf("prefetch on a closed overlay: %v", err)
	}
	if err := o.Pin(kept, world.Overworld); !errors.Is(err, blazedb.ErrClosed) {
		t.Fatalf("pin on a closed overlay: %v", err)
	}
}

// loadHits loads pos through o twice and reports how many of the loads
// hit the column cache of db.
func loadHits(t *testing.T, o *Provider, db *provider.DB, pos world.ChunkPos) int64 {
	t.Helper()
	h0, _ := db.CacheStats()
	for range 2 {
		if _, err := o.LoadColumn(pos, world.Overworld); err != nil {
			t.Fatal(err)
		}
	}
	h1, _ := db.CacheStats()
	return h1 - h0
}

// A pin keeps the template's column in its cache, and the match's column
// in the overlay's, across a reset; Shutdown releases the template's pins.
func TestPinHoldsAcrossResets(t *testing.T) {
	tp := tinyCacheTemplate(t, template(t, 3), nil)
	o, err := Config{Log: quiet, ColumnCacheBytes: 1}.Open(tp, filepath.Join(t.TempDir(), "arena"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	pinned, other := changedPos, world.ChunkPos{0, 2}
	if n := loadHits(t, o, tp, other); n != 0 {
		t.Fatalf("%d loads of an unpinned column hit a cache of one byte", n)
	}
	if err := o.Pin(pinned, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if n := loadHits(t, o, tp, pinned); n != 2 {
		t.Fatalf("%d of 2 loads of a pinned template column hit", n)
	}
	for round := 0; round < 2; round++ {
		changeOneColumn(t, tp, o) // the pinned column, into the overlay
		if n := loadHits(t, o, o.cur, pinned); n != 2 {
			t.Fatalf("round %d: %d of 2 loads of a pinned changed column hit", round, n)
		}
		if err := o.ResetOverlay(); err != nil {
			t.Fatal(err)
		}
	}
	o.Unpin(pinned, world.Overworld)
}

// countingTemplate counts the pins its template holds for an overlay.
type countingTemplate struct {
	*provider.DB
	mu   sync.Mutex
	pins int
}

func (c *countingTemplate) Pin(pos world.ChunkPos, dim world.Dimension) error {
	err := c.DB.Pin(pos, dim)
	if err == nil {
		c.mu.Lock()
		c.pins++
		c.mu.Unlock()
	}
	return err
}

func (c *countingTemplate) Unpin(pos world.ChunkPos, dim world.Dimension) {
	c.DB.Unpin(pos, dim)
	c.mu.Lock()
	c.pins--
	c.mu.Unlock()
}

// Shutdown releases the pins an overlay holds in its template, which
// outlives it; Close, which a World calls between matches, does not.
func TestShutdownReleasesTemplatePins(t *testing.T) {
	tp := &countingTemplate{DB: openTemplate(t, template(t, 2))}
	o, err := Config{Log: quiet}.Open(tp, filepath.Join(t.TempDir(), "arena"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pos := range []world.ChunkPos{{0, 0}, {0, 0}, {1, 1}} {
		if err := o.Pin(pos, world.Overworld); err != nil {
			t.Fatal(err)
		}
	}
	o.Unpin(world.ChunkPos{1, 1}, world.Overworld)
	o.Close()
	if tp.pins != 2 {
		t.Fatalf("the template holds %d pins after Close, want 2", tp.pins)
	}
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if tp.pins != 0 {
		t.Fatalf("the template holds %d pins after Shutdown", tp.pins)
	}
}

// A Pin whose template column cannot be read returns the error and counts
// nothing.
func TestFailedPinPinsNothing(t *testing.T) {
	dir := template(t, 2)
	var failReads atomic.Bool
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		if op == vfstest.OpRead && failReads.Load() && filepath.Dir(filepath.Dir(name)) == dir && filepath.Base(name) == "chunks.dat" {
			return errors.New("injected: read fails")
		}
		return nil
	})
	tp := tinyCacheTemplate(t, dir, fs)
	o, err := Config{Log: quiet}.Open(tp, filepath.Join(t.TempDir(), "arena"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	failReads.Store(true)
	if err := o.Pin(world.ChunkPos{1, 1}, world.Overworld); err == nil {
		t.Fatal("a pin of an unreadable template column succeeded")
	}
	if len(o.pins) != 0 {
		t.Fatalf("a failed pin was counted: %v", o.pins)
	}
}

// Pins, prefetches, loads, stores and resets of one arena at once: no
// race, no deadlock, no error, and nothing counted once every pin is
// undone.
func TestPinAndPrefetchWhileResetting(t *testing.T) {
	tp := &countingTemplate{DB: openTemplate(t, template(t, 3))}
	o, err := Config{Log: quiet}.Open(tp, filepath.Join(t.TempDir(), "arena"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				pos := world.ChunkPos{int32(w), int32(i % 3)}
				steps := []func() error{
					func() error { return o.Pin(pos, world.Overworld) },
					func() error { _, err := o.Prefetch(pos, world.Overworld); return err },
					func() error {
						col, err := o.LoadColumn(pos, world.Overworld)
						if err == nil {
							err = o.StoreColumn(pos, world.Overworld, col)
						}
						return err
					},
					func() error { o.Unpin(pos, world.Overworld); return nil },
				}
				if w == 0 && i%5 == 4 {
					steps = append(steps, o.ResetOverlay)
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
	if len(o.pins) != 0 || tp.pins != 0 {
		t.Fatalf("pins left after every Unpin: %v, %d in the template", o.pins, tp.pins)
	}
}
