package segment_test

import (
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"

	"github.com/blazeworld/blaze/segment"
)

// A segmented world keeps each region of SegmentSize × SegmentSize chunks
// in a Blaze database of its own, opened on first use, so that a region
// can be deleted or compacted alone. It is a world.Provider like a plain
// Blaze world: give it to a World, or call StoreColumn and LoadColumn.
func Example() {
	dir, err := os.MkdirTemp("", "segment-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	p, err := segment.Config{SegmentSize: 32, Log: slog.New(slog.DiscardHandler)}.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	stone := world.BlockRuntimeID(block.Stone{})
	for _, pos := range []world.ChunkPos{{0, 0}, {31, 31}, {32, 0}, {-1, 0}} {
		col := &chunk.Column{Chunk: chunk.New(world.DefaultBlockRegistry, world.Overworld.Range())}
		col.Chunk.SetBlock(0, 64, 0, 0, stone)
		if err := p.StoreColumn(pos, world.Overworld, col); err != nil {
			log.Fatal(err)
		}
	}
	got, err := p.LoadColumn(world.ChunkPos{32, 0}, world.Overworld)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stone in chunk (32, 0):", got.Chunk.Block(0, 64, 0, 0) == stone)
	fmt.Println("regions open:", p.OpenSegments())
	if err := p.Close(); err != nil {
		log.Fatal(err)
	}

	regions, err := segment.Regions(dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range regions {
		rel, _ := filepath.Rel(dir, r)
		fmt.Println(filepath.ToSlash(rel))
	}
	// Output:
	// stone in chunk (32, 0): true
	// regions open: 3
	// regions/0/r.-1.0
	// regions/0/r.0.0
	// regions/0/r.1.0
}
