package overlay

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// template builds a Blaze world of side x side synthetic columns and
// returns its directory.
func template(t testing.TB, side int) string {
	dir := filepath.Join(t.TempDir(), "template")
	p, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for x := 0; x < side; x++ {
		for z := 0; z < side; z++ {
			if err := p.StoreColumn(world.ChunkPos{int32(x), int32(z)}, world.Overworld, worldtest.Synthetic(uint64(x*side+z), world.Overworld, world.DefaultBlockRegistry)); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := p.Settings()
	s.Name = "Arena"
	p.SaveSettings(s)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func openTemplate(t testing.TB, dir string) *provider.DB {
	p, err := provider.Config{Log: quiet, ReadOnly: true}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func hashTree(t testing.TB, dir string) map[string][32]byte {
	out := map[string][32]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = sha256.Sum256(b)
		}
		return nil
	})
	return out
}

// A whole match cycle (load, mutate, store, settings, spawns, close,
// reset) never writes a byte of the template.
func TestTemplateNeverWritten(t *testing.T) {
	tdir := template(t, 4)
	before := hashTree(t, tdir)
	tp := openTemplate(t, tdir)
	o, err := Config{Log: quiet}.Open(tp, filepath.Join(t.TempDir(), "arena"))
	if err != nil {
		t.Fatal(err)
	}
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	for i := int32(0); i < 4; i++ {
		col, err := o.LoadColumn(world.ChunkPos{i, i}, world.Overworld)
		if err != nil {
			t.Fatal(err)
		}
		col.Chunk.SetBlock(1, 1, 1, 0, obsidian)
		if err := o.StoreColumn(world.ChunkPos{i, i}, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
	}
	s := o.Settings()
	s.Time = 999
	o.SaveSettings(s)
	o.SavePlayerSpawnPosition(uuid.New(), cube.Pos{1, 2, 3})
	if err := o.ResetOverlay(); err != nil {
		t.Fatal(err)
	}
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
	tp.Close()
	after := hashTree(t, tdir)
	if len(before) != len(after) {
		t.Fatalf("template has %d files, had %d", len(after), len(before))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("template file %s changed", k)
		}
	}
}

func TestOverlayReadsWritesDirtyReset(t *testing.T) {
	tp := openTemplate(t, template(t, 3))
	dir := filepath.Join(t.TempDir(), "arena")
	o, err := Config{Log: quiet}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Config{Log: quiet}).Open(tp, dir); !errors.Is(err, blazedb.ErrLocked) {
		t.Fatalf("a second overlay on the same directory: %v", err)
	}
	if o.Settings().Name != "Arena" {
		t.Fatalf("settings not from the template: %q", o.Settings().Name)
	}
	pos := world.ChunkPos{1, 2}
	orig, _ := tp.LoadColumn(pos, world.Overworld)
	col, err := o.LoadColumn(pos, world.Overworld)
	if err != nil || worldtest.Compare(orig, col) != nil {
		t.Fatalf("overlay does not read the template: %v", err)
	}
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	col.Chunk.SetBlock(3, 3, 3, 0, obsidian)
	o.StoreColumn(pos, world.Overworld, col)
	o.StoreColumn(world.ChunkPos{50, 50}, world.Nether, worldtest.Synthetic(1, world.Nether, world.DefaultBlockRegistry))
	if got, _ := o.LoadColumn(pos, world.Overworld); got.Chunk.Block(3, 3, 3, 0) != obsidian {
		t.Fatal("overlay write not read back")
	}
	if got, _ := tp.LoadColumn(pos, world.Overworld); got.Chunk.Block(3, 3, 3, 0) == obsidian {
		t.Fatal("the write reached the template")
	}
	dirty, _ := o.Dirty()
	if len(dirty) != 2 {
		t.Fatalf("dirty %v", dirty)
	}
	s := o.Settings()
	s.Name = "Match 1"
	o.SaveSettings(s)
	id := uuid.New()
	o.SavePlayerSpawnPosition(id, cube.Pos{5, 6, 7})

	// The overlay survives a reopen...
	o.Shutdown()
	o, err = Config{Log: quiet}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := o.LoadColumn(pos, world.Overworld); got.Chunk.Block(3, 3, 3, 0) != obsidian {
		t.Fatal("overlay write lost on reopen")
	}
	if o.Settings().Name != "Match 1" {
		t.Fatal("overlay settings lost on reopen")
	}
	// ...and a reset forgets all of it.
	if err := o.ResetOverlay(); err != nil {
		t.Fatal(err)
	}
	if got, _ := o.LoadColumn(pos, world.Overworld); worldtest.Compare(orig, got) != nil {
		t.Fatal("reset did not restore the template's column")
	}
	if _, err := o.LoadColumn(world.ChunkPos{50, 50}, world.Nether); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("column written during the match survived the reset: %v", err)
	}
	if dirty, _ := o.Dirty(); len(dirty) != 0 {
		t.Fatalf("dirty after reset: %v", dirty)
	}
	if o.Settings().Name != "Arena" {
		t.Fatal("match settings survived the reset")
	}
	if _, ok, _ := o.LoadPlayerSpawnPosition(id); ok {
		t.Fatal("match spawn survived the reset")
	}
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 3 { // CURRENT, LOCK, one generation
		t.Fatalf("generations left: %v", names)
	}
}

