package overlay

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// promoteColumn is the column the template holds at (x, 0) before a
// promote (seed x) and the one the arena stores there (seed 100+x).
func promoteColumn(seed int) *chunk.Column {
	return worldtest.Synthetic(uint64(seed), world.Overworld, world.DefaultBlockRegistry)
}

// Issue 40 item 4: a crash at any file operation of Promote leaves a
// template holding all of the arena's columns under a new edition, or
// none under the old one, whatever the crash kept of unsynced writes.
func TestPromoteIsCrashSafe(t *testing.T) {
	promoted, kept := 0, 0
	for k := 1; ; k++ {
		if k > 300 {
			t.Fatal("Promote never completed")
		}
		mem := vfstest.NewMem()
		tp, err := provider.Config{Log: quiet, FS: mem}.Open("/t")
		if err != nil {
			t.Fatal(err)
		}
		for x := range 3 {
			if err := tp.StoreColumn(world.ChunkPos{int32(x), 0}, world.Overworld, promoteColumn(x)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tp.Sync(); err != nil {
			t.Fatal(err)
		}
		before := tp.Edition()
		o, err := Config{Log: quiet, FS: mem}.Open(tp, "/arena")
		if err != nil {
			t.Fatal(err)
		}
		// One column changed, one new; (0, 0) left as the template's.
		for _, x := range []int{1, 5} {
			if err := o.StoreColumn(world.ChunkPos{int32(x), 0}, world.Overworld, promoteColumn(100+x)); err != nil {
				t.Fatal(err)
			}
		}
		if err := o.Sync(); err != nil {
			t.Fatal(err)
		}
		mem.CrashAfter(k)
		perr := o.Promote()
		crashed := mem.Crashed()
		clone := mem.CrashClone(rand.New(rand.NewPCG(uint64(k), 40)), rand.New(rand.NewPCG(uint64(k), 4)).Float64())
		o.Shutdown()
		tp.Discard()
		if !crashed && perr != nil {
			t.Fatalf("Promote with no crash: %v", perr)
		}

		re, err := provider.Config{Log: quiet, FS: clone, ReadOnly: true}.Open("/t")
		if err != nil {
			t.Fatalf("k=%d: open the template after the crash: %v", k, err)
		}
		_, err = re.LoadColumn(world.ChunkPos{5, 0}, world.Overworld)
		all := err == nil
		want := map[int]int{0: 0, 1: 1}
		if all {
			want[1], want[5] = 101, 105
			promoted++
			if re.Edition() == before {
				t.Fatalf("k=%d: promoted columns under the template's old edition", k)
			}
		} else {
			kept++
		}
		for x, seed := range want {
			got, err := re.LoadColumn(world.ChunkPos{int32(x), 0}, world.Overworld)
			if err == nil {
				err = worldtest.Compare(promoteColumn(seed), got)
			}
			if err != nil {
				t.Fatalf("k=%d: column %d of a template promoted %v: %v", k, x, all, err)
			}
		}
		re.Close()
		if !crashed {
			if !all {
				t.Fatalf("k=%d: Promote returned, and the template lacks the arena's columns", k)
			}
			break
		}
	}
	t.Logf("%d crash states promoted whole, %d not at all", promoted, kept)
	if kept == 0 || promoted == 0 {
		t.Fatalf("the crash points did not cover both sides of the batch")
	}
}

// Issue 40 item 4: Promote refuses a template opened read-only, and one
// that is not a Blaze world; other arenas over the template forget their
// matches at their next Open after a promote.
func TestPromoteRefusesAndOthersForget(t *testing.T) {
	tdir := template(t, 2)
	ro := openTemplate(t, tdir)
	o, err := Config{Log: quiet}.Open(ro, filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Promote(); !errors.Is(err, ErrPromote) {
		t.Fatalf("promote into a read-only template: %v", err)
	}
	o.Shutdown()
	ro.Close()

	tp, err := provider.Config{Log: quiet}.Open(tdir)
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	builder, err := Config{Log: quiet}.Open(tp, filepath.Join(t.TempDir(), "builder"))
	if err != nil {
		t.Fatal(err)
	}
	otherDir := filepath.Join(t.TempDir(), "other")
	other, err := Config{Log: quiet}.Open(tp, otherDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.StoreColumn(world.ChunkPos{0, 1}, world.Overworld, promoteColumn(7)); err != nil {
		t.Fatal(err)
	}
	other.Shutdown()
	if err := builder.StoreColumn(world.ChunkPos{9, 9}, world.Overworld, promoteColumn(9)); err != nil {
		t.Fatal(err)
	}
	if err := builder.Promote(); err != nil {
		t.Fatal(err)
	}
	builder.Shutdown()
	got, err := tp.LoadColumn(world.ChunkPos{9, 9}, world.Overworld)
	if err == nil {
		err = worldtest.Compare(promoteColumn(9), got)
	}
	if err != nil {
		t.Fatalf("the promoted column in the template: %v", err)
	}
	other, err = Config{Log: quiet}.Open(tp, otherDir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Shutdown()
	if d, err := other.Dirty(); err != nil || len(d) != 0 {
		t.Fatalf("another arena after the promote: changes %v, %v; want its match forgotten", d, err)
	}

	n, err := Config{Log: quiet}.Open(world.NopProvider{}, filepath.Join(t.TempDir(), "nop"))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	if err := n.Promote(); !errors.Is(err, ErrPromote) {
		t.Fatalf("promote into a template that is no Blaze world: %v", err)
	}
}
