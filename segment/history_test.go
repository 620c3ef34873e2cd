package segment

import (
	"errors"
	"slices"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

// Issue 36 (segmented worlds): a snapshot across regions, a View of it
// that a real World reads (regions closing meanwhile), ChangedSince over
// regions old and new, and deletion; across a reopen.
func TestSegmentedHistory(t *testing.T) {
	dir := t.TempDir()
	p := openSeg(t, dir, Config{SegmentSize: 4, MaxOpen: 1})
	synth := func(i uint64) *chunk.Column {
		return worldtest.Synthetic(i, world.Overworld, world.DefaultBlockRegistry)
	}
	a, b, c := world.ChunkPos{0, 0}, world.ChunkPos{5, 0}, world.ChunkPos{9, 9} // regions r.0.0, r.1.0, r.2.2
	for i, pos := range []world.ChunkPos{a, b} {
		if err := p.StoreColumn(pos, world.Overworld, synth(uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	player := uuid.New()
	if err := p.SavePlayerSpawnPosition(player, cube.Pos{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := p.Snapshot("s"); err != nil {
		t.Fatal(err)
	}
	if err := p.Snapshot("s"); !errors.Is(err, blazedb.ErrExists) {
		t.Fatalf("a snapshot name taken twice: %v", err)
	}
	for i, pos := range []world.ChunkPos{b, c} {
		if err := p.StoreColumn(pos, world.Overworld, synth(uint64(i+10))); err != nil {
			t.Fatal(err)
		}
	}
	p.SavePlayerSpawnPosition(player, cube.Pos{4, 5, 6})
	p.Close()
	p = openSeg(t, dir, Config{SegmentSize: 4, MaxOpen: 1})

	got, err := p.ChangedSince("s")
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Place{{Pos: b, Dim: world.Overworld}, {Pos: c, Dim: world.Overworld}}
	if !slices.Equal(got, want) {
		t.Fatalf("ChangedSince: %v, want %v", got, want)
	}
	v, err := p.At("s")
	if err != nil {
		t.Fatal(err)
	}
	for i, pos := range []world.ChunkPos{a, b} {
		col, err := v.LoadColumn(pos, world.Overworld)
		if err != nil {
			t.Fatal(err)
		}
		if err := worldtest.Compare(synth(uint64(i+1)), col); err != nil {
			t.Fatalf("%v at the snapshot: %v", pos, err)
		}
	}
	if _, err := v.LoadColumn(c, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("a region made after the snapshot: %v", err)
	}
	if pos, ok, err := v.LoadPlayerSpawnPosition(player); err != nil || !ok || pos != (cube.Pos{1, 2, 3}) {
		t.Fatalf("spawn at the snapshot: %v %v %v", pos, ok, err)
	}
	if err := p.DeleteSnapshot("s"); !errors.Is(err, provider.ErrSnapshotInUse) {
		t.Fatalf("deleting a snapshot a View reads: %v", err)
	}
	w := world.Config{Provider: v, Dim: world.Overworld, Synchronous: true, ReadOnly: true, Log: quiet}.New()
	<-w.Do(func(tx *world.Tx) {
		if _, ok := tx.Block(cube.Pos{150, 64, 150}).(block.Air); !ok {
			t.Errorf("a block of a region made later: %T", tx.Block(cube.Pos{150, 64, 150}))
		}
		tx.Block(cube.Pos{80, 0, 0}) // region r.1.0's column, read through the View
	}).Done()
	if err := w.Close(); err != nil { // closes v
		t.Fatal(err)
	}
	if err := p.DeleteSnapshot("s"); err != nil {
		t.Fatal(err)
	}
	if ss, err := p.Snapshots(); err != nil || len(ss) != 0 {
		t.Fatalf("Snapshots after delete: %v %v", ss, err)
	}
	if _, err := p.At("s"); !errors.Is(err, provider.ErrPoint) {
		t.Fatalf("a deleted snapshot: %v", err)
	}
}

// Issue 36 (segmented worlds): Revert puts every region back, empties a
// region made after the snapshot, and can be undone; each changes the
// world's edition, as an overlay over it must see.
func TestSegmentedRevert(t *testing.T) {
	dir := t.TempDir()
	p := openSeg(t, dir, Config{SegmentSize: 4, MaxOpen: 1})
	synth := func(i uint64) *chunk.Column {
		return worldtest.Synthetic(i, world.Overworld, world.DefaultBlockRegistry)
	}
	a, b, c := world.ChunkPos{0, 0}, world.ChunkPos{5, 0}, world.ChunkPos{9, 9}
	p.StoreColumn(a, world.Overworld, synth(1))
	p.StoreColumn(b, world.Overworld, synth(2))
	if err := p.Snapshot("s"); err != nil {
		t.Fatal(err)
	}
	p.StoreColumn(a, world.Overworld, synth(11))
	p.StoreColumn(b, world.Overworld, synth(12))
	p.StoreColumn(c, world.Overworld, synth(13)) // a region made after "s"
	if err := p.Snapshot("after"); err != nil {
		t.Fatal(err)
	}
	notB := func(pl provider.Place) bool { return pl.Pos != b }
	ed := p.Edition()
	n, err := p.Revert("s", notB)
	if err != nil || n != 2 {
		t.Fatalf("Revert: %d columns, %v", n, err)
	}
	if p.Edition() == ed {
		t.Fatal("the edition did not change with a revert of two columns")
	}
	load := func(pos world.ChunkPos, seed uint64) {
		t.Helper()
		got, err := p.LoadColumn(pos, world.Overworld)
		if seed == 0 {
			if !errors.Is(err, leveldb.ErrNotFound) {
				t.Fatalf("%v should be missing: %v", pos, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := worldtest.Compare(synth(seed), got); err != nil {
			t.Fatalf("%v is not version %d: %v", pos, seed, err)
		}
	}
	load(a, 1)
	load(b, 12)
	load(c, 0)
	ed = p.Edition()
	if _, err := p.Revert("after", nil); err != nil {
		t.Fatal(err)
	}
	if p.Edition() == ed {
		t.Fatal("the edition did not change with the revert undone")
	}
	load(a, 11)
	load(c, 13)
}
