package demo

import (
	"log/slog"
	"testing"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 36 (demo): /snapshot saves what the World holds in memory before
// naming the state, so the snapshot has the blocks set just before it.
func TestSnapshotCommandSavesFirst(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	db, err := provider.Config{Log: log}.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: log}.New()
	defer w.Close()
	h := &history{db: db, log: log, worlds: func() []*world.World { return []*world.World{w} }}
	pos := cube.Pos{4, 70, 4}
	<-w.Do(func(tx *world.Tx) { tx.SetBlock(pos, block.Stone{}, nil) }).Done()
	if err := h.snapshot("s"); err != nil {
		t.Fatal(err)
	}
	<-w.Do(func(tx *world.Tx) { tx.SetBlock(pos, block.Glowstone{}, nil) }).Done()
	w.Save()
	v, err := db.At("s")
	if err != nil {
		t.Fatal(err)
	}
	old := world.Config{Provider: v, Dim: world.Overworld, Synchronous: true, ReadOnly: true, Log: log}.New()
	defer old.Close()
	<-old.Do(func(tx *world.Tx) {
		if _, ok := tx.Block(pos).(block.Stone); !ok {
			t.Errorf("the snapshot holds %T, not the stone set before it", tx.Block(pos))
		}
	}).Done()
	if h.allowed(nil) {
		t.Fatal("a source that is no player may run an operator command")
	}
}