// matchInMemory opens an overlay over tp in /arena of a new in-memory
// filesystem and stores a changed column (1, 1) through it, as a match.
func matchInMemory(t *testing.T, tp *provider.DB) (*Provider, *vfstest.MemFS) {
	t.Helper()
	mem := vfstest.NewMem()
	o, err := Config{Log: quiet, FS: mem}.Open(tp, "/arena")
	if err != nil {
		t.Fatal(err)
	}
	col, err := o.LoadColumn(world.ChunkPos{1, 1}, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	col.Chunk.SetBlock(0, 0, 0, 0, worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"])
	if err := o.StoreColumn(world.ChunkPos{1, 1}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	return o, mem
}

// A crash at any file operation of a reset leaves the overlay either
// reset or not, never half, whichever of the unsynced changes persist.
func TestResetIsCrashSafe(t *testing.T) {
	tdir := template(t, 2)
	crashes, resets := 0, 0 // crash states, and those that came back reset
	cutShort := 0           // crash states whose CURRENT lost its data, not its name (TestOpenCompletesCutShortReset)
	defer func() {
		t.Logf("%d crash states inside a reset (%d of them reset, %d with CURRENT cut short)", crashes, resets, cutShort)
		if crashes < 5 || resets == 0 || resets == crashes {
			t.Errorf("the crash points did not cover both sides of the commit")
		}
	}()
	for k := 1; k < 80; k++ {
		tp := openTemplate(t, tdir)
		o, mem := matchInMemory(t, tp)
		o.cur.Sync()          // the provider's: it writes the queued store too (issue 42)
		spare := <-o.bg.spare // let the spare be ready: preparing it is not part of a reset
		o.bg.spare <- spare
		mem.CrashAfter(k)
		resetErr := o.ResetOverlay()
		o.Shutdown() // background work (discarding, the next spare) runs into the crash too
		crashed := mem.Crashed()
		// Unsynced changes to directories may persist in part (keep > 0).
		for i, keep := range []float64{0, 0.5, 1} {
			clone := mem.CrashClone(rand.New(rand.NewPCG(uint64(k), uint64(i))), keep)
			if b, err := clone.ReadFile("/arena/" + currentName); err == nil && !bytes.HasSuffix(b, []byte("\n")) {
				cutShort++
			}
			o2, err := Config{Log: quiet, FS: clone}.Open(tp, "/arena")
			if err != nil {
				t.Fatalf("k=%d keep %v: reopen after a crash during reset: %v", k, keep, err)
			}
			dirty, err := o2.Dirty()
			if err != nil {
				t.Fatal(err)
			}
			if crashed {
				crashes++
			}
			switch {
			case len(dirty) == 0: // reset
				if crashed {
					resets++
				}
			case len(dirty) == 1 && dirty[0].Pos == (world.ChunkPos{1, 1}): // not reset
				if resetErr == nil && !crashed {
					t.Fatalf("k=%d keep %v: a reset that returned nil was undone", k, keep)
				}
			default:
				t.Fatalf("k=%d keep %v: half reset: %v", k, keep, dirty)
			}
			o2.Shutdown()
			gens := 0
			names, _ := clone.List("/arena")
			for _, n := range names {
				if filepath.Ext(n) == "" && len(n) > 4 && n[:4] == "gen-" {
					gens++
				}
			}
			if gens != 1 {
				t.Fatalf("k=%d keep %v: %d generations after reopen: %v", k, keep, gens, names)
			}
		}
		if !crashed {
			break // the reset finished before the crash point: every k is covered
		}
	}
}

// A crash at any file operation of an Open that forgets a match made on
// another template leaves an overlay that, opened again over the new
// template, has forgotten it too, with one generation.
func TestStaleOpenIsCrashSafe(t *testing.T) {
	oldTP, newTP := openTemplate(t, template(t, 2)), openTemplate(t, template(t, 2))
	if oldTP.Edition() == newTP.Edition() {
		t.Fatal("two templates made apart share an edition")
	}
	crashes := 0
	for k := 1; k < 80; k++ {
		o, mem := matchInMemory(t, oldTP)
		if err := o.Shutdown(); err != nil {
			t.Fatal(err)
		}
		mem.CrashAfter(k)
		if o, err := (Config{Log: quiet, FS: mem}).Open(newTP, "/arena"); err == nil {
			o.Shutdown() // background work (deleting the old generation) runs into the crash too
		}
		crashed := mem.Crashed()
		// Unsynced changes to directories may persist in part (keep > 0).
		for i, keep := range []float64{0, 0.5, 1} {
			clone := mem.CrashClone(rand.New(rand.NewPCG(uint64(k), 10+uint64(i))), keep)
			o2, err := Config{Log: quiet, FS: clone}.Open(newTP, "/arena")
			if err != nil {
				t.Fatalf("k=%d keep %v: reopen after a crash: %v", k, keep, err)
			}
			if dirty, err := o2.Dirty(); err != nil || len(dirty) != 0 {
				t.Fatalf("k=%d keep %v: the match made on the old template is back: %v, %v", k, keep, dirty, err)
			}
			o2.Shutdown()
			gens := 0
			names, _ := clone.List("/arena")
			for _, n := range names {
				if strings.HasPrefix(n, genPrefix) {
					gens++
				}
			}
			if gens != 1 {
				t.Fatalf("k=%d keep %v: %d generations after reopen: %v", k, keep, gens, names)
			}
		}
		if !crashed {
			break
		}
		crashes++
	}
	t.Logf("%d crash points", crashes)
	if crashes < 5 {
		t.Fatalf("only %d crash points", crashes)
	}
}

// The arena cycle with real Dragonfly worlds: play, close, reset, play.
func TestArenaCycleWithDragonfly(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	dir := filepath.Join(t.TempDir(), "arena")
	o, err := Config{Log: quiet}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	pos := cube.Pos{4, 100, 4}
	for match := 0; match < 3; match++ {
		w := world.Config{Provider: o, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
		<-w.Do(func(tx *world.Tx) {
			if _, ok := tx.Block(pos).(block.Air); !ok {
				t.Errorf("match %d starts with %T where the template has air", match, tx.Block(pos))
			}
			tx.SetBlock(pos, block.Stone{}, nil)
		}).Done()
		w.Close() // saves into the overlay, then closes it
		b, _ := os.ReadFile(filepath.Join(dir, currentName))
		cur, err := parseCurrent(b)
		if err != nil {
			t.Fatal(err)
		}
		check, err := provider.Config{Log: quiet, ReadOnly: true}.Open(filepath.Join(dir, genName(cur.gen)))
		if err != nil {
			t.Fatal(err)
		}
		dirty := check.Engine().Stats().ChunkKeys
		check.Close()
		if dirty == 0 {
			t.Fatalf("match %d: the world saved nothing into the overlay", match)
		}
		if err := o.ResetOverlay(); err != nil { // reopens the closed overlay
			t.Fatal(err)
		}
	}
}

// Several arenas on one template reset while others load and store.
func TestConcurrentArenas(t *testing.T) {
	tp := openTemplate(t, template(t, 3))
	base := t.TempDir()
	var wg sync.WaitGroup
	for a := 0; a < 4; a++ {
		o, err := Config{Log: quiet}.Open(tp, filepath.Join(base, fmt.Sprint("arena", a)))
		if err != nil {
			t.Fatal(err)
		}
		defer o.Shutdown()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				p := world.ChunkPos{int32(i % 3), int32(a % 3)}
				col, err := o.LoadColumn(p, world.Overworld)
				if err != nil {
					t.Error(err)
					return
				}
				col.Chunk.SetBlock(uint8(i%16), 0, 0, 0, worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"])
				if err := o.StoreColumn(p, world.Overworld, col); err != nil {
					t.Error(err)
					return
				}
				if a%2 == 0 && i%7 == 0 {
					if err := o.ResetOverlay(); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// retiredArena makes an arena in dir over a template of one column, and
// shuts it down.
func retiredArena(t *testing.T) (tp *provider.DB, dir string, o *Provider) {
	tp = openTemplate(t, template(t, 1))
	dir = filepath.Join(t.TempDir(), "arena")
	o, err := Config{Log: quiet}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
	return tp, dir, o
}

// After Shutdown the arena stays retired: no reset, no new files; a second
// Shutdown is harmless.
func TestShutdownIsFinal(t *testing.T) {
	tp, dir, o := retiredArena(t)
	if s := o.Settings(); s == nil || s == tp.Settings() {
		t.Fatal("a closed overlay must keep its own settings, not hand out the template's shared ones")
	}
	o.SaveSettings(o.Settings()) // must not panic
	before, _ := os.ReadDir(dir)
	if err := o.ResetOverlay(); !errors.Is(err, ErrShutdown) {
		t.Fatalf("reset after shutdown: %v", err)
	}
	if err := o.Shutdown(); err != nil {
		t.Fatalf("second shutdown: %v", err)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Fatalf("files appeared after shutdown: %v -> %v", before, after)
	}
}

// An overlay opened over a template whose columns changed since its
// changes were made on it forgets them (they would show the old map through
// the new one); one opened over the same template keeps them, however often
// the template was opened in between.
func TestTemplateChangeForgetsChanges(t *testing.T) {
	tdir := template(t, 2)
	dir := filepath.Join(t.TempDir(), "arena")
	stone := worldtest.States(world.DefaultBlockRegistry)["minecraft:stone"]
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	changed := func(seed uint64, rid uint32) *chunk.Column {
		c := worldtest.Synthetic(seed, world.Overworld, world.DefaultBlockRegistry)
		c.Chunk.SetBlock(0, 0, 0, 0, rid)
		return c
	}
	// match stores a changed column (0, 0) through an overlay on the
	// template as it is, and closes both.
	match := func() {
		tp := openTemplate(t, tdir)
		o, err := Config{Log: quiet}.Open(tp, dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, changed(0, stone)); err != nil {
			t.Fatal(err)
		}
		if err := o.Shutdown(); err != nil {
			t.Fatal(err)
		}
		tp.Close()
	}
	// kept reports whether an overlay opened now still has the match's
	// column.
	kept := func() bool {
		t.Helper()
		tp := openTemplate(t, tdir)
		defer tp.Close()
		o, err := Config{Log: quiet}.Open(tp, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Shutdown()
		dirty, err := o.Dirty()
		if err != nil {
			t.Fatal(err)
		}
		got, err := o.LoadColumn(world.ChunkPos{0, 0}, world.Overworld)
		if err != nil {
			t.Fatal(err)
		}
		isMatch := worldtest.Compare(changed(0, stone), got) == nil
		if isMatch != (len(dirty) == 1) {
			t.Fatalf("the column is the match's: %v, but the overlay lists %v", isMatch, dirty)
		}
		return isMatch
	}
	// edit opens the template writable and stores col at (1, 1).
	edit := func(col *chunk.Column) {
		p, err := provider.Config{Log: quiet}.Open(tdir)
		if err != nil {
			t.Fatal(err)
		}
		if col != nil {
			if err := p.StoreColumn(world.ChunkPos{1, 1}, world.Overworld, col); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}

	match()
	if !kept() {
		t.Fatal("reopened over the same template, the overlay lost its changes")
	}
	edit(nil)
	edit(worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry)) // (1, 1) as it was
	if !kept() {
		t.Fatal("the template was opened and stored unchanged, and the overlay lost its changes")
	}
	edit(changed(3, obsidian))
	if kept() {
		t.Fatal("the template's map changed, and the overlay still shows the old match over it")
	}
	names, _ := os.ReadDir(dir)
	if len(names) > 4 { // CURRENT, LOCK, the generation, the spare
		t.Fatalf("the forgotten generation is still there: %v", names)
	}
}

// The registry a World sets on the overlay reaches the template, and every
// generation the overlay starts after it: a column stored after a reset is
// encoded with that registry's states, and reads back under it once the
// arena is opened again.
func TestRegistryReachesTemplateAndNewGenerations(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	pos, dim := world.ChunkPos{1, 1}, world.Overworld
	orig, err := tp.LoadColumn(pos, dim) // under Dragonfly's own ids
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "arena")
	o, err := Config{Log: quiet}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := worldtest.PermutedRegistry(3, "")
	o.SetBlockRegistry(reg)
	col, err := o.LoadColumn(pos, dim)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.CheckMoved(orig, col); err != nil {
		t.Fatalf("the template's column under the overlay's registry: %v", err)
	}

	o.Close() // as a World does at the end of a match
	if err := o.ResetOverlay(); err != nil {
		t.Fatal(err)
	}
	obsidian := reg.Perm[worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]]
	col.Chunk.SetBlock(3, 3, 3, 0, obsidian)
	if err := o.StoreColumn(pos, dim, col); err != nil {
		t.Fatal(err)
	}
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
	o, err = Config{Log: quiet}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	o.SetBlockRegistry(reg)
	got, err := o.LoadColumn(pos, dim)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(got, col); err != nil {
		t.Fatalf("the column stored after the reset: %v", err)
	}
}

// A reset whose commit fails changes nothing: the match's changes are still
// there, CURRENT still names them for a reopen, the prepared generation
// stays prepared, and the next reset works. The commit can fail in writing
// the new CURRENT or in renaming it into place. (Its sync comes after the
// reset returned: TestCommitSyncFailureReported.)
func TestResetCommitFailure(t *testing.T) {
	for _, c := range []struct {
		name string
		op   vfstest.Op
	}{{"write", vfstest.OpWrite}, {"rename", vfstest.OpRename}} {
		t.Run(c.name, func(t *testing.T) {
			tp := openTemplate(t, template(t, 2))
			dir := filepath.Join(t.TempDir(), "arena")
			var fail sync.Once
			armed := make(chan struct{})
			fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
				var err error
				select {
				case <-armed:
					if op == c.op && (strings.HasPrefix(filepath.Base(name), currentName) || name == filepath.ToSlash(dir)) {
						fail.Do(func() { err = errors.New("injected: the commit fails") })
					}
				default:
				}
				return err
			})
			o, err := Config{Log: quiet, FS: fs}.Open(tp, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Shutdown()
			orig := changeOneColumn(t, tp, o)
			o.bg.wg.Wait() // the spare is ready: the commit is the reset's first file work
			close(armed)
			if err := o.ResetOverlay(); err == nil {
				t.Fatal("a reset whose commit failed reported success")
			}
			checkFailedReset(t, o, dir)
			if err := o.ResetOverlay(); err != nil {
				t.Fatalf("the reset after a failed one: %v", err)
			}
			checkFreshMatch(t, o, orig)
		})
	}
}

// A generation that a reset replaced but could not delete (in the
// background) is not only logged: the next call that can report it does.
func TestFailedDeletionReported(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	var armed atomic.Bool
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		if op == vfstest.OpRemove && armed.Load() {
			return errors.New("injected: remove fails")
		}
		return nil
	})
	o, err := Config{Log: quiet, FS: fs}.Open(tp, filepath.Join(t.TempDir(), "arena"))
	if err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	resetErr := o.ResetOverlay() // its old generation's deletion fails
	o.bg.wg.Wait()
	armed.Store(false) // Shutdown's own removals work
	shutErr := o.Shutdown()
	if err := errors.Join(resetErr, shutErr); err == nil || !strings.Contains(err.Error(), "injected: remove fails") {
		t.Fatalf("reset: %v; shutdown: %v", resetErr, shutErr)
	}
}

// Every call that can fail on a closed overlay reports blazedb.ErrClosed,
// as the provider's do; ResetOverlay opens it again.
func TestClosedReportsErrClosed(t *testing.T) {
	o, _ := matchInMemory(t, openTemplate(t, template(t, 2)))
	defer o.Shutdown()
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	_, loadErr := o.LoadColumn(world.ChunkPos{0, 0}, world.Overworld)
	_, dirtyErr := o.Dirty()
	_, _, spawnErr := o.LoadPlayerSpawnPosition(uuid.New())
	for name, err := range map[string]error{
		"LoadColumn":              loadErr,
		"StoreColumn":             o.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, &chunk.Column{Chunk: chunk.New(world.DefaultBlockRegistry, world.Overworld.Range())}),
		"Dirty":                   dirtyErr,
		"LoadPlayerSpawnPosition": spawnErr,
		"SavePlayerSpawnPosition": o.SavePlayerSpawnPosition(uuid.New(), cube.Pos{}),
		"Sync":                    o.Sync(),
	} {
		if !errors.Is(err, blazedb.ErrClosed) {
			t.Errorf("%s on a closed overlay: %v, want ErrClosed", name, err)
		}
	}
	if err := o.ResetOverlay(); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Dirty(); err != nil {
		t.Fatalf("Dirty after ResetOverlay reopened the overlay: %v", err)
	}
}

// A reset whose prepared generation could not be made (the disk full, say)
// fails and changes nothing: the match's changes stay, CURRENT still names
// them. The generation is prepared again, and the next reset works.
func TestResetWithFailedSpare(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	dir := filepath.Join(t.TempDir(), "arena")
	var armed atomic.Bool
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		// Only a spare generation's files are made while armed.
		if op == vfstest.OpCreate && armed.Load() && strings.HasPrefix(filepath.Base(filepath.Dir(name)), genPrefix) {
			return syscall.ENOSPC
		}
		return nil
	})
	o, err := Config{Log: quiet, FS: fs}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	o.bg.wg.Wait()
	armed.Store(true)
	if err := o.ResetOverlay(); err != nil { // its spare was ready; the next one fails
		t.Fatal(err)
	}
	orig := changeOneColumn(t, tp, o)
	o.bg.wg.Wait()
	armed.Store(true) // and so does the one the failed reset prepares again, at first
	if err := o.ResetOverlay(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a reset without a spare: %v, want the spare's error", err)
	}
	checkFailedReset(t, o, dir)
	o.bg.wg.Wait()
	armed.Store(false)
	if err := o.ResetOverlay(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the reset after the second failed preparation: %v, want its error", err)
	}
	if err := o.ResetOverlay(); err != nil { // the disk has room again
		t.Fatalf("a reset once the spare could be made: %v", err)
	}
	checkFreshMatch(t, o, orig)
}

// changedPos is the column changeOneColumn changes.
var changedPos = world.ChunkPos{0, 1}

// changeOneColumn changes one block of a column through o, as a match
// does, and returns the template's column.
func changeOneColumn(t *testing.T, tp *provider.DB, o *Provider) *chunk.Column {
	t.Helper()
	orig, err := tp.LoadColumn(changedPos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	col, err := o.LoadColumn(changedPos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	col.Chunk.SetBlock(1, 1, 1, 0, worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"])
	if err := o.StoreColumn(changedPos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	return orig
}

// checkFailedReset checks that a reset that failed changed nothing: the
// match's column is still changed, and CURRENT, what a reopen would find,
// names the match's generation.
func checkFailedReset(t *testing.T, o *Provider, dir string) {
	t.Helper()
	if dirty, err := o.Dirty(); err != nil || len(dirty) != 1 {
		t.Fatalf("after the failed reset: dirty %v, %v; want the match's one column", dirty, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, currentName))
	if err != nil {
		t.Fatal(err)
	}
	if cur, err := parseCurrent(b); err != nil || cur.gen != o.gen {
		t.Fatalf("after the failed reset %s names %+v, %v; want the match's generation %d", currentName, cur, err, o.gen)
	}
}

// checkFreshMatch checks that o holds no change after a reset, and the
// changed column is the template's again.
func checkFreshMatch(t *testing.T, o *Provider, orig *chunk.Column) {
	t.Helper()
	if dirty, err := o.Dirty(); err != nil || len(dirty) != 0 {
		t.Fatalf("after the reset: dirty %v, %v", dirty, err)
	}
	if got, err := o.LoadColumn(changedPos, world.Overworld); err != nil || worldtest.Compare(got, orig) != nil {
		t.Fatalf("after the reset the column is not the template's: %v", err)
	}
}

// Sync makes the match's changes durable in a mode that does not sync each
// store: after a crash right after it, a reopened overlay holds them.
func TestSyncMakesChangesDurable(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	mem := vfstest.NewMem()
	o, err := Config{Log: quiet, FS: mem, Durability: blazedb.DurabilityFast}.Open(tp, "/arena")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	o.bg.wg.Wait() // the spare is made: only the store is unsynced
	changeOneColumn(t, tp, o)
	reopened := func(seed uint64) []DirtyChunk {
		t.Helper()
		o2, err := Config{Log: quiet, FS: mem.CrashClone(rand.New(rand.NewPCG(seed, 1)), 0)}.Open(tp, "/arena")
		if err != nil {
			t.Fatal(err)
		}
		defer o2.Shutdown()
		dirty, err := o2.Dirty()
		if err != nil {
			t.Fatal(err)
		}
		return dirty
	}
	if dirty := reopened(1); len(dirty) != 0 {
		t.Fatalf("a crash before Sync kept the unsynced change (%v): the test shows nothing", dirty)
	}
	if err := o.Sync(); err != nil {
		t.Fatal(err)
	}
	if dirty := reopened(2); len(dirty) != 1 || dirty[0].Pos != changedPos {
		t.Fatalf("after Sync and a crash the overlay holds %v, want the changed column", dirty)
	}
}
