//go:build windows

package vfs

import (
	"path/filepath"
	"strings"
	"testing"
)

// A file deeper than Windows's usual path limit opens, as it would through
// os.OpenFile, and can be renamed aside and synced.
func TestLongPathOpens(t *testing.T) {
	dir := t.TempDir()
	for len(dir) < 300 {
		dir = filepath.Join(dir, strings.Repeat("d", 40))
	}
	if err := Default.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "chunks.dat")
	f, err := Default.Create(name)
	if err != nil {
		t.Fatalf("create a file of a %d-byte path: %v", len(name), err)
	}
	if _, err := f.WriteAt([]byte("deep"), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := Default.Rename(name, name+".old"); err != nil {
		t.Fatalf("rename it while open: %v", err)
	}
	f.Close()
	g, err := Default.Open(name + ".old")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	b := make([]byte, 4)
	if _, err := g.ReadAt(b, 0); err != nil || string(b) != "deep" {
		t.Fatalf("read back %q: %v", b, err)
	}
}
