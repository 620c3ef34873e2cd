package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/internal/convert"
)

// Issue 35 item 15: a directory holding both a LevelDB world (db/) and a
// Blaze world (blaze/) was Blaze to check and LevelDB to convert: every
// command refuses it, saying so, and changes nothing.
func TestToolsRefuseBothKindsOfWorld(t *testing.T) {
	dir := garbageWorld(t)
	if err := os.Mkdir(filepath.Join(dir, "db"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := runCheck(&out, nil, dir); code != exitFailed {
		t.Fatalf("check: status %d: %s", code, out.String())
	}
	for name, run := range map[string]func(io.Writer, string) int{"compact": runCompact, "repair": runRepair, "info": runInfo} {
		if code := run(&out, dir); code != exitFailed {
			t.Fatalf("%s: status %d: %s", name, code, out.String())
		}
	}
	if _, err := databases(dir); !errors.Is(err, convert.ErrAmbiguousWorld) {
		t.Fatalf("the tools' error: %v", err)
	}
	if got := runConvert(dir, filepath.Join(t.TempDir(), "out"), convertOptions{quiet: true}); got != exitFailed {
		t.Fatalf("convert: status %d", got)
	}
}
