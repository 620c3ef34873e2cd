package segment

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

// The three dimensions of a segmented world store at once, each column in
// a region of its own, with at most two regions open: regions are made,
// closed to make room and opened again all the time, beside the pool's
// maintenance and Syncs, when the crash comes. In DurabilitySafe and
// DurabilitySafeBatch every store that returned is durable; in the other
// modes every store that returned before a Sync began, once that Sync
// returned. After the crash each column must read back as its last
// durable store left it or as a later store left it, and the world must
// take stores again.

const segColumns = 5 // columns each dimension stores to, in turn

// TestCrashConcurrentRegions crashes 40 worlds in `make test` and 1,000
// under `make soak`.
func TestCrashConcurrentRegions(t *testing.T) {
	states := worldtest.States(world.DefaultBlockRegistry)
	pool := make([]uint32, 0, len(states))
	for _, n := range slices.Sorted(maps.Keys(states)) {
		pool = append(pool, states[n])
	}
	for seed := range uint64(worldtest.Soak(40, 1_000)) {
		runConcurrentRegions(t, seed, pool)
	}
}

func runConcurrentRegions(t *testing.T, seed uint64, pool []uint32) {
	rng := rand.New(rand.NewPCG(seed, 31))
	modes := []blazedb.Durability{blazedb.DurabilitySafe, blazedb.DurabilitySafeBatch, blazedb.DurabilityBalanced, blazedb.DurabilityFast}
	mode := modes[seed%uint64(len(modes))]
	safe := mode == blazedb.DurabilitySafe || mode == blazedb.DurabilitySafeBatch
	mem := vfstest.NewMem()
	conf := Config{SegmentSize: 1, MaxOpen: 2, MaintainInterval: time.Millisecond, Durability: mode, FS: mem, Log: quiet}
	p, err := conf.Open("/w")
	if err != nil {
		t.Fatal(err)
	}
	// Syncs take long beside regions opened and closed all the time: the
	// modes that need them get longer to live, so that some complete.
	horizon := 1500
	if !safe {
		horizon = 6000
	}
	mem.CrashAfter(1 + rng.IntN(horizon))

	dims := []world.Dimension{world.Overworld, world.Nether, world.End}
	// What dimension d stored, how many of its stores returned nil, and how
	// many of those are durable.
	var versions [3]*worldtest.Versions
	var acked, durable [3]atomic.Int64
	var wg sync.WaitGroup
	for d, dim := range dims {
		drng := rand.New(rand.NewPCG(seed, uint64(d)))
		versions[d] = worldtest.NewVersions(dim, segColumns)
		wg.Go(func() {
			for i := 0; ; i++ {
				c, col := versions[d].Next(pool[drng.IntN(len(pool))])
				if err := p.StoreColumn(world.ChunkPos{int32(c), int32(d)}, dim, col); err != nil {
					return
				}
				acked[d].Store(int64(i + 1))
				if safe {
					durable[d].Store(int64(i + 1))
				}
			}
		})
	}
	done := make(chan struct{})
	var side sync.WaitGroup
	side.Go(func() { // Syncs, which the modes that do not sync each store need
		srng := rand.New(rand.NewPCG(seed, 77))
		for {
			select {
			case <-done:
				return
			default:
			}
			var before [3]int64
			for d := range before {
				before[d] = acked[d].Load()
			}
			if p.Sync() != nil {
				return
			}
			for d, n := range before {
				if !safe {
					durable[d].Store(n)
				}
			}
			time.Sleep(time.Duration(srng.IntN(50)) * time.Microsecond)
		}
	})
	wg.Wait()
	close(done)
	side.Wait()
	keep := []float64{0, 0.5, 1}[rng.IntN(3)]
	clone := mem.CrashClone(rand.New(rand.NewPCG(seed, 3)), keep)
	p.Close() // on the crashed filesystem: must not hang

	desc := fmt.Sprintf("%v seed %d keep %.1f", mode, seed, keep)
	conf.FS = clone
	q, err := conf.Open("/w")
	if err != nil {
		t.Fatalf("%s: reopen: %v", desc, err)
	}
	for d, dim := range dims {
		for c := range segColumns {
			pos := world.ChunkPos{int32(c), int32(d)}
			// The newest store of this column that is durable.
			last := -1
			for i := c; i < int(durable[d].Load()); i += segColumns {
				last = i
			}
			got, err := q.LoadColumn(pos, dim)
			if errors.Is(err, leveldb.ErrNotFound) {
				if last >= 0 {
					t.Fatalf("%s: %v column %d: its store %d was durable, and the column is gone", desc, dim, c, last)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v column %d: %v", desc, dim, c, err)
			}
			found := versions[d].Find(c, got)
			if found < 0 {
				t.Fatalf("%s: %v column %d holds a state none of its stores left", desc, dim, c)
			}
			if found < last {
				t.Fatalf("%s: %v column %d holds the state of store %d, but store %d was durable", desc, dim, c, found, last)
			}
		}
		if err := q.StoreColumn(world.ChunkPos{0, int32(d)}, dim, versions[d].After[0]); err != nil {
			t.Fatalf("%s: %v: a store after the crash: %v", desc, dim, err)
		}
	}
	if err := q.Close(); err != nil {
		t.Fatalf("%s: close: %v", desc, err)
	}
}
