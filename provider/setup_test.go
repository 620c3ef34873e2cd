package provider

import (
	"errors"
	"os"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 38 item 1: the README's migration in Dragonfly's usual setup
// (server.DefaultConfig, World.SaveData at its default true). Left at its
// default, UserConfig.Config opens mcdb in World.Folder and makes world/db,
// which Blaze then refuses: the error must say to turn SaveData off. With
// the README's steps exactly as written (SaveData off before
// uc.Config(log), then its three lines), the server's world is Blaze's: a
// block set through it is in Blaze after the server closes, Dragonfly
// closed the DB (it opens again, unlocked), and no LevelDB was made.
func TestDragonflyUsualSetup(t *testing.T) {
	t.Chdir(t.TempDir()) // the README's relative "world", as a server's working directory
	log := quiet

	// SaveData at its default: the conflict the README warns of.
	uc := server.DefaultConfig()
	conf, err := uc.Config(log)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Config{Log: log, Durability: blazedb.DurabilityBalanced}.Open("world")
	conf.WorldProvider.Close() // Dragonfly's mcdb, and its players' database
	conf.PlayerProvider.Close()
	if !errors.Is(err, ErrLevelDBWorld) || !containsAll(err.Error(), "World.SaveData", "blaze convert") {
		t.Fatalf("Blaze beside the mcdb Dragonfly opened: %v", err)
	}
	if err := os.RemoveAll("world"); err != nil {
		t.Fatal(err)
	}

	// The README, as written.
	uc = server.DefaultConfig()
	// The only changes a test needs: no fixed port, and no Xbox Live
	// (whose keys the listener fetches from the network).
	uc.Network.Address = "127.0.0.1:0"
	uc.Server.AuthEnabled = false
	uc.World.SaveData = false
	conf, err = uc.Config(log)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Config{Log: log, Durability: blazedb.DurabilityBalanced}.Open("world")
	if err != nil {
		t.Fatal(err)
	}
	conf.WorldProvider = db // conf is your server.Config; Dragonfly closes db when the server stops

	srv := conf.New()
	srv.Listen()
	pos := cube.Pos{5, 70, -9}
	<-srv.World().Do(func(tx *world.Tx) { tx.SetBlock(pos, block.Obsidian{}, nil) }).Done()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for range srv.Accept() { // ends once the server has closed
	}

	if _, err := os.Stat("world/db"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a LevelDB database beside Blaze's world: %v", err)
	}
	w := world.Config{Provider: openDB(t, "world", Config{}), Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer w.Close()
	<-w.Do(func(tx *world.Tx) {
		if _, ok := tx.Block(pos).(block.Obsidian); !ok {
			t.Errorf("the block set through the server is not in Blaze: %T", tx.Block(pos))
		}
	}).Done()
}
