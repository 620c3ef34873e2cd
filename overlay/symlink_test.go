package overlay

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/internal/linktest"
)

// Issue 35 item 6: Open deletes leftover generations without following a
// symbolic link: one that is a link, and links inside one, go themselves;
// what they point to outside the arena stays.
func TestOpenLeavesLinkTargets(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	trap := linktest.New(t)
	dir := filepath.Join(t.TempDir(), "arena")
	left := filepath.Join(dir, genName(8))
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	trap.LinkDir(t, filepath.Join(dir, genName(7)))
	trap.LinkDir(t, filepath.Join(left, "players"))
	o, err := Config{Log: quiet}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	trap.Check(t)
	for _, n := range []int{7, 8} {
		if _, err := os.Lstat(filepath.Join(dir, genName(n))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("leftover %s: %v, want it removed", genName(n), err)
		}
	}
}

// Issue 35 item 6: ResetOverlay deletes the generation it replaced, and
// Shutdown the spare, without following a symbolic link inside them.
func TestResetAndShutdownLeaveLinkTargets(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	trap := linktest.New(t)
	dir := filepath.Join(t.TempDir(), "arena")
	o, err := Config{Log: quiet}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	trap.LinkDir(t, filepath.Join(dir, genName(o.gen), "players"))
	if err := o.ResetOverlay(); err != nil {
		t.Fatal(err)
	}
	o.bg.wg.Wait() // the replaced generation is deleted, the next spare made
	trap.Check(t)
	trap.LinkDir(t, filepath.Join(dir, genName(o.gen+1), "players"))
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
	trap.Check(t)
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range names {
		if e.Name() != genName(o.gen) && e.Name() != currentName && e.Name() != "LOCK" {
			t.Errorf("%s left in the arena", e.Name())
		}
	}
}
