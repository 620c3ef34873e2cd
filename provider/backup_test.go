package provider

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

// A backup of an open world is a world of its own holding the columns,
// settings, player spawns and block dictionary as they were at the call,
// nothing stored after it.
func TestBackup(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	want := map[string]*chunk.Column{}
	for i, dim := range dims {
		for j := 0; j < 3; j++ {
			pos := world.ChunkPos{int32(j), int32(i)}
			want[fmt.Sprint(dim, pos)] = worldtest.Synthetic(uint64(i*10+j), dim, world.DefaultBlockRegistry)
			if err := db.StoreColumn(pos, dim, worldtest.Synthetic(uint64(i*10+j), dim, world.DefaultBlockRegistry)); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := db.Settings()
	s.Name = "Backed up"
	db.SaveSettings(s)
	player := uuid.New()
	if err := db.SavePlayerSpawnPosition(player, cube.Pos{1, 2, 3}); err != nil {
		t.Fatal(err)
	}

	bdir := filepath.Join(t.TempDir(), "backup")
	if err := db.Backup(bdir); err != nil {
		t.Fatal(err)
	}
	// Stored after the backup: none of it is in it.
	changed := worldtest.Synthetic(99, world.Overworld, world.DefaultBlockRegistry)
	if err := db.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, changed); err != nil {
		t.Fatal(err)
	}
	if err := db.StoreColumn(world.ChunkPos{50, 50}, world.Overworld, changed); err != nil {
		t.Fatal(err)
	}
	if err := db.SavePlayerSpawnPosition(player, cube.Pos{4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	s.Name = "Changed since"
	db.SaveSettings(s)

	if err := db.Backup(bdir); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a backup over an existing one: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Backup(filepath.Join(t.TempDir(), "after")); !errors.Is(err, ErrClosed) {
		t.Fatalf("a backup of a closed world: %v", err)
	}

	names, err := os.ReadDir(bdir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	if fmt.Sprint(got) != "[blaze dictionary.dat level.dat level.dat.blaze levelname.txt]" {
		t.Fatalf("the backup holds %v", got)
	}
	b := openDB(t, bdir, Config{})
	if !b.DictionaryCopyCurrent() || len(b.DictionaryRestored()) != 0 {
		t.Fatal("the backup's dictionary.dat is not its dictionary")
	}
	for i, dim := range dims {
		for j := 0; j < 3; j++ {
			pos := world.ChunkPos{int32(j), int32(i)}
			col, err := b.LoadColumn(pos, dim)
			if err != nil {
				t.Fatal(err)
			}
			if err := worldtest.Compare(want[fmt.Sprint(dim, pos)], col); err != nil {
				t.Fatalf("the backup's %v %v: %v", dim, pos, err)
			}
		}
	}
	if _, err := b.LoadColumn(world.ChunkPos{50, 50}, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("a column stored after the backup: %v", err)
	}
	if pos, ok, err := b.LoadPlayerSpawnPosition(player); !ok || err != nil || pos != (cube.Pos{1, 2, 3}) {
		t.Fatalf("the backup's spawn: %v %v %v", pos, ok, err)
	}
	if b.Settings().Name != "Backed up" {
		t.Fatalf("the backup's settings: %q", b.Settings().Name)
	}
}

// A backup taken while a Dragonfly World runs on the provider, right after
// World.Save, is a world Dragonfly opens with the blocks and settings of
// that moment and none set after.
func TestBackupOfRunningWorld(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer w.Close()
	<-w.Do(func(tx *world.Tx) {
		tx.SetBlock(cube.Pos{1, 64, 1}, block.Stone{}, nil)
		tx.SetBlock(cube.Pos{-40, -60, 100}, block.Obsidian{}, nil)
		tx.World().SetSpawn(cube.Pos{12, 70, -34})
	}).Done()
	w.Save() // what a server owner calls first, so that the backup has what the World holds
	bdir := filepath.Join(t.TempDir(), "backup")
	if err := db.Backup(bdir); err != nil {
		t.Fatal(err)
	}
	<-w.Do(func(tx *world.Tx) {
		tx.SetBlock(cube.Pos{1, 64, 1}, block.Glowstone{}, nil) // after the backup
	}).Done()
	w.Save()

	b := world.Config{Provider: openDB(t, bdir, Config{}), Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer b.Close()
	<-b.Do(func(tx *world.Tx) {
		if _, ok := tx.Block(cube.Pos{1, 64, 1}).(block.Stone); !ok {
			t.Errorf("the backup's stone: %T", tx.Block(cube.Pos{1, 64, 1}))
		}
		if _, ok := tx.Block(cube.Pos{-40, -60, 100}).(block.Obsidian); !ok {
			t.Errorf("the backup's obsidian: %T", tx.Block(cube.Pos{-40, -60, 100}))
		}
		if got := tx.World().Spawn(); got != (cube.Pos{12, 70, -34}) {
			t.Errorf("the backup's spawn: %v", got)
		}
	}).Done()
}

// A crash at any filesystem operation of a backup leaves either no backup
// or a whole world, with the columns and settings of the moment.
func TestBackupCrash(t *testing.T) {
	cols := make([]*chunk.Column, 3)
	for i := range cols {
		cols[i] = worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
	}
	crashes := 0
	for k := 1; ; k++ {
		mem := vfstest.NewMem()
		db, err := Config{FS: mem, Log: quiet}.Open("/w")
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cols {
			if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, c); err != nil {
				t.Fatal(err)
			}
		}
		s := db.Settings()
		s.Name = "Backed up"
		db.SaveSettings(s)
		mem.CrashAfter(k)
		err = db.Backup("/b")
		crashed := mem.Crashed()
		if (err != nil) != crashed {
			t.Fatalf("crash at %d: Backup returned %v, crashed %t", k, err, crashed)
		}
		db.Close()
		clone := mem.CrashClone(rand.New(rand.NewPCG(uint64(k), 3)), 0.5)
		if _, err := clone.List("/b"); err != nil {
			if !crashed {
				t.Fatal("no backup after Backup returned")
			}
			crashes++
			continue
		}
		b, err := Config{FS: clone, Log: quiet, ReadOnly: true}.Open("/b")
		if err != nil {
			t.Fatalf("crash at %d: open the backup: %v", k, err)
		}
		for i, c := range cols {
			got, err := b.LoadColumn(world.ChunkPos{int32(i), 0}, world.Overworld)
			if err == nil {
				err = worldtest.Compare(c, got)
			}
			if err != nil {
				t.Fatalf("crash at %d: column %d: %v", k, i, err)
			}
		}
		if b.Settings().Name != "Backed up" || !b.DictionaryCopyCurrent() {
			t.Fatalf("crash at %d: the backup's settings or dictionary.dat", k)
		}
		b.Close()
		if !crashed {
			break
		}
	}
	if crashes < 5 {
		t.Fatalf("only %d crash points left no backup", crashes)
	}
}
