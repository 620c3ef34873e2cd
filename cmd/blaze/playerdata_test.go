package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/item"
	"github.com/df-mc/dragonfly/server/item/inventory"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/player/playerdb"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/google/uuid"
)

// Issue 40 item 1: blaze info and check count the players' data kept in
// the world, check reports a damaged record, and repair puts it back at
// its newest intact version, naming it.
func TestPlayerDataCheckInfoRepair(t *testing.T) {
	dir := t.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	id := uuid.New()
	save := func(n int) int64 {
		db.Engine().Sync()
		st, _ := os.Stat(filepath.Join(dir, "blaze", "chunks.dat"))
		inv := inventory.New(36, nil)
		_ = inv.SetItem(0, item.NewStack(item.Diamond{}, n))
		conf := player.Config{UUID: id, Name: "Alex", GameMode: world.GameModeSurvival, Inventory: inv, Health: 20, MaxHealth: 20}
		if err := db.Players().Save(id, conf, w); err != nil {
			t.Fatal(err)
		}
		db.Engine().Sync()
		after, _ := os.Stat(filepath.Join(dir, "blaze", "chunks.dat"))
		return (st.Size() + after.Size()) / 2
	}
	save(1)
	mid := save(2)
	w.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	info(t, dir, "players' data: 1")
	var out bytes.Buffer
	if code := runCheck(&out, nil, dir); code != exitOK || !strings.Contains(out.String(), "1 players' data") {
		t.Fatalf("check: status %d: %s", code, out.String())
	}

	log := filepath.Join(dir, "blaze", "chunks.dat")
	b, _ := os.ReadFile(log)
	b[mid] ^= 0x55
	os.WriteFile(log, b, 0o644)
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitDamaged {
		t.Fatalf("check of a damaged record: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runRepair(&out, dir); code != exitOK || !strings.Contains(out.String(), "data of player "+id.String()) {
		t.Fatalf("repair: status %d: %s", code, out.String())
	}
	re, err := provider.Config{Log: quiet, ReadOnly: true}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	got, _, err := re.Players().Load(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := got.Inventory.Item(0); s.Count() != 1 {
		t.Fatalf("after repair the player holds %v, want its older version's 1 diamond", s)
	}
}

// Issue 40: blaze convert -players moves the players' data of a world that
// has players from Blaze to Dragonfly's playerdb folder and back.
func TestConvertPlayersBothWays(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	src := t.TempDir()
	db, err := provider.Config{Log: quiet}.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	ids := []uuid.UUID{uuid.New(), uuid.New()}
	for i, id := range ids {
		inv := inventory.New(36, nil)
		_ = inv.SetItem(i, item.NewStack(item.Emerald{}, 5+i))
		conf := player.Config{UUID: id, Name: "p", GameMode: world.GameModeSurvival, Inventory: inv, Health: 20, MaxHealth: 20}
		if err := db.Players().Save(id, conf, w); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	emeralds := func(conf player.Config, i int) int {
		s, _ := conf.Inventory.Item(i)
		return s.Count()
	}

	pdir := filepath.Join(t.TempDir(), "players")
	if code := runConvertPlayers(src, pdir); code != exitOK {
		t.Fatalf("export: status %d", code)
	}
	if code := runConvertPlayers(src, pdir); code != 1 {
		t.Fatalf("export over an existing folder: status %d", code)
	}
	pdb, err := playerdb.NewProvider(pdir)
	if err != nil {
		t.Fatal(err)
	}
	ow := world.Config{Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer ow.Close()
	for i, id := range ids {
		conf, _, err := pdb.Load(id, func(world.Dimension) *world.World { return ow })
		if err != nil || emeralds(conf, i) != 5+i {
			t.Fatalf("playerdb's player %d: %v, %d emeralds", i, err, emeralds(conf, i))
		}
	}
	pdb.Close()

	dst := t.TempDir()
	fresh, err := provider.Config{Log: quiet}.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	fresh.Close()
	if code := runConvertPlayers(pdir, dst); code != exitOK {
		t.Fatalf("import: status %d", code)
	}
	back, err := provider.Config{Log: quiet, ReadOnly: true}.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	for i, id := range ids {
		conf, _, err := back.Players().Load(id, nil)
		if err != nil || emeralds(conf, i) != 5+i {
			t.Fatalf("imported player %d: %v, %d emeralds", i, err, emeralds(conf, i))
		}
	}
}

// Issue 40 item 1: blaze rollback of the whole world puts the players'
// inventories back too; one of an area or a dimension leaves them.
func TestRollbackRestoresPlayers(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	id := uuid.New()
	save := func(n int) {
		inv := inventory.New(36, nil)
		_ = inv.SetItem(0, item.NewStack(item.Diamond{}, n))
		conf := player.Config{UUID: id, Name: "Alex", GameMode: world.GameModeSurvival, Inventory: inv, Health: 20, MaxHealth: 20}
		if err := db.Players().Save(id, conf, w); err != nil {
			t.Fatal(err)
		}
	}
	save(2)
	if err := db.Snapshot("good"); err != nil {
		t.Fatal(err)
	}
	save(64)
	w.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	held := func() int {
		t.Helper()
		re, err := provider.Config{Log: quiet, ReadOnly: true}.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer re.Close()
		conf, _, err := re.Players().Load(id, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := conf.Inventory.Item(0)
		return s.Count()
	}
	// An area, or a dimension, rolls back columns only: the players stay.
	for _, c := range []struct{ area, dim string }{{"5,5,0,0", "overworld"}, {"", "overworld"}} {
		a, err := parseArea(c.area, c.dim)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if code := runRollback(&out, dir, "good", a); code != exitOK || strings.Contains(out.String(), "player") {
			t.Fatalf("rollback of -area %q -dim %q: status %d: %s", c.area, c.dim, code, out.String())
		}
		if n := held(); n != 64 {
			t.Fatalf("a rollback of -area %q -dim %q left the player %d diamonds, want 64", c.area, c.dim, n)
		}
	}
	var out bytes.Buffer
	if code := runRollback(&out, dir, "good", area{all: true}); code != exitOK || !strings.Contains(out.String(), "1 player's data rolled back") {
		t.Fatalf("rollback: status %d: %s", code, out.String())
	}
	if n := held(); n != 2 {
		t.Fatalf("after the rollback the player holds %d diamonds, want the snapshot's 2", n)
	}
}
