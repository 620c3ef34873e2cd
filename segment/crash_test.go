package segment

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

// Issue 35 item 13: a segmented world keeps the prefix property per region
// only. The package doc and the README say exactly what survives a power
// loss; this test asserts exactly that, so that neither can drift:
//
//   - in every region, the stores that survive are a prefix of the stores
//     made to that region;
//   - in DurabilitySafe and DurabilitySafeBatch, every store that returned
//     survives, so no acknowledged store is lost in any region;
//   - in every mode, every store that returned before a Sync that returned
//     survives;
//   - across regions there is no order in DurabilityBalanced and
//     DurabilityFast: some crash keeps a later store in one region and
//     loses an earlier, acknowledged one in another. Should that never
//     happen, the world would keep one order, and the docs would have to
//     say so: the test fails then too.

const (
	crashRegions       = 3 // regions along x, each SegmentSize (2) columns wide
	crashColumnsPerReg = 2
	crashColumns       = crashRegions * crashColumnsPerReg
)

// crashRegion is the region of column c of the test (chunk x = c, z = 0).
func crashRegion(c int) int { return c / crashColumnsPerReg }

// TestCrashSimulation crashes 60 segmented worlds per durability mode in
// `make test` and 1,000 under `make soak`.
func TestCrashSimulation(t *testing.T) {
	states := worldtest.States(world.DefaultBlockRegistry)
	pool := make([]uint32, 0, len(states))
	for _, n := range slices.Sorted(maps.Keys(states)) {
		if n != "minecraft:air" {
			pool = append(pool, states[n])
		}
	}
	n := worldtest.Soak(60, 1_000)
	for _, mode := range []blazedb.Durability{blazedb.DurabilityFast, blazedb.DurabilityBalanced, blazedb.DurabilitySafe, blazedb.DurabilitySafeBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			safe := mode == blazedb.DurabilitySafe || mode == blazedb.DurabilitySafeBatch
			reorders := 0
			for seed := range uint64(n) {
				if runRegionCrash(t, mode, seed, pool) {
					reorders++
				}
			}
			t.Logf("%d of %d crashes kept a later store in one region and lost an earlier acknowledged one in another", reorders, n)
			switch {
			case safe && reorders > 0:
				t.Errorf("%v lost an acknowledged store", mode)
			case !safe && reorders == 0:
				t.Errorf("no crash in %v kept a later store in one region and lost an earlier one in another: "+
					"if the world now keeps one order across regions, say so in the README and the package doc", mode)
			}
		})
	}
}

// runRegionCrash stores into the regions of a new world in turn, one store
// at a time with a Sync now and then, until a simulated power loss; then
// it checks what survived and reports whether a later store survived in
// one region while an earlier acknowledged one was lost in another.
func runRegionCrash(t *testing.T, mode blazedb.Durability, seed uint64, pool []uint32) (reordered bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 13))
	safe := mode == blazedb.DurabilitySafe || mode == blazedb.DurabilitySafeBatch
	mem := vfstest.NewMem()
	conf := Config{SegmentSize: crashColumnsPerReg, MaintainInterval: time.Millisecond, Durability: mode, FS: mem, Log: quiet}
	p, err := conf.Open("/w")
	if err != nil {
		t.Fatal(err)
	}
	mem.CrashAfter(1 + rng.IntN(400))
	v := worldtest.NewVersions(world.Overworld, crashColumns)
	acked, durable := 0, 0 // stores that returned nil; those a Sync made durable
	for i := 0; i < 2000; i++ {
		c, col := v.Next(pool[rng.IntN(len(pool))])
		if p.StoreColumn(world.ChunkPos{int32(c), 0}, world.Overworld, col) != nil {
			break
		}
		acked = i + 1
		if safe {
			durable = acked
		}
		if rng.IntN(25) == 0 {
			if p.Sync() != nil {
				break
			}
			durable = acked
		}
		if rng.IntN(4) == 0 {
			time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond) // let the pool sync some regions
		}
	}
	keep := []float64{0, 0.5, 1}[rng.IntN(3)]
	clone := mem.CrashClone(rand.New(rand.NewPCG(seed, 14)), keep)
	p.Close() // on the crashed filesystem: must not hang
	desc := fmt.Sprintf("%v seed %d keep %.1f", mode, seed, keep)

	conf.FS = clone
	q, err := conf.Open("/w")
	if err != nil {
		t.Fatalf("%s: reopen: %v", desc, err)
	}
	defer q.Close()
	// got[c] is the store whose version column c holds, -1 for none.
	var got [crashColumns]int
	for c := range crashColumns {
		col, err := q.LoadColumn(world.ChunkPos{int32(c), 0}, world.Overworld)
		switch {
		case errors.Is(err, leveldb.ErrNotFound):
			got[c] = -1
		case err != nil:
			t.Fatalf("%s: column %d: %v", desc, c, err)
		default:
			if got[c] = v.Find(c, col); got[c] < 0 {
				t.Fatalf("%s: column %d holds a state none of its stores left", desc, c)
			}
		}
	}
	// lastTo returns the last store to column c at or before store i, -1
	// for none (store j went to column j % crashColumns).
	lastTo := func(c, i int) int {
		if i < c {
			return -1
		}
		return i - (i-c)%crashColumns
	}
	var newest [crashRegions]int // the newest store that survived in each region
	for r := range newest {
		newest[r] = -1
	}
	for c, g := range got {
		if last := lastTo(c, durable-1); g < last {
			t.Fatalf("%s: column %d holds store %d, but store %d was durable", desc, c, g, last)
		}
		newest[crashRegion(c)] = max(newest[crashRegion(c)], g)
	}
	// Per region a prefix: every store to the region before its newest
	// survivor survived, so each of its columns holds its last store up
	// to that one.
	for c, g := range got {
		if want := lastTo(c, newest[crashRegion(c)]); g != want {
			t.Fatalf("%s: region %d kept store %d but column %d holds store %d, not %d: not a prefix of the region's stores",
				desc, crashRegion(c), newest[crashRegion(c)], c, g, want)
		}
	}
	// Across regions: the first store each region lost, against the
	// newest survivor of every other region.
	for a := range crashRegions {
		lost := -1 // the first store to region a after its newest survivor
		for i := newest[a] + 1; i < acked; i++ {
			if crashRegion(i%crashColumns) == a {
				lost = i
				break
			}
		}
		if lost < 0 {
			continue
		}
		for b := range crashRegions {
			if b != a && newest[b] > lost {
				reordered = true
			}
		}
	}
	return reordered
}
