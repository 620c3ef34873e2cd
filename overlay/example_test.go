package overlay_test

import (
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"

	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
)

// An arena: a read-only template world under a disposable overlay. A match
// plays on the overlay; ResetOverlay forgets everything it changed, in
// milliseconds however large the map, and the next match starts from the
// template again. The template is never written.
func Example() {
	root, err := os.MkdirTemp("", "overlay-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	quiet := slog.New(slog.DiscardHandler)
	pos := cube.Pos{4, 100, 4}

	// The template: an ordinary Blaze world, built once, then opened
	// read-only so that nothing can change the map under its overlays.
	tdir := filepath.Join(root, "template")
	tw, err := provider.Config{Log: quiet}.Open(tdir)
	if err != nil {
		log.Fatal(err)
	}
	w := world.Config{Provider: tw, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	<-w.Do(func(tx *world.Tx) { tx.SetBlock(pos, block.Stone{}, nil) }).Done()
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	template, err := provider.Config{Log: quiet, ReadOnly: true}.Open(tdir)
	if err != nil {
		log.Fatal(err)
	}
	defer template.Close()

	arena, err := overlay.Config{Log: quiet}.Open(template, filepath.Join(root, "arena"))
	if err != nil {
		log.Fatal(err)
	}
	defer arena.Shutdown() // the arena is retired: also drops its spare generation

	for match := 1; match <= 2; match++ {
		w := world.Config{Provider: arena, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
		<-w.Do(func(tx *world.Tx) {
			fmt.Printf("match %d starts with %s\n", match, name(tx.Block(pos)))
			tx.SetBlock(pos, block.Air{}, nil) // a player breaks it
		}).Done()
		if err := w.Close(); err != nil { // saves into the overlay and closes it
			log.Fatal(err)
		}
		if err := arena.ResetOverlay(); err != nil { // forget the match
			log.Fatal(err)
		}
	}
	// Output:
	// match 1 starts with minecraft:stone
	// match 2 starts with minecraft:stone
}

func name(b world.Block) string {
	n, _ := b.EncodeBlock()
	return n
}
