package provider

import (
	"errors"
	"fmt"
	"math/rand/v2"
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

// The crash simulation in crash_test.go drives a world from one goroutine.
// Here the three dimensions store at once, as their three Worlds do, while
// compactions run beside them; the blocks they set come from one pool, so
// a dimension often uses a block dictionary entry another is adding at
// that moment. After a crash every store acknowledged as durable reads
// back exactly, and each dimension's columns hold the state after some
// prefix of its stores: never a column without the entries it uses.

const dimColumns = 3 // columns each dimension stores to, in turn

// dimStores is the most stores a dimension makes, within what Versions can
// make of each of its columns (a nether column holds 2,048 of them).
const dimStores = 1500

// TestCrashConcurrentDimensions crashes 40 worlds (10 a mode) in `make
// test` and 2,000 under `make soak`.
func TestCrashConcurrentDimensions(t *testing.T) {
	modes := []blazedb.Durability{blazedb.DurabilitySafe, blazedb.DurabilitySafeBatch, blazedb.DurabilityBalanced, blazedb.DurabilityFast}
	for seed := range uint64(worldtest.Soak(40, 2_000)) {
		runConcurrentDims(t, modes[seed%uint64(len(modes))], seed)
	}
}

// dimWrites is what one dimension stored.
type dimWrites struct {
	dim world.Dimension
	v   *worldtest.Versions
}

func runConcurrentDims(t *testing.T, mode blazedb.Durability, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 29))
	fs := vfstest.NewMem()
	// A quarter of the seeds, in every mode, rename as Windows must
	// (blazedb's files.go): its compactions rename the log aside.
	fs.SetWindows((seed/4)%4 == 3)
	conf := Config{FS: fs, Log: quiet, Durability: mode, ColumnCacheBytes: -int64(rng.IntN(2))}
	db, err := conf.Open("/w")
	if err != nil {
		t.Fatal(err)
	}
	states := faithfulStates()
	// Fewer states than stores, so that the dimensions share entries. No
	// air: a column's versions must differ (worldtest.Versions).
	air, ok := world.DefaultBlockRegistry.StateToRuntimeID("minecraft:air", nil)
	if !ok {
		t.Fatal("no air in the registry")
	}
	pool := make([]uint32, 40)
	for i := range pool {
		for pool[i] = air; pool[i] == air; {
			pool[i] = states[rng.IntN(len(states))]
		}
	}
	fs.CrashAfter(1 + rng.IntN(600))

	dims := []*dimWrites{{dim: world.Overworld}, {dim: world.Nether}, {dim: world.End}}
	for _, dw := range dims {
		dw.v = worldtest.NewVersions(dw.dim, dimColumns)
	}
	safe := mode == blazedb.DurabilitySafe || mode == blazedb.DurabilitySafeBatch
	var acked, durable [3]atomic.Int64
	var wg sync.WaitGroup
	for d, dw := range dims {
		drng := rand.New(rand.NewPCG(seed, uint64(d)))
		wg.Go(func() {
			// Issue 42: queued stores are written in batches, one write
			// for many stores, so the crash may come after more stores
			// than worldtest.Versions can make of a column: each
			// dimension stops after dimStores, and the crash then comes
			// at the end.
			for i := 0; i < dimStores; i++ {
				p, col := dw.v.Next(pool[drng.IntN(len(pool))])
				if err := db.StoreColumn(world.ChunkPos{int32(p), 0}, dw.dim, col); err != nil {
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
	side.Go(func() { // compactions, and Syncs in the modes that need them
		srng := rand.New(rand.NewPCG(seed, 99))
		for {
			select {
			case <-done:
				return
			default:
			}
			if srng.IntN(8) == 0 {
				if db.Engine().Compact() != nil {
					return
				}
				continue
			}
			var before [3]int64
			for d := range before {
				before[d] = acked[d].Load()
			}
			if db.Sync() != nil {
				return
			}
			for d, n := range before {
				if !safe {
					durable[d].Store(n)
				}
			}
			time.Sleep(time.Duration(srng.IntN(200)) * time.Microsecond)
		}
	})
	wg.Wait()
	close(done)
	side.Wait()
	keep := []float64{0, 0.5, 1}[rng.IntN(3)]
	after := fs.CrashClone(rand.New(rand.NewPCG(seed, 5)), keep)
	db.Discard()

	desc := fmt.Sprintf("mode %v seed %d keep %.1f", mode, seed, keep)
	conf.FS = after
	db, err = conf.Open("/w")
	if err != nil {
		t.Fatalf("%s: reopen: %v", desc, err)
	}
	defer db.Close()
	if err := db.Engine().Check(); err != nil {
		t.Fatalf("%s: Check: %v", desc, err)
	}
	for d, dw := range dims {
		lo, hi := dimPrefix(t, db, dw, desc)
		if n := durable[d].Load(); hi < n {
			t.Fatalf("%s: %v: %d stores were durable, but the columns hold the state after %d to %d of them", desc, dw.dim, n, lo, hi)
		}
	}
}

// dimPrefix loads dw's columns and returns the range of store counts c such
// that they hold the state after dw's first c stores; it fails the test
// when there is none.
func dimPrefix(t *testing.T, db *DB, dw *dimWrites, desc string) (lo, hi int64) {
	lo, hi = 0, 1<<62
	for p := range dimColumns {
		got, err := db.LoadColumn(world.ChunkPos{int32(p), 0}, dw.dim)
		if errors.Is(err, leveldb.ErrNotFound) {
			hi = min(hi, int64(p)) // its first store came later
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v column %d: %v", desc, dw.dim, p, err)
		}
		i := dw.v.Find(p, got)
		if i < 0 {
			t.Fatalf("%s: %v column %d holds a state none of its stores left", desc, dw.dim, p)
		}
		// Store i is the column's newest: the next, i+dimColumns, is not
		// in the prefix.
		lo, hi = max(lo, int64(i+1)), min(hi, int64(i+dimColumns))
	}
	if lo > hi {
		t.Fatalf("%s: %v: no prefix of its stores leaves its columns as they are (after %d, and before %d)", desc, dw.dim, lo, hi)
	}
	return lo, hi
}
