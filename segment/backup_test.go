package segment

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

// A backup of a segmented world is a segmented world holding every region
// (open or closed) with the columns stored before the call, the settings
// and the player spawns; nothing stored, and no region deleted, after it.
func TestBackup(t *testing.T) {
	dir := t.TempDir()
	p := openSeg(t, dir, Config{SegmentSize: 4, MaxOpen: 2})
	type place struct {
		pos world.ChunkPos
		dim world.Dimension
	}
	places := []place{{world.ChunkPos{0, 0}, world.Overworld}, {world.ChunkPos{5, 1}, world.Overworld},
		{world.ChunkPos{-1, -9}, world.Overworld}, {world.ChunkPos{-5, 9}, world.Nether}, {world.ChunkPos{100, -100}, world.End}}
	for i, pl := range places {
		if err := p.StoreColumn(pl.pos, pl.dim, col(uint64(i), pl.dim)); err != nil {
			t.Fatal(err)
		}
	}
	s := p.Settings()
	s.Name = "Segments backed up"
	p.SaveSettings(s)
	player := uuid.New()
	if err := p.SavePlayerSpawnPosition(player, cube.Pos{7, 8, 9}); err != nil {
		t.Fatal(err)
	}
	if p.OpenSegments() > 2 {
		t.Fatalf("%d segments open", p.OpenSegments()) // so some of them are closed
	}

	bdir := filepath.Join(t.TempDir(), "backup")
	if err := p.Backup(bdir); err != nil {
		t.Fatal(err)
	}
	// After the backup: a new column, a new region, a deleted region.
	if err := p.StoreColumn(world.ChunkPos{1, 1}, world.Overworld, col(50, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	if err := p.StoreColumn(world.ChunkPos{40, 40}, world.Overworld, col(51, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteSegmentFor(world.ChunkPos{5, 1}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if err := p.Backup(bdir); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a backup over an existing one: %v", err)
	}

	b := openSeg(t, bdir, Config{SegmentSize: 4})
	for i, pl := range places {
		got, err := b.LoadColumn(pl.pos, pl.dim)
		if err != nil {
			t.Fatalf("the backup's %v %v: %v", pl.dim, pl.pos, err)
		}
		if err := worldtest.Compare(col(uint64(i), pl.dim), got); err != nil {
			t.Fatalf("the backup's %v %v: %v", pl.dim, pl.pos, err)
		}
	}
	for _, pos := range []world.ChunkPos{{1, 1}, {40, 40}} {
		if _, err := b.LoadColumn(pos, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
			t.Fatalf("%v, stored after the backup: %v", pos, err)
		}
	}
	if b.Settings().Name != "Segments backed up" {
		t.Fatalf("the backup's settings: %q", b.Settings().Name)
	}
	if pos, ok, err := b.LoadPlayerSpawnPosition(player); !ok || err != nil || pos != (cube.Pos{7, 8, 9}) {
		t.Fatalf("the backup's spawn: %v %v %v", pos, ok, err)
	}
	regions, err := Regions(bdir)
	if err != nil || len(regions) != len(places) {
		t.Fatalf("the backup's regions: %v %v", regions, err)
	}
	p.Close()
	if err := p.Backup(filepath.Join(t.TempDir(), "after")); !errors.Is(err, provider.ErrClosed) {
		t.Fatalf("a backup of a closed world: %v", err)
	}
}

// A crash at any filesystem operation of a backup leaves either no backup
// or a whole segmented world: the root and every region.
func TestBackupCrash(t *testing.T) {
	crashes := 0
	for k := 1; ; k++ {
		mem := vfstest.NewMem()
		p, err := Config{SegmentSize: 4, FS: mem, Log: quiet, MaintainInterval: time.Hour}.Open("/w")
		if err != nil {
			t.Fatal(err)
		}
		positions := []world.ChunkPos{{0, 0}, {1, 0}, {9, 9}}
		for i, pos := range positions {
			if err := p.StoreColumn(pos, world.Overworld, col(uint64(i), world.Overworld)); err != nil {
				t.Fatal(err)
			}
		}
		s := p.Settings()
		s.Name = "Segments backed up"
		p.SaveSettings(s)
		mem.CrashAfter(k)
		err = p.Backup("/b")
		crashed := mem.Crashed()
		if (err != nil) != crashed {
			t.Fatalf("k=%d: Backup returned %v, crashed %t", k, err, crashed)
		}
		clone := mem.CrashClone(rand.New(rand.NewPCG(uint64(k), 4)), 0.5)
		p.Close()
		if _, err := clone.List("/b"); err != nil {
			if !crashed {
				t.Fatal("no backup after Backup returned")
			}
			crashes++
			continue
		}
		b, err := Config{SegmentSize: 4, FS: clone, Log: quiet}.Open("/b")
		if err != nil {
			t.Fatalf("k=%d: open the backup: %v", k, err)
		}
		for i, pos := range positions {
			got, err := b.LoadColumn(pos, world.Overworld)
			if err == nil {
				err = worldtest.Compare(col(uint64(i), world.Overworld), got)
			}
			if err != nil {
				t.Fatalf("k=%d: the backup's %v: %v", k, pos, err)
			}
		}
		if b.Settings().Name != "Segments backed up" {
			t.Fatalf("k=%d: the backup's settings: %q", k, b.Settings().Name)
		}
		b.Close()
		if !crashed {
			break
		}
	}
	if crashes < 10 {
		t.Fatalf("only %d crash points left no backup", crashes)
	}
}
