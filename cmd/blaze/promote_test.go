package main

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 40 item 4: blaze promote writes an arena's changes into its
// template; it refuses a template in use and one the changes were not made
// on, and keeps the match then.
func TestPromoteCommand(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	br := world.DefaultBlockRegistry
	newWorld := func(seed uint64) string {
		dir := t.TempDir()
		db, err := provider.Config{Log: quiet}.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, worldtest.Synthetic(seed, world.Overworld, br)); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	tdir, other := newWorld(1), newWorld(2)
	arena := filepath.Join(t.TempDir(), "arena")
	tp, err := provider.Config{Log: quiet, ReadOnly: true}.Open(tdir)
	if err != nil {
		t.Fatal(err)
	}
	o, err := overlay.Config{Log: quiet}.Open(tp, arena)
	if err != nil {
		t.Fatal(err)
	}
	built := worldtest.Synthetic(7, world.Overworld, br)
	if err := o.StoreColumn(world.ChunkPos{3, 4}, world.Overworld, built); err != nil {
		t.Fatal(err)
	}
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
	tp.Close()

	var out bytes.Buffer
	if code := runPromote(&out, arena, other); code != exitFailed {
		t.Fatalf("promote into a template the arena was not built on: status %d: %s", code, out.String())
	}
	busy, err := provider.Config{Log: quiet}.Open(tdir)
	if err != nil {
		t.Fatal(err)
	}
	if code := runPromote(&out, arena, tdir); code != exitFailed {
		t.Fatalf("promote into a template in use: status %d", code)
	}
	busy.Close()
	if code := runPromote(&out, arena, tdir); code != exitOK || !strings.Contains(out.String(), "1 column promoted") {
		t.Fatalf("promote: status %d: %s", code, out.String())
	}
	db, err := provider.Config{Log: quiet, ReadOnly: true}.Open(tdir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.LoadColumn(world.ChunkPos{3, 4}, world.Overworld)
	if err == nil {
		err = worldtest.Compare(built, got)
	}
	if err != nil {
		t.Fatalf("the promoted column in the template: %v", err)
	}
	if code := runPromote(&out, t.TempDir(), tdir); code != exitFailed {
		t.Fatalf("promote of a directory that is no arena: status %d", code)
	}
}
