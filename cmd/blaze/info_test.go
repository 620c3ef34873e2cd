package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block/cube"
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
