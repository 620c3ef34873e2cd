// Command demo-server runs a Dragonfly server whose worlds are stored by
// Blaze. `make run` starts it on a default world that is generated (flat) on
// first start.
//
//	go run ./cmd/demo-server [-addr 0.0.0.0:19132] [-world build/demo-world]
//	                         [-durability balanced] [-offline]
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
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server"
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
	flag.Parse()

	durability, err := blazedb.ParseDurability(*mode)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

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
	log.Info("Blaze world opened", "dir", abs, "durability", durability.String(), "columns", db.Engine().Stats().Keys)

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
