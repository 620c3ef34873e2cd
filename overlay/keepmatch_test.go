package overlay

import (
	"errors"
	"math/rand/v2"
	"path"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// KeepMatch (blaze promote): where Open would forget the match over damage
// (the match's generation, or a CURRENT a crash cut short during a reset),
// it fails with ErrStale and deletes nothing; a plain Open then forgets it.
func TestKeepMatchRefusesDamage(t *testing.T) {
	// A damaged generation.
	tp, mem, eng := shutMatch(t)
	cutLogInHalf(t, mem, eng)
	before, _ := mem.List("/arena")
	if _, err := (Config{Log: quiet, FS: mem, KeepMatch: true}).Open(tp, "/arena"); !errors.Is(err, ErrStale) {
		t.Fatalf("KeepMatch over a damaged generation: %v, want ErrStale", err)
	}
	if after, _ := mem.List("/arena"); !slices.Equal(before, after) {
		t.Fatalf("KeepMatch over a damaged generation changed the arena: %v, then %v", before, after)
	}
	wantResetOnOpen(t, tp, mem, "durable")

	// A CURRENT cut short.
	o, mem := matchInMemory(t, tp)
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
	mem.WriteFile("/arena/"+currentName, []byte("blaze-ov"))
	before, _ = mem.List("/arena")
	if _, err := (Config{Log: quiet, FS: mem, KeepMatch: true}).Open(tp, "/arena"); !errors.Is(err, ErrStale) {
		t.Fatalf("KeepMatch over a cut-short CURRENT: %v, want ErrStale", err)
	}
	if after, _ := mem.List("/arena"); !slices.Equal(before, after) {
		t.Fatalf("KeepMatch over a cut-short CURRENT changed the arena: %v, then %v", before, after)
	}
}

// A reset's CURRENT is renamed into place unsynced. When its process dies
// before the sync, the next Open reads it as the commit: it must make it
// durable before it builds on it, or a power cut could take it back and
// with it a store the new process's Sync had promised.
func TestOpenSyncsCurrentItReads(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	mem := vfstest.NewMem()
	var held atomic.Bool
	fs := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
		if held.Load() && op == vfstest.OpSync && path.Base(name) == currentName {
			return errors.New("held: the process dies before this sync")
		}
		return nil
	})
	o, err := Config{Log: quiet, FS: fs}.Open(tp, "/arena")
	if err != nil {
		t.Fatal(err)
	}
	changeOneColumn(t, tp, o)
	o.bg.wg.Wait()
	held.Store(true)
	if err := o.ResetOverlay(); err != nil {
		t.Fatal(err)
	}
	o.bg.wg.Wait()
	o.Shutdown() // fails to sync CURRENT: as good as killed

	o2, err := Config{Log: quiet, FS: mem, Durability: blazedb.DurabilitySafe}.Open(tp, "/arena")
	if err != nil {
		t.Fatal(err)
	}
	pos := world.ChunkPos{1, 0}
	col, err := o2.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	col.Chunk.SetBlock(2, 2, 2, 0, worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"])
	if err := o2.StoreColumn(pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	if err := o2.Sync(); err != nil {
		t.Fatal(err)
	}
	clone := mem.CrashClone(rand.New(rand.NewPCG(3, 4)), 0) // the power goes now
	o2.Shutdown()
	o3, err := Config{Log: quiet, FS: clone}.Open(tp, "/arena")
	if err != nil {
		t.Fatal(err)
	}
	defer o3.Shutdown()
	if dirty, err := o3.Dirty(); err != nil || len(dirty) != 1 || dirty[0].Pos != pos {
		t.Fatalf("after a power cut the overlay holds %v, %v; want the store Sync made durable", dirty, err)
	}
}
