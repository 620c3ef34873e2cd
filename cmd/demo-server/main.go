// Command demo-server runs a Dragonfly server whose worlds are stored by
// Blaze. `make run` starts it on a default world: imported on first start
// from a real Bedrock world in ../shared/testdata/worlds when there is one,
// otherwise generated (flat) as players explore.
//
//	go run ./cmd/demo-server [-addr 0.0.0.0:19132] [-world build/demo-world]
//	                         [-durability balanced] [-offline] [-import w.mcworld]
//	                         [-arena TEMPLATE_DIR]
//
// It saves everything and closes cleanly on SIGINT or SIGTERM. A world
// directory it cannot use (a LevelDB world, damaged files, another server
// holding it) is reported with a non-zero exit, and nothing is written to it.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/demo"
	"github.com/blazeworld/blaze/prefetch"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo-server:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "0.0.0.0:19132", "address to listen on (UDP)")
	dir := flag.String("world", "build/demo-world", "world directory (created if missing)")
	mode := flag.String("durability", "balanced", "fast, balanced, safe or safebatch (see README)")
	offline := flag.Bool("offline", false, "turn Xbox Live authentication off (for local testing)")
	importFrom := flag.String("import", "", "an .mcworld file to convert into -world when -world does not exist yet")
	arena := flag.String("arena", "", "arena mode: a Blaze world to use read-only as the map; -world then holds the match's changes, forgotten at every start")
	flag.Parse()

	durability, err := blazedb.ParseDurability(*mode)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r, err := demo.Config{Addr: *addr, Dir: *dir, Durability: durability, Offline: *offline, Import: *importFrom, ArenaTemplate: *arena, Log: log}.New()
	if err != nil {
		return err
	}
	r.Server.CloseOnProgramEnd() // on SIGINT/SIGTERM: save every world, close Blaze
	var pf *prefetch.Prefetcher
	if r.Arena == nil { // an arena's provider is its overlay; its template has its own cache
		pf = prefetch.New(r.World, prefetch.Options{})
		defer pf.Close()
	}
	r.Server.Listen()
	for p := range r.Server.Accept() {
		if pf != nil {
			p.Handle(prefetch.Handler{P: pf}) // warm the chunks ahead of every player
		}
	}
	return nil
}
