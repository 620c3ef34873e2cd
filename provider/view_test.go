package provider

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

// Issue 36 (provider): a real Dragonfly World reads a View of a snapshot
// and sees the world as it was: blocks, a column made later missing, the
// player spawns of then; the View is read-only and holds its snapshot.
func TestViewInWorld(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer w.Close()
	player := uuid.New()
	stone, far := cube.Pos{3, 64, 3}, cube.Pos{200, 64, 200}
	<-w.Do(func(tx *world.Tx) {
		tx.SetBlock(stone, block.Stone{}, nil)
		tx.SetBlock(cube.Pos{-20, -50, 40}, block.Obsidian{}, nil)
	}).Done()
	w.Save()
	if err := db.SavePlayerSpawnPosition(player, cube.Pos{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := db.Snapshot("before"); err != nil {
		t.Fatal(err)
	}
	<-w.Do(func(tx *world.Tx) {
		tx.SetBlock(stone, block.Glowstone{}, nil)
		tx.SetBlock(far, block.Stone{}, nil) // a column made after the snapshot
	}).Done()
	w.Save()
	if err := db.SavePlayerSpawnPosition(player, cube.Pos{7, 8, 9}); err != nil {
		t.Fatal(err)
	}

	v, err := db.At("before")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.LoadColumn(world.ChunkPos{12, 12}, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("a column made after the snapshot: %v", err)
	}
	if err := db.DeleteSnapshot("before"); !errors.Is(err, ErrSnapshotInUse) {
		t.Fatalf("deleting a snapshot a View reads: %v", err)
	}
	if err := v.StoreColumn(world.ChunkPos{}, world.Overworld, worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)); !errors.Is(err, blazedb.ErrReadOnly) {
		t.Fatalf("a View stored a column: %v", err)
	}
	if pos, ok, err := v.LoadPlayerSpawnPosition(player); err != nil || !ok || pos != (cube.Pos{1, 2, 3}) {
		t.Fatalf("the spawn of then: %v %v %v", pos, ok, err)
	}
	if _, ok, err := v.LoadPlayerSpawnPosition(uuid.New()); err != nil || ok {
		t.Fatalf("an unknown player: %v %v", ok, err)
	}
	if v.Settings() == db.Settings() {
		t.Fatal("a View shares its DB's settings")
	}

	old := world.Config{Provider: v, Dim: world.Overworld, Synchronous: true, ReadOnly: true, Log: quiet}.New()
	<-old.Do(func(tx *world.Tx) {
		if b, ok := tx.Block(stone).(block.Stone); !ok {
			t.Errorf("the View's block: %T %v", tx.Block(stone), b)
		}
		if _, ok := tx.Block(cube.Pos{-20, -50, 40}).(block.Obsidian); !ok {
			t.Errorf("the View's obsidian: %T", tx.Block(cube.Pos{-20, -50, 40}))
		}
		if _, ok := tx.Block(far).(block.Air); !ok {
			t.Errorf("a block stored after the snapshot: %T", tx.Block(far))
		}
	}).Done()
	if err := old.Close(); err != nil { // closes the View
		t.Fatal(err)
	}
	// The live world is untouched, and the snapshot free to delete.
	<-w.Do(func(tx *world.Tx) {
		if _, ok := tx.Block(stone).(block.Glowstone); !ok {
			t.Errorf("the live block: %T", tx.Block(stone))
		}
	}).Done()
	if _, err := v.LoadColumn(world.ChunkPos{0, 0}, world.Overworld); !errors.Is(err, ErrClosed) {
		t.Fatalf("a closed View loaded: %v", err)
	}
	if err := db.DeleteSnapshot("before"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.At("before"); !errors.Is(err, ErrPoint) {
		t.Fatalf("a deleted snapshot: %v", err)
	}
}

// storeVersion stores column version i (a synthetic column) at pos.
func storeVersion(t testing.TB, db *DB, pos world.ChunkPos, i uint64) *chunk.Column {
	t.Helper()
	if err := db.StoreColumn(pos, world.Overworld, worldtest.Synthetic(i, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	return worldtest.Synthetic(i, world.Overworld, world.DefaultBlockRegistry)
}

func loadFrom(t testing.TB, p world.Provider, pos world.ChunkPos, want *chunk.Column) {
	t.Helper()
	got, err := p.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(want, got); err != nil {
		t.Fatalf("%v: %v", pos, err)
	}
}

// Issue 36 (provider): a View over a time and one over a snapshot read the
// same versions across a compaction and a reopen; a point the history no
// longer holds is an error, never a guess.
func TestViewAcrossCompactionAndReopen(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	a, b := world.ChunkPos{0, 0}, world.ChunkPos{5, -3}
	a1 := storeVersion(t, db, a, 1)
	b1 := storeVersion(t, db, b, 2)
	if err := db.Snapshot("s1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // time marks date writes to a second
	at := time.Now().Format(time.RFC3339Nano)
	time.Sleep(1100 * time.Millisecond)
	a2 := storeVersion(t, db, a, 3)
	storeVersion(t, db, b, 4)
	storeVersion(t, db, b, 5)

	check := func(db *DB) {
		t.Helper()
		for _, point := range []string{"s1", at} {
			v, err := db.At(point)
			if err != nil {
				t.Fatal(err)
			}
			loadFrom(t, v, a, a1)
			loadFrom(t, v, b, b1)
			v.Close()
		}
		loadFrom(t, db, a, a2)
	}
	check(db)
	if err := db.Engine().Compact(); err != nil {
		t.Fatal(err)
	}
	check(db)
	db.Close()
	db = openDB(t, dir, Config{})
	check(db)
	ss, err := db.Snapshots()
	if err != nil || len(ss) != 1 || ss[0].Name != "s1" || ss[0].Seq == 0 || time.Since(ss[0].Time) > time.Minute {
		t.Fatalf("Snapshots: %+v %v", ss, err)
	}
	db.Close()

	// Without history, only the snapshot reads the past.
	db = openDB(t, dir, Config{History: -1})
	if err := db.Engine().Compact(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.At(at); !errors.Is(err, blazedb.ErrHistory) {
		t.Fatalf("a time the history dropped: %v", err)
	}
	v, err := db.At("s1")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	loadFrom(t, v, b, b1)
}

// Issue 36 (provider): ChangedSince lists the columns changed after a
// point, in every dimension, and points are checked.
func TestChangedSince(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	storeVersion(t, db, world.ChunkPos{0, 0}, 1)
	storeVersion(t, db, world.ChunkPos{1, 0}, 2)
	if err := db.Snapshot("s"); err != nil {
		t.Fatal(err)
	}
	storeVersion(t, db, world.ChunkPos{1, 0}, 3)
	storeVersion(t, db, world.ChunkPos{9, 9}, 4)
	if err := db.StoreColumn(world.ChunkPos{2, 2}, world.Nether, worldtest.Synthetic(5, world.Nether, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	if err := db.SavePlayerSpawnPosition(uuid.New(), cube.Pos{}); err != nil {
		t.Fatal(err)
	}
	got, err := db.ChangedSince("s")
	if err != nil {
		t.Fatal(err)
	}
	want := []Place{{world.ChunkPos{1, 0}, world.Overworld}, {world.ChunkPos{9, 9}, world.Overworld}, {world.ChunkPos{2, 2}, world.Nether}}
	if !slices.Equal(got, want) {
		t.Fatalf("ChangedSince: %v, want %v", got, want)
	}
	for _, bad := range []string{"nope", "2026-13-01T00:00:00Z", ""} {
		if _, err := db.ChangedSince(bad); !errors.Is(err, ErrPoint) {
			t.Fatalf("ChangedSince(%q): %v", bad, err)
		}
	}
	if err := db.Snapshot("2026-11-27T04:00:00Z"); !errors.Is(err, ErrPoint) {
		t.Fatalf("a snapshot named like a time: %v", err)
	}
	if err := db.Snapshot("s"); !errors.Is(err, blazedb.ErrExists) {
		t.Fatalf("a snapshot name taken twice: %v", err)
	}
	if err := db.DeleteSnapshot("missing"); !errors.Is(err, blazedb.ErrNotFound) {
		t.Fatalf("deleting a missing snapshot: %v", err)
	}
}

// Issue 36 (tools): Revert puts the columns of an area back as they were
// at a point, removes those made since, leaves the rest, and can itself
// be undone.
func TestRevert(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	in, out, made := world.ChunkPos{0, 0}, world.ChunkPos{10, 10}, world.ChunkPos{1, 1}
	in1 := storeVersion(t, db, in, 1)
	storeVersion(t, db, out, 2)
	if err := db.Snapshot("s"); err != nil {
		t.Fatal(err)
	}
	in2 := storeVersion(t, db, in, 3)
	out2 := storeVersion(t, db, out, 4)
	storeVersion(t, db, made, 5)
	if err := db.Snapshot("before-revert"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openDB(t, dir, Config{})
	ed := db.Edition()
	near := func(p Place) bool { return p.Pos[0] < 5 && p.Pos[1] < 5 }
	n, err := db.Revert("s", near)
	if err != nil || n != 2 {
		t.Fatalf("Revert: %d columns, %v", n, err)
	}
	if db.Edition() == ed {
		t.Fatal("a revert left the edition")
	}
	loadFrom(t, db, in, in1)
	loadFrom(t, db, out, out2)
	if _, err := db.LoadColumn(made, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("a column made after the point: %v", err)
	}
	if n, err := db.Revert("s", near); err != nil || n != 0 {
		t.Fatalf("a second revert: %d columns, %v", n, err)
	}
	// Undone.
	if _, err := db.Revert("before-revert", nil); err != nil {
		t.Fatal(err)
	}
	loadFrom(t, db, in, in2)
	if _, err := db.LoadColumn(made, world.Overworld); err != nil {
		t.Fatal(err)
	}
}

// Issue 36 (provider): a View decodes with its DB's block registry; a
// World given another gets an error, never blocks decoded with the wrong
// ids.
func TestViewRefusesAnotherRegistry(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	storeVersion(t, db, world.ChunkPos{}, 1)
	if err := db.Snapshot("s"); err != nil {
		t.Fatal(err)
	}
	v, err := db.At("s")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.SetBlockRegistry(world.DefaultBlockRegistry) // its DB's: fine
	if _, err := v.LoadColumn(world.ChunkPos{}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	v.SetBlockRegistry(worldtest.PermutedRegistry(1, ""))
	if _, err := v.LoadColumn(world.ChunkPos{}, world.Overworld); !errors.Is(err, ErrInvalidView) {
		t.Fatalf("a View given another registry: %v", err)
	}
}

// Issue 36: a View holds the world's settings as they were at its point,
// not as level.dat holds them now: each SaveSettings puts them in the log
// too. A point before any SaveSettings reads the present settings.
func TestViewSettingsAsTheyWere(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	if err := db.Snapshot("before"); err != nil {
		t.Fatal(err)
	}
	save := func(name string, spawn cube.Pos) {
		s := db.Settings()
		s.Name, s.Spawn = name, spawn
		db.SaveSettings(s)
	}
	save("Then", cube.Pos{1, 64, 1})
	if err := db.Snapshot("then"); err != nil {
		t.Fatal(err)
	}
	save("Now", cube.Pos{9, 70, 9})
	for _, tc := range []struct {
		point, name string
		spawn       cube.Pos
	}{{"then", "Then", cube.Pos{1, 64, 1}}, {"before", "Now", cube.Pos{9, 70, 9}}} {
		v, err := db.At(tc.point)
		if err != nil {
			t.Fatal(err)
		}
		if s := v.Settings(); s.Name != tc.name || s.Spawn != tc.spawn {
			t.Fatalf("View at %q: settings %q %v, want %q %v", tc.point, s.Name, s.Spawn, tc.name, tc.spawn)
		}
		v.Close()
	}
	if s := db.Settings(); s.Name != "Now" {
		t.Fatalf("the world's own settings: %q", s.Name)
	}
}
