package prefetch_test

import (
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"

	"github.com/blazeworld/blaze/prefetch"
	"github.com/blazeworld/blaze/provider"
)

// exampleWorld makes a Blaze world in a temporary directory with the
// columns within radius chunks of (0, 0) stored.
func exampleWorld(radius int32) (*provider.DB, func()) {
	dir, err := os.MkdirTemp("", "prefetch-example")
	if err != nil {
		log.Fatal(err)
	}
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler)}.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	stone := world.BlockRuntimeID(block.Stone{})
	for x := -radius; x <= radius; x++ {
		for z := -radius; z <= radius; z++ {
			col := &chunk.Column{Chunk: chunk.New(world.DefaultBlockRegistry, world.Overworld.Range())}
			col.Chunk.SetBlock(0, 64, 0, 0, stone)
			if err := db.StoreColumn(world.ChunkPos{x, z}, world.Overworld, col); err != nil {
				log.Fatal(err)
			}
		}
	}
	return db, func() { db.Close(); os.RemoveAll(dir) }
}

// A Prefetcher follows players (UpdatePlayer on every move, Teleport
// before a teleport; prefetch.Handler calls both from Dragonfly's player
// handler) and has its workers decode the columns about to come into view,
// so that the World's LoadColumn takes a ready copy instead of reading and
// decoding on the tick.
func Example() {
	db, done := exampleWorld(2)
	defer done()

	pf := prefetch.New(db, prefetch.Options{ViewRadius: 1})
	defer pf.Close()

	// A player is about to appear at the centre of chunk (0, 0): its view of
	// radius 1 is the 3 × 3 chunks around it.
	pf.Teleport(uuid.New(), mgl64.Vec3{8, 70, 8}, world.Overworld)
	for deadline := time.Now().Add(10 * time.Second); pf.Stats().Loaded < 9 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("columns prefetched:", pf.Stats().Loaded)

	// The World's load of one of them takes the ready copy.
	if _, err := db.LoadColumn(world.ChunkPos{1, 1}, world.Overworld); err != nil {
		log.Fatal(err)
	}
	_, taken := db.ReadyStats()
	fmt.Println("ready copies taken by loads:", taken)
	// Output:
	// columns prefetched: 9
	// ready copies taken by loads: 1
}

// PinArea keeps an area (a spawn, an arena) cached however much else is
// loaded, until UnpinArea with the same arguments. It returns once every
// column is in the cache.
func ExamplePrefetcher_PinArea() {
	db, done := exampleWorld(1)
	defer done()
	pf := prefetch.New(db, prefetch.Options{})
	defer pf.Close()

	spawn := world.ChunkPos{0, 0}
	if err := pf.PinArea(spawn, 1, world.Overworld); err != nil {
		log.Fatal(err)
	}
	defer pf.UnpinArea(spawn, 1, world.Overworld)

	hitsBefore, _ := db.CacheStats()
	if _, err := db.LoadColumn(world.ChunkPos{-1, 1}, world.Overworld); err != nil {
		log.Fatal(err)
	}
	hits, _ := db.CacheStats()
	fmt.Println("load served from the cache:", hits-hitsBefore == 1)
	// Output:
	// load served from the cache: true
}
