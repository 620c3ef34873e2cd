package provider

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 35 item 1: a server's open refuses a world whose log lost bytes
// index.dat shows were durable, unless Config.AcceptDurableLoss, which
// opens it without them.
func TestAcceptDurableLoss(t *testing.T) {
	dir := t.TempDir()
	dictWorld(t, dir, 4)
	log := filepath.Join(dir, engineDir, "chunks.dat")
	fi, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(log, fi.Size()*3/4); err != nil {
		t.Fatal(err)
	}
	if _, err := (Config{Log: quiet}).Open(dir); !errors.Is(err, blazedb.ErrDurableLoss) {
		t.Fatalf("open of a log that lost durable bytes: %v, want ErrDurableLoss", err)
	}
	db := openDB(t, dir, Config{AcceptDurableLoss: true})
	if got := db.Engine().Recovery().LostBytes; got == 0 {
		t.Fatal("the loss was accepted without being reported in Recovery")
	}
	if _, err := db.LoadColumn(world.ChunkPos{0, 0}, world.Overworld); err != nil {
		t.Fatalf("a column before the cut: %v", err)
	}
}
