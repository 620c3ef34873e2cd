// Command demo-server runs a Dragonfly server whose worlds are stored by
// Blaze. `make run` starts it on a default world: imported on first start
// from a real Bedrock world in ../shared/testdata/worlds when there is one,
// otherwise generated (flat) as players explore.
//
//	go run ./cmd/demo-server [-addr 0.0.0.0:19132] [-world build/demo-world]
//	                         [-durability balanced] [-offline] [-import w.mcworld]
//
// It saves everything and closes cleanly on SIGINT or SIGTERM. A world
// directory it cannot use (a LevelDB world, damaged files, another server
// holding it) is reported with a non-zero exit, and nothing is written to it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/mcworld"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo-server:", err)
		os.Exit(1)
	}
}

// importWorld converts a Bedrock .mcworld into a new Blaze world at dir.
func importWorld(mcworldFile, dir string, log *slog.Logger) error {
	tmp, err := os.MkdirTemp("", "blaze-import-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := mcworld.Unpack(mcworldFile, tmp); err != nil {
		return err
	}
	r, err := convert.Convert(tmp, dir, convert.Options{Log: log})
	if err != nil {
		os.RemoveAll(dir) // never leave a half-written world
		return err
	}
	log.Info("imported a world", "from", mcworldFile, "columns", r.Columns, "unreadable", len(r.Failed), "took", r.Took)
	return nil
}

func run() error {
	addr := flag.String("addr", "0.0.0.0:19132", "address to listen on (UDP)")
	dir := flag.String("world", "build/demo-world", "world directory (created if missing)")
	mode := flag.String("durability", "balanced", "fast, balanced, safe or safebatch (see README)")
	offline := flag.Bool("offline", false, "turn Xbox Live authentication off (for local testing)")
	importFrom := flag.String("import", "", "an .mcworld file to convert into -world when -world does not exist yet")
	flag.Parse()

	durability, err := blazedb.ParseDurability(*mode)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if _, err := os.Stat(*dir); *importFrom != "" && errors.Is(err, os.ErrNotExist) {
		if err := importWorld(*importFrom, *dir, log); err != nil {
			return fmt.Errorf("import %s: %w", *importFrom, err)
		}
	}

	db, err := provider.Config{Log: log, Durability: durability}.Open(*dir)
	switch {
	case errors.Is(err, provider.ErrLevelDBWorld):
		return fmt.Errorf("%s holds a LevelDB world; convert it to Blaze first (`blaze convert`): %w", *dir, err)
	case errors.Is(err, blazedb.ErrLocked):
		return fmt.Errorf("%s is in use by another server: %w", *dir, err)
	case err != nil:
		return fmt.Errorf("cannot open the world in %s: %w", *dir, err)
	}
	abs, _ := filepath.Abs(*dir)
	log.Info("Blaze world opened", "dir", abs, "durability", durability.String(), "columns", db.Engine().Stats().ChunkKeys)

	uc := server.DefaultConfig()
	uc.Network.Address = *addr
	uc.Server.Name = "Blaze demo"
	uc.Server.AuthEnabled = !*offline
	uc.World.SaveData = false // the world provider is Blaze, set below
	uc.Players.Folder = filepath.Join(*dir, "players")
	uc.Resources.Folder = filepath.Join(*dir, "resources")
	conf, err := uc.Config(log)
	if err != nil {
		db.Close()
		return err
	}
	conf.WorldProvider = db
	if *offline {
		log.Warn("Xbox Live authentication is off: anyone can join with any name")
	}
	srv := conf.New()
	srv.CloseOnProgramEnd() // on SIGINT/SIGTERM: save every world, close Blaze
	srv.Listen()
	for range srv.Accept() {
	}
	return nil
}
