package overlay

import (
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 36 (overlays): a View of a snapshot of the template world serves
// as an arena's template: the arena plays on the map as it was, while the
// template world has moved on, and the overlay takes the match's writes.
func TestOverlayOverView(t *testing.T) {
	dir := template(t, 2)
	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Snapshot("map-v1"); err != nil {
		t.Fatal(err)
	}
	pos := world.ChunkPos{1, 1}
	if err := db.StoreColumn(pos, world.Overworld, worldtest.Synthetic(99, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	tmpl := openTemplate(t, dir)
	v, err := tmpl.At("map-v1")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	o, err := Config{Log: quiet}.Open(v, filepath.Join(t.TempDir(), "arena"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	w := world.Config{Provider: o, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer w.Close()
	got, err := o.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(worldtest.Synthetic(1*2+1, world.Overworld, world.DefaultBlockRegistry), got); err != nil {
		t.Fatalf("the arena's map is not the snapshot's: %v", err)
	}
	if err := o.StoreColumn(pos, world.Overworld, worldtest.Synthetic(7, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	if err := o.ResetOverlay(); err != nil {
		t.Fatal(err)
	}
	got, err = o.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry), got); err != nil {
		t.Fatalf("after a reset: %v", err)
	}
}
