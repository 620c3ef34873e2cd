package tests

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// timedProvider stands between a World and a provider. It serialises the
// calls as Dragonfly's own lock around a provider does, so that a load made
// through it waits as a chunk load of the same dimension waits for the
// World's stores, and it adds up the time spent inside the provider's
// StoreColumn: the provider's share of a Save. Positions in seed are served
// from memory without asking the provider, so that a World can hold
// columns the provider has never stored (new columns). Close does nothing:
// the benchmark closes the provider once its Worlds are closed.
type timedProvider struct {
	world.Provider
	mu      sync.Mutex
	seed    map[world.ChunkPos]*chunk.Column
	storeNs atomic.Int64
	stores  atomic.Int64
}

func (t *timedProvider) LoadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.seed[pos]; ok {
		return &chunk.Column{Chunk: c.Chunk.Clone(), Tick: c.Tick, BlockEntities: slices.Clone(c.BlockEntities),
			Entities: slices.Clone(c.Entities), ScheduledBlocks: slices.Clone(c.ScheduledBlocks)}, nil
	}
	return t.Provider.LoadColumn(pos, dim)
}

func (t *timedProvider) StoreColumn(pos world.ChunkPos, dim world.Dimension, col *chunk.Column) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t0 := time.Now()
	err := t.Provider.StoreColumn(pos, dim, col)
	t.storeNs.Add(int64(time.Since(t0)))
	t.stores.Add(1)
	return err
}

func (t *timedProvider) Close() error { return nil }

// autosaveWorld is a ticking World (not Synchronous) on t that never saves
// or unloads chunks by itself: the benchmark calls Save.
func autosaveWorld(t *timedProvider) *world.World {
	return world.Config{Provider: t, Dim: world.Overworld, Log: quiet, SaveInterval: -1, ChunkUnloadInterval: time.Hour}.New()
}

// autosaveSources are the columns an autosave stores: those of the real
// worlds in ../shared (overworld only, repeated as needed) and the
// realistic synthetic ones.
func autosaveSources(b *testing.B, n int) map[string][]*chunk.Column {
	var real []*chunk.Column
	for _, c := range realWorld(b) {
		if c.Dim == world.Overworld {
			real = append(real, c.Col)
		}
	}
	out := map[string][]*chunk.Column{"realistic": realistic(n)}
	for i := range n {
		out["real"] = append(out["real"], real[i%len(real)])
	}
	return out
}

// autosavePos is where the i-th column of an autosave's set lies, the set
// at offset off (in chunks along x).
func autosavePos(i, off int) world.ChunkPos { return world.ChunkPos{int32(off + i%32), int32(i / 32)} }

// touch sets one block in each chunk at ps, alternating between two blocks
// with round, so that each Save after it stores a changed column; a block
// set to what it was leaves the column unchanged but modified.
func touch(w *world.World, ps []world.ChunkPos, round int) {
	var b world.Block = block.Stone{}
	if round%2 == 1 {
		b = block.Dirt{}
	}
	opts := &world.SetOpts{DisableBlockUpdates: true, DisableLiquidDisplacement: true}
	<-w.Do(func(tx *world.Tx) {
		for _, p := range ps {
			tx.SetBlock(cube.Pos{int(p[0])*16 + 7, 200, int(p[1])*16 + 7}, b, opts)
		}
	}).Done()
}

// BenchmarkAutosave times World.Save on a ticking World holding N modified
// columns (issue 42), for each kind of column: new (never stored), changed
// (one block set since the last Save) and unchanged (modified once, saved
// since). It reports the provider's share, the time inside its StoreColumn
// calls (store-ms), and the whole Save (save-ms), each per Save.
//
// Run with a fixed number of Saves per sample: -benchtime 5x.
func BenchmarkAutosave(b *testing.B) {
	for _, n := range []int{100, 1000} {
		srcs := autosaveSources(b, n)
		for _, src := range []string{"real", "realistic"} {
			cols := srcs[src]
			for _, kind := range []string{"new", "changed", "unchanged"} {
				for _, c := range []contender{contenders[0], contenders[2]} {
					b.Run(fmt.Sprintf("%s/%s/%s/n=%d", c.name, src, kind, n), func(b *testing.B) {
						autosave(b, c, cols, kind)
					})
				}
			}
		}
	}
}

