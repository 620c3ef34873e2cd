package demo

import (
	"log/slog"
	"testing"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/entity"
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

// Issue 36 (demo): /rollback puts the area around the player back as the
// snapshot holds it on a running World, live, leaves the chunks outside
// it, and takes a snapshot first that undoes it.
func TestRollbackCommandRestoresLive(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	db, err := provider.Config{Log: log}.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A ticking World, as a server runs.
	w := world.Config{Provider: db, Dim: world.Overworld, Log: log, Generator: world.NopGenerator{}, Entities: entity.DefaultRegistry}.New()
	defer w.Close()
	h := &history{db: db, log: log, worlds: func() []*world.World { return []*world.World{w} }}
	in, edge, out := cube.Pos{4, 70, 4}, cube.Pos{-16, 70, 47}, cube.Pos{48, 70, 4} // chunks (0,0), (-1,2), (3,0)
	set := func(b world.Block) {
		<-w.Do(func(tx *world.Tx) {
			for _, p := range []cube.Pos{in, edge, out} {
				tx.SetBlock(p, b, nil)
			}
		}).Done()
	}
	set(block.Stone{})
	if err := h.snapshot("s"); err != nil {
		t.Fatal(err)
	}
	set(block.Glowstone{})

	if _, _, err := h.rollback(w, "nowhere", rollbackArea(w, cube.Pos{}, 2), nil); err == nil {
		t.Fatal("a rollback to no point started")
	}
	if ss, _ := db.Snapshots(); len(ss) != 1 {
		t.Fatalf("a refused rollback took a snapshot: %+v", ss)
	}
	area := rollbackArea(w, cube.Pos{7, 80, 9}, 2)
	if area.Min != (world.ChunkPos{-2, -2}) || area.Max != (world.ChunkPos{2, 2}) {
		t.Fatalf("area %+v", area)
	}
	st, undo, err := h.rollback(w, "s", area, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.BlocksSet != 2 || st.ColumnsChanged != 2 || st.Columns != 25 || st.ColumnsCompared+st.ColumnsMissing != 25 {
		t.Fatalf("stats %+v, want 2 blocks set in 2 of 25 columns", st)
	}
	blocks := func() (got []world.Block) {
		<-w.Do(func(tx *world.Tx) {
			for _, p := range []cube.Pos{in, edge, out} {
				got = append(got, tx.Block(p))
			}
		}).Done()
		return got
	}
	got := blocks()
	_, inOK := got[0].(block.Stone)
	_, edgeOK := got[1].(block.Stone)
	_, outOK := got[2].(block.Glowstone)
	if !inOK || !edgeOK || !outOK {
		t.Fatalf("after the rollback: %T in, %T at the edge, %T outside; want stone, stone, glowstone", got[0], got[1], got[2])
	}
	// Undone by the snapshot it took.
	if _, _, err := h.rollback(w, undo, area, nil); err != nil {
		t.Fatalf("undo with %q: %v", undo, err)
	}
	for i, b := range blocks() {
		if _, ok := b.(block.Glowstone); !ok {
			t.Fatalf("block %d after the undo: %T, want glowstone", i, b)
		}
	}
}
