package segment

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/internal/linktest"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 35 item 6: Open finishes the deletions a crash interrupted
// without following a symbolic link: a region being deleted that is a
// link, and links inside one, go themselves; what they point to outside
// the world stays.
func TestOpenLeavesLinkTargets(t *testing.T) {
	dir := t.TempDir()
	p := openSeg(t, dir, Config{SegmentSize: 4})
	if err := p.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, col(1, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	trap := linktest.New(t)
	dim := filepath.Join(dir, "regions", "0")
	half := filepath.Join(dim, "deleting-r.1.0-2")
	if err := os.MkdirAll(half, 0o755); err != nil {
		t.Fatal(err)
	}
	trap.LinkDir(t, filepath.Join(dim, "deleting-r.2.0-1"))
	trap.LinkDir(t, filepath.Join(half, "blaze"))
	p = openSeg(t, dir, Config{SegmentSize: 4})
	trap.Check(t)
	for _, n := range []string{"deleting-r.2.0-1", "deleting-r.1.0-2"} {
		if _, err := os.Lstat(filepath.Join(dim, n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want it removed", n, err)
		}
	}
	if _, err := p.LoadColumn(world.ChunkPos{0, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
}

// Issue 35 item 6: DeleteSegmentFor removes a region without following a
// symbolic link, whether the link is inside the region's directory or is
// the region's directory itself.
func TestDeleteSegmentLeavesLinkTargets(t *testing.T) {
	dir := t.TempDir()
	p := openSeg(t, dir, Config{SegmentSize: 4})
	for _, pos := range []world.ChunkPos{{0, 0}, {4, 0}} {
		if err := p.StoreColumn(pos, world.Overworld, col(1, world.Overworld)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// Region r.1.0 moved to another disk, and linked to from the world.
	trap := linktest.New(t)
	dim := filepath.Join(dir, "regions", "0")
	moved := filepath.Join(trap.Dir, "r.1.0")
	if err := os.Rename(filepath.Join(dim, "r.1.0"), moved); err != nil {
		t.Fatal(err)
	}
	linktest.Link(t, moved, filepath.Join(dim, "r.1.0"))
	p = openSeg(t, dir, Config{SegmentSize: 4})
	if _, err := p.LoadColumn(world.ChunkPos{4, 0}, world.Overworld); err != nil {
		t.Fatalf("the column of the linked region: %v", err)
	}
	trap.LinkDir(t, filepath.Join(dim, "r.0.0", "players"))

	for _, pos := range []world.ChunkPos{{0, 0}, {4, 0}} {
		if err := p.DeleteSegmentFor(pos, world.Overworld); err != nil {
			t.Fatal(err)
		}
	}
	trap.Check(t)
	if _, err := os.Stat(filepath.Join(moved, "blaze", "chunks.dat")); err != nil {
		t.Errorf("the linked region's files: %v", err)
	}
	names, err := os.ReadDir(dim)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range names {
		t.Errorf("%s left in %s", e.Name(), dim)
	}
}
