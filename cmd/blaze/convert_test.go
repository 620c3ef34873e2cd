package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/worldtest"
)

// stderrTo runs f with os.Stderr redirected to a file, as in a log, and
// returns what f wrote there.
func stderrTo(t *testing.T, f func()) string {
	t.Helper()
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	old := os.Stderr
	os.Stderr = file
	defer func() { os.Stderr = old }()
	f()
	b, err := os.ReadFile(file.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Issue 38 item 5: blaze convert takes an .mcworld file, and writes one
// (a LevelDB world, zipped) when the destination ends in .mcworld; the
// file reads back as the world it came from. Redirected, the progress is
// plain lines covering every phase: copying and verifying.
func TestConvertMcworldInAndOut(t *testing.T) {
	src := smallWorld(t)
	bz := filepath.Join(t.TempDir(), "w")
	var code int
	log := stderrTo(t, func() { code = run([]string{"convert", src, bz}) })
	if code != exitOK {
		t.Fatalf("convert %s: status %d: %s", src, code, log)
	}
	// The phases that count no columns too, each from its start to its
	// end (issue 38 item 5). The source's columns are listed as they are
	// converted, in one pass (issue 42 item 4): no phase of its own.
	if strings.Contains(log, "\r") || !strings.Contains(log, "converting: ") || !strings.Contains(log, "verifying: ") ||
		!strings.Contains(log, "\ncopying the LevelDB records Blaze keeps as they are: done in ") ||
		!strings.Contains(log, "\nverifying the LevelDB records kept: done in ") {
		t.Fatalf("redirected progress: %q", log)
	}
	before, _ := columnsOf(t, bz)

	out := filepath.Join(t.TempDir(), "out.mcworld")
	log = stderrTo(t, func() { code = run([]string{"convert", bz, out}) })
	if code != exitOK {
		t.Fatalf("convert to .mcworld: status %d: %s", code, log)
	}
	if strings.Contains(log, "\r") || !strings.Contains(log, "verifying: ") ||
		!strings.Contains(log, "\nclosing the destination and writing the LevelDB records the columns carry: done in ") ||
		!strings.Contains(log, "\nzipping "+out+": done in ") {
		t.Fatalf("redirected progress: %q", log)
	}
	if kind, err := convert.Kind(worldtest.UnpackTemp(t, out)); err != nil || kind != "leveldb" {
		t.Fatalf("%s holds %q, %v; want a LevelDB world", out, kind, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
		t.Fatalf("convert left %d entries beside %s", len(entries), out)
	}
	if code := run([]string{"convert", "-q", bz, out}); code != exitFailed {
		t.Fatalf("an existing .mcworld: status %d, want %d", code, exitFailed)
	}
	if code := run([]string{"convert", "-q", src, filepath.Join(t.TempDir(), "x.mcworld")}); code != exitFailed {
		t.Fatalf("a LevelDB world to .mcworld: status %d, want %d", code, exitFailed)
	}

	back := filepath.Join(t.TempDir(), "back")
	log = stderrTo(t, func() { code = run([]string{"convert", out, back}) })
	if code != exitOK || strings.Contains(log, "\r") || !strings.HasPrefix(log, "unpacking "+out+"\nunpacking "+out+": done in ") {
		t.Fatalf("convert the written .mcworld: status %d: %q", code, log)
	}
	after, _ := columnsOf(t, back)
	if len(after) != len(before) {
		t.Fatalf("%d columns after the round trip, %d before", len(after), len(before))
	}
	for pl, col := range before {
		if err := worldtest.Compare(convert.LevelDBView(col), after[pl]); err != nil {
			t.Fatalf("column %v (%v) after the round trip: %v", pl.Pos, pl.Dim, err)
		}
	}
}
