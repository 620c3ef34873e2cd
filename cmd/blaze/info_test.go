package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/google/uuid"
)

// info runs blaze info on dir and returns what it printed, failing on any
// status but exitOK or an output without every one of want.
func info(t *testing.T, dir string, want ...string) string {
	t.Helper()
	var out bytes.Buffer
	if code := runInfo(&out, dir); code != exitOK {
		t.Fatalf("info: status %d: %s", code, out.String())
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Fatalf("info says %q, not %q", out.String(), w)
		}
	}
	return out.String()
}

// garbageShare reads the garbage percentage from info's output and fails
// unless it lies in [lo, hi].
func garbageShare(t *testing.T, out string, lo, hi int) {
	t.Helper()
	m := regexp.MustCompile(`or (\d+)% garbage`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no garbage share in %q", out)
	}
	if n, _ := strconv.Atoi(m[1]); n < lo || n > hi {
		t.Fatalf("%d%% garbage, want %d-%d%%:\n%s", n, lo, hi, out)
	}
}

// info counts a world's columns and player spawns, tells how much of its
// log is garbage before and after compaction, and says when index.dat was
// not used and when the log has a torn tail, all without writing.
func TestInfo(t *testing.T) {
	dir := garbageWorld(t) // 16 columns, each stored four times
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler)}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SavePlayerSpawnPosition(uuid.New(), cube.Pos{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	out := info(t, dir, "a Blaze world", "columns:       16 (overworld 16, nether 0, end 0)", "player spawns: 1")
	garbageShare(t, out, 60, 80) // three stores in four replaced
	if strings.Contains(out, "index.dat") || strings.Contains(out, "torn") || strings.Contains(out, "damage") {
		t.Fatalf("info of a sound world: %s", out)
	}
	if code := runCompact(&bytes.Buffer{}, dir); code != exitOK {
		t.Fatalf("compact: status %d", code)
	}
	garbageShare(t, info(t, dir), 0, 0)

	// Without index.dat, and with bytes a crash left unsynced after the
	// last record: info says so, and changes neither.
	logPath := filepath.Join(dir, "blaze", "chunks.dat")
	if err := os.Remove(filepath.Join(dir, "blaze", "index.dat")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Repeat([]byte{0xAB}, 100))
	f.Close()
	before, _ := os.Stat(logPath)
	info(t, dir, "index.dat:     not used", "torn tail:     100 B")
	if after, _ := os.Stat(logPath); after.Size() != before.Size() {
		t.Fatalf("info changed chunks.dat: %d -> %d bytes", before.Size(), after.Size())
	}
	if _, err := os.Stat(filepath.Join(dir, "blaze", "index.dat")); !os.IsNotExist(err) {
		t.Fatalf("info wrote index.dat: %v", err)
	}
}

// A segmented world's figures are its regions' summed.
func TestInfoSegmentedWorld(t *testing.T) {
	out := info(t, segmentedGarbageWorld(t), "a segmented Blaze world of 2 regions", "columns:       8 (overworld 8,", "logs:")
	garbageShare(t, out, 60, 80) // three stores in four replaced
}

// Issue 38 item 5: info shows where each dimension's columns lie, and
// lists a segmented world's regions, each with its own.
func TestInfoExtents(t *testing.T) {
	info(t, garbageWorld(t), "overworld:     16 columns, chunk x 0..15, z 0..0")
	dir := segmentedGarbageWorld(t)
	info(t, dir, "overworld:     8 columns, chunk x 0..7, z 0..0",
		"region:        "+filepath.Join(dir, "regions", "0", "r.0.0")+" (overworld): 4 columns, chunk x 0..3, z 0..0",
		"region:        "+filepath.Join(dir, "regions", "0", "r.1.0")+" (overworld): 4 columns, chunk x 4..7, z 0..0")
}

// Issue 38 item 5: info describes an arena overlay as an overlay over its
// template (it called one "not a Blaze world"): the columns its match
// changed, where they lie, and whether a template given is the one the
// match began on.
func TestInfoOverlay(t *testing.T) {
	tdir := garbageWorld(t)
	tmpl, err := provider.Config{Log: slog.New(slog.DiscardHandler), ReadOnly: true}.Open(tdir)
	if err != nil {
		t.Fatal(err)
	}
	ed := tmpl.Edition()
	odir := filepath.Join(t.TempDir(), "arena")
	o, err := overlay.Config{Log: slog.New(slog.DiscardHandler)}.Open(tmpl, odir)
	if err != nil {
		t.Fatal(err)
	}
	col := worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)
	for _, pos := range []world.ChunkPos{{100, 5}, {101, 7}} {
		if err := o.StoreColumn(pos, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(o.Shutdown(), tmpl.Close()); err != nil {
		t.Fatal(err)
	}

	info(t, odir, "an arena overlay", "edition "+ed.String(), "overworld:     2 columns, chunk x 100..101, z 5..7")
	var out bytes.Buffer
	if code := runInfoWith(&out, odir, tdir); code != exitOK || !strings.Contains(out.String(), "the one the match began on") {
		t.Fatalf("info -template: status %d: %s", code, out.String())
	}
	// The template changes: the next start forgets the match.
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler)}.Open(tdir)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(db.StoreColumn(world.ChunkPos{50, 50}, world.Overworld, col), db.Close()); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := runInfoWith(&out, odir, tdir); code != exitOK || !strings.Contains(out.String(), "forgets the match") {
		t.Fatalf("info -template of a changed template: status %d: %s", code, out.String())
	}
	if code := runInfoWith(&out, tdir, odir); code != exitFailed {
		t.Fatalf("-template with a world that is no overlay: status %d", code)
	}
}
