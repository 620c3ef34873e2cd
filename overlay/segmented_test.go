package overlay

import (
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// A segmented template has an edition too (segment.Provider.Edition): an
// overlay over one keeps its match while the template's columns stay as
// they were, and forgets it once a column of any region changed.
func TestSegmentedTemplateChangeForgetsChanges(t *testing.T) {
	tdir := filepath.Join(t.TempDir(), "template")
	dir := filepath.Join(t.TempDir(), "arena")
	openTmpl := func() *segment.Provider {
		t.Helper()
		p, err := segment.Config{SegmentSize: 4, Log: quiet}.Open(tdir)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	synth := func(seed uint64) *chunk.Column {
		return worldtest.Synthetic(seed, world.Overworld, world.DefaultBlockRegistry)
	}
	far := world.ChunkPos{9, 9} // another region than (0, 0)
	tp := openTmpl()
	for i, pos := range []world.ChunkPos{{0, 0}, far} {
		if err := tp.StoreColumn(pos, world.Overworld, synth(uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.Close(); err != nil {
		t.Fatal(err)
	}

	// withOverlay opens the template and an overlay on it, runs f, and
	// closes both.
	withOverlay := func(f func(o *Provider)) {
		t.Helper()
		tp := openTmpl()
		o, err := Config{Log: quiet}.Open(tp, dir)
		if err != nil {
			t.Fatal(err)
		}
		f(o)
		if err := o.Shutdown(); err != nil {
			t.Fatal(err)
		}
		if err := tp.Close(); err != nil {
			t.Fatal(err)
		}
	}
	kept := func() (k bool) {
		t.Helper()
		withOverlay(func(o *Provider) {
			dirty, err := o.Dirty()
			if err != nil {
				t.Fatal(err)
			}
			k = len(dirty) == 1
		})
		return k
	}
	edit := func(col *chunk.Column) {
		t.Helper()
		tp := openTmpl()
		if err := tp.StoreColumn(far, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
		if err := tp.Close(); err != nil {
			t.Fatal(err)
		}
	}

	withOverlay(func(o *Provider) {
		if err := o.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, synth(5)); err != nil {
			t.Fatal(err)
		}
	})
	if !kept() {
		t.Fatal("reopened over the same template, the overlay lost its match")
	}
	edit(synth(1)) // as it was
	if !kept() {
		t.Fatal("a column of the template stored unchanged, and the overlay lost its match")
	}
	edit(synth(6))
	if kept() {
		t.Fatal("a region of the template changed, and the overlay still shows the old match over it")
	}
}
