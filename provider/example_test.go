package provider_test

import (
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"

	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"

	"github.com/blazeworld/blaze/provider"
)

// A DB is a world.Provider: give it to a World (or to a server as
// conf.WorldProvider) in place of Dragonfly's LevelDB provider. The World
// closes its provider when it closes; the next Open finds what it saved.
func Example() {
	dir, err := os.MkdirTemp("", "provider-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.DiscardHandler)
	pos := cube.Pos{5, 70, -9}

	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	<-w.Do(func(tx *world.Tx) { tx.SetBlock(pos, block.Obsidian{}, nil) }).Done()
	if err := w.Close(); err != nil { // saves the column, then closes db
		log.Fatal(err)
	}

	db, err = provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	w = world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer w.Close()
	<-w.Do(func(tx *world.Tx) {
		_, ok := tx.Block(pos).(block.Obsidian)
		fmt.Println("obsidian after reopening:", ok)
	}).Done()
	// Output:
	// obsidian after reopening: true
}

// StoreColumn and LoadColumn can also be called directly, as the World
// calls them: LoadColumn returns a column the caller owns alone, and a
// missing column satisfies errors.Is(err, leveldb.ErrNotFound), as with
// Dragonfly's own provider.
func ExampleDB_StoreColumn() {
	dir, err := os.MkdirTemp("", "provider-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler)}.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	br := world.DefaultBlockRegistry
	stone := world.BlockRuntimeID(block.Stone{})
	col := &chunk.Column{Chunk: chunk.New(br, world.Overworld.Range())}
	col.Chunk.SetBlock(1, 64, 2, 0, stone)
	pos := world.ChunkPos{10, -4}
	if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
		log.Fatal(err)
	}

	got, err := db.LoadColumn(pos, world.Overworld)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stone at (1, 64, 2):", got.Chunk.Block(1, 64, 2, 0) == stone)

	_, err = db.LoadColumn(world.ChunkPos{99, 99}, world.Overworld)
	fmt.Println("missing column is leveldb.ErrNotFound:", errors.Is(err, leveldb.ErrNotFound))
	// Output:
	// stone at (1, 64, 2): true
	// missing column is leveldb.ErrNotFound: true
}
