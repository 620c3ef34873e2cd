//go:build windows

package vfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// A file that another program holds open without FILE_SHARE_DELETE (an
// antivirus scanning it, a backup tool copying it) cannot be removed,
// renamed or replaced until that program lets go. Default waits a while
// for it rather than failing at once.
func TestSharingViolationIsWaitedOut(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "index.dat")
	for _, c := range []struct {
		what string
		op   func() error
	}{
		{"remove", func() error { return Default.Remove(name) }},
		{"rename", func() error { return Default.Rename(name, name+".aside") }},
		{"replace", func() error { return ReplaceFile(Default, dir, "index.dat", []byte("new")) }},
	} {
		t.Run(c.what, func(t *testing.T) {
			os.Remove(name + ".aside")
			if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			held, err := os.Open(name) // no FILE_SHARE_DELETE
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				time.Sleep(100 * time.Millisecond)
				held.Close()
				close(done)
			}()
			err = c.op()
			<-done
			if err != nil {
				t.Fatalf("%s while another handle holds the file for 100 ms: %v", c.what, err)
			}
		})
	}
}
