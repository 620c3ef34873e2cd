package demo

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 40 item 2: the demo saves through checkpoints at its save
// interval, Dragonfly's own autosave off, with the players on Blaze: a
// block set in a chunk reaches the engine without a close.
func TestDemoCheckpoints(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	r, err := Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet, SaveEvery: 20 * time.Millisecond}.New()
	if err != nil {
		t.Fatal(err)
	}
	defer closeUnserved(r)
	<-r.Server.World().Do(func(tx *world.Tx) {
		tx.SetBlock(cube.Pos{400, 80, 400}, block.Obsidian{}, nil)
	}).Done()
	want := provider.Place{Pos: world.ChunkPos{25, 25}, Dim: world.Overworld}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		places, err := r.World.Columns()
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(places, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint wrote the changed chunk")
		}
	}
	if err := r.checkpoints.Stop(); err != nil {
		t.Fatalf("checkpoints failed: %v", err)
	}
}