func autosave(b *testing.B, c contender, cols []*chunk.Column, kind string) {
	n := len(cols)
	p := c.open(b, b.TempDir())
	defer p.Close()
	// The positions of the stored set; a new set is stored beside them.
	ps := make([]world.ChunkPos, n)
	for i := range ps {
		ps[i] = autosavePos(i, 0)
		// Every column stored once, so that no timed store adds block
		// dictionary entries.
		if err := p.StoreColumn(ps[i], world.Overworld, cols[i]); err != nil {
			b.Fatal(err)
		}
	}
	t := &timedProvider{Provider: p}
	var storeNs, saveNs int64
	save := func(w *world.World) {
		t.storeNs.Store(0)
		t.stores.Store(0)
		b.StartTimer()
		t0 := time.Now()
		w.Save()
		saveNs += int64(time.Since(t0))
		b.StopTimer()
		storeNs += t.storeNs.Load()
		if got := t.stores.Load(); got != int64(n) {
			b.Fatalf("Save stored %d columns, want %d", got, n)
		}
	}
	b.StopTimer()
	if kind == "new" {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			off := 64 * (i + 1)
			nps := make([]world.ChunkPos, n)
			t.seed = map[world.ChunkPos]*chunk.Column{}
			for j := range nps {
				nps[j] = autosavePos(j, off)
				t.seed[nps[j]] = cols[j]
			}
			w := autosaveWorld(t)
			touch(w, nps, 0)
			save(w)
			w.Close()
		}
	} else {
		w := autosaveWorld(t)
		touch(w, ps, 0)
		w.Save() // every column now stored as the World holds it
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if kind == "changed" {
				touch(w, ps, i+1)
			}
			save(w)
		}
		w.Close()
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(storeNs)/float64(b.N)/1e6, "store-ms")
	b.ReportMetric(float64(saveNs)/float64(b.N)/1e6, "save-ms")
}

// BenchmarkLoadDuringAutosave loads columns the World does not hold,
// through the same lock as the World's stores (as a chunk load of the same
// dimension waits for them), while the World saves 1,000 changed realistic
// columns, and reports the loads' 50th and 99th percentile latency.
func BenchmarkLoadDuringAutosave(b *testing.B) {
	const n, others = 1000, 4096
	cols := realistic(n)
	for _, c := range []contender{contenders[0], contenders[2]} {
		b.Run(c.name, func(b *testing.B) {
			p := c.open(b, b.TempDir())
			defer p.Close()
			ps := make([]world.ChunkPos, n)
			for i := range ps {
				ps[i] = autosavePos(i, 0)
				if err := p.StoreColumn(ps[i], world.Overworld, cols[i]); err != nil {
					b.Fatal(err)
				}
			}
			for i := range others {
				if err := p.StoreColumn(world.ChunkPos{int32(1000 + i%64), int32(i / 64)}, world.Overworld, cols[i%n]); err != nil {
					b.Fatal(err)
				}
			}
			t := &timedProvider{Provider: p}
			w := autosaveWorld(t)
			touch(w, ps, 0)
			w.Save()
			var lat []time.Duration
			rng := rand.New(rand.NewPCG(5, 6))
			b.StopTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				touch(w, ps, i+1)
				done := make(chan struct{})
				go func() {
					defer close(done)
					w.Save()
				}()
				b.StartTimer()
			loads:
				for {
					select {
					case <-done:
						break loads
					default:
					}
					at := world.ChunkPos{int32(1000 + rng.IntN(64)), int32(rng.IntN(others / 64))}
					t0 := time.Now()
					if _, err := t.LoadColumn(at, world.Overworld); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
				b.StopTimer()
			}
			w.Close()
			slices.Sort(lat)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(len(lat))/float64(b.N), "loads/save")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-load-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-load-µs")
		})
	}
}
