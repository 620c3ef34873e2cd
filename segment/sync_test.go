package segment

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

// Sync makes every store and player spawn that returned before it durable
// in the modes that do not sync each store: in open regions, the root
// world, and regions that were closed to make room. Without it, a crash in
// DurabilityFast loses what the open regions hold.
func TestSyncMakesStoresDurable(t *testing.T) {
	for _, mode := range []blazedb.Durability{blazedb.DurabilityFast, blazedb.DurabilityBalanced} {
		mem := vfstest.NewMem()
		// No maintenance: nothing syncs but Sync and the closes.
		p, err := Config{SegmentSize: 1, MaxOpen: 2, MaintainInterval: time.Hour, Durability: mode, FS: mem, Log: quiet}.Open("/w")
		if err != nil {
			t.Fatal(err)
		}
		const n = 5 // regions, of which MaxOpen stay open
		for i := range int32(n) {
			if err := p.StoreColumn(world.ChunkPos{i, 0}, world.Overworld, col(uint64(i), world.Overworld)); err != nil {
				t.Fatal(err)
			}
		}
		player := uuid.New()
		if err := p.SavePlayerSpawnPosition(player, [3]int{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		if mode == blazedb.DurabilityFast {
			q, err := Config{FS: mem.CrashClone(rand.New(rand.NewPCG(1, 2)), 0), Log: quiet}.Open("/w")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := q.LoadColumn(world.ChunkPos{n - 1, 0}, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
				t.Fatalf("without Sync, a crash kept the newest column of a fast world (%v): the test shows nothing", err)
			}
			q.Close()
		}
		if err := p.Sync(); err != nil {
			t.Fatal(err)
		}
		for keep := range 3 {
			q, err := Config{FS: mem.CrashClone(rand.New(rand.NewPCG(uint64(keep), 9)), float64(keep)/2), Log: quiet}.Open("/w")
			if err != nil {
				t.Fatalf("%v: reopen after a crash: %v", mode, err)
			}
			for i := range int32(n) {
				got, err := q.LoadColumn(world.ChunkPos{i, 0}, world.Overworld)
				if err != nil {
					t.Fatalf("%v keep %v: column %d after Sync: %v", mode, float64(keep)/2, i, err)
				}
				if err := worldtest.Compare(col(uint64(i), world.Overworld), got); err != nil {
					t.Fatalf("%v: column %d: %v", mode, i, err)
				}
			}
			if pos, ok, err := q.LoadPlayerSpawnPosition(player); err != nil || !ok || pos != [3]int{1, 2, 3} {
				t.Fatalf("%v: the player's spawn after Sync: %v %v %v", mode, pos, ok, err)
			}
			q.Close()
		}
		p.Close()
	}
}

// Sync waits for a region being closed: what was stored into it before
// Sync began is durable only once its close is, so Sync returns after
// that close and not before.
func TestSyncWaitsForClosingRegion(t *testing.T) {
	mem := vfstest.NewMem()
	var armed atomic.Bool
	blocked, release := make(chan struct{}), make(chan struct{})
	fsys := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
		if op == vfstest.OpSync && strings.Contains(name, "/r.0.0/") && armed.CompareAndSwap(true, false) {
			close(blocked)
			<-release
		}
		return nil
	})
	// The pool closes a region once it is idle for a millisecond.
	p, err := Config{SegmentSize: 1, IdleTimeout: time.Millisecond, MaintainInterval: time.Millisecond,
		Durability: blazedb.DurabilityFast, FS: fsys, Log: quiet}.Open("/w")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, col(1, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	<-blocked // the pool is closing the region, syncing it
	synced := make(chan error, 1)
	go func() { synced <- p.Sync() }()
	select {
	case err := <-synced:
		close(release)
		t.Fatalf("Sync returned (%v) while a region holding a store made before it was still closing", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-synced; err != nil {
		t.Fatal(err)
	}
	q, err := Config{FS: mem.CrashClone(rand.New(rand.NewPCG(4, 5)), 0), Log: quiet}.Open("/w")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	got, err := q.LoadColumn(world.ChunkPos{0, 0}, world.Overworld)
	if err != nil {
		t.Fatalf("the column stored before Sync, after a crash: %v", err)
	}
	if err := worldtest.Compare(col(1, world.Overworld), got); err != nil {
		t.Fatal(err)
	}
}
