package overlay

import (
	"bytes"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 35 item 18: ResetOverlay waits for no fsync, so its cost does not
// depend on the disk's fsync latency. Every fsync (of a file or a
// directory) is held while the reset runs: a reset that waits for one
// does not return until they are let go. The fsyncs begun meanwhile are
// counted: they are background work's (the commit made durable, the next
// spare), which the reset must not wait for.
func TestResetWaitsForNoFsync(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	var gated atomic.Bool
	var held atomic.Int64
	release := make(chan struct{})
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		if (op == vfstest.OpSync || op == vfstest.OpSyncDir) && gated.Load() {
			held.Add(1)
			<-release
		}
		return nil
	})
	o, err := Config{Log: quiet, FS: fs}.Open(tp, filepath.Join(t.TempDir(), "arena"))
	if err != nil {
		t.Fatal(err)
	}
	orig := changeOneColumn(t, tp, o)
	o.bg.wg.Wait() // the spare is ready, as it is after any match
	gated.Store(true)
	done := make(chan error, 1)
	go func() { done <- o.ResetOverlay() }()
	select {
	case err := <-done:
		t.Logf("the reset returned with %d fsyncs begun and none done", held.Load())
		gated.Store(false)
		close(release)
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		n := held.Load()
		gated.Store(false)
		close(release)
		<-done
		t.Fatalf("ResetOverlay waited for an fsync: it had not returned after 10s with %d fsyncs held", n)
	}
	checkFreshMatch(t, o, orig)
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

// Issue 35 item 18: a reset's commit is made durable after the reset
// returned, so its sync's failure cannot fail the reset; it is final for
// the generation it made current, as any failed fsync is, and is not only
// logged: Sync returns it, and so does the next ResetOverlay, which starts
// a fresh generation with a commit of its own. The generation the failed
// commit replaced is kept, as a crash could bring it back; the next Open
// deletes it.
func TestCommitSyncFailureReported(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	dir := filepath.Join(t.TempDir(), "arena")
	var armed atomic.Bool
	var fail sync.Once
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		var err error
		if armed.Load() && op == vfstest.OpSyncDir && name == filepath.ToSlash(dir) {
			fail.Do(func() { err = errors.New("injected: the commit's sync fails") })
		}
		return err
	})
	o, err := Config{Log: quiet, FS: fs}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	orig := changeOneColumn(t, tp, o)
	o.bg.wg.Wait()
	armed.Store(true)
	if err := o.ResetOverlay(); err != nil {
		t.Fatalf("the reset waited for its commit's sync: %v", err)
	}
	o.bg.wg.Wait()
	if err := o.Sync(); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("Sync after the commit's sync failed: %v, want its error", err)
	}
	if err := o.Sync(); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("a second Sync: %v, want the same error: a failed fsync is final", err)
	}
	err = o.ResetOverlay()
	if err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("the next reset: %v, want the failure reported", err)
	}
	if err := o.Sync(); err != nil {
		t.Fatalf("Sync after a fresh reset: %v", err)
	}
	changeOneColumn(t, tp, o)
	if err := o.ResetOverlay(); err != nil {
		t.Fatal(err)
	}
	checkFreshMatch(t, o, orig)
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
	o2, err := Config{Log: quiet, FS: fs}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer o2.Shutdown()
	checkFreshMatch(t, o2, orig)
	o2.bg.wg.Wait()
	names, _ := os.ReadDir(dir)
	gens := 0
	for _, n := range names {
		if strings.HasPrefix(n.Name(), genPrefix) {
			gens++
		}
	}
	if gens != 2 { // the current and its spare
		t.Fatalf("%d generations after reopen: %v", gens, names)
	}
}

// Issue 35 item 18: a reset renames CURRENT into place unsynced, so a
// crash may keep its name and lose its data, whole or in part. Such a
// CURRENT (no final newline) names a reset in flight: Open completes it,
// and the arena comes back reset, never half, with one generation and its
// spare.
func TestOpenCompletesCutShortReset(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	full := string(encodeCurrent(2, tp.Edition()))
	for _, cut := range []string{"", full[:10], full[:len(full)-1], "\x00\x00\x00\x00"} {
		o, mem := matchInMemory(t, tp)
		if err := o.Shutdown(); err != nil {
			t.Fatal(err)
		}
		mem.WriteFile("/arena/"+currentName, []byte(cut))
		o2, err := Config{Log: quiet, FS: mem}.Open(tp, "/arena")
		if err != nil {
			t.Fatalf("CURRENT %q: open: %v", cut, err)
		}
		if dirty, err := o2.Dirty(); err != nil || len(dirty) != 0 {
			t.Fatalf("CURRENT %q: the reset was not completed: dirty %v, %v", cut, dirty, err)
		}
		if err := o2.Shutdown(); err != nil {
			t.Fatal(err)
		}
		b, _ := mem.ReadFile("/arena/" + currentName)
		cur, err := parseCurrent(b)
		if err != nil {
			t.Fatalf("CURRENT %q: after the completed reset CURRENT holds %q: %v", cut, b, err)
		}
		names, _ := mem.List("/arena")
		if !slices.Contains(names, genName(cur.gen)) || slices.ContainsFunc(names, func(n string) bool {
			return strings.HasPrefix(n, genPrefix) && n != genName(cur.gen)
		}) {
			t.Fatalf("CURRENT %q: generations after the completed reset: %v, want %s alone", cut, names, genName(cur.gen))
		}
	}
}

// Issue 35 item 18: a reset returns before its commit is durable, but no
// write of the new match is acknowledged as durable before it is: a crash
// right after a DurabilitySafe store keeps both the reset and the store,
// however late the background makes the commit durable.
func TestDurableWriteAfterResetKeepsTheReset(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	mem := vfstest.NewMem()
	var late atomic.Bool
	fs := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
		if late.Load() && op == vfstest.OpSync && path.Base(name) == currentName {
			time.Sleep(300 * time.Millisecond)
		}
		return nil
	})
	o, err := Config{Log: quiet, FS: fs, Durability: blazedb.DurabilitySafe}.Open(tp, "/arena")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	changeOneColumn(t, tp, o) // the last match
	o.bg.wg.Wait()
	late.Store(true)
	if err := o.ResetOverlay(); err != nil {
		t.Fatal(err)
	}
	pos := world.ChunkPos{1, 0} // the new match
	col, err := o.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	col.Chunk.SetBlock(2, 2, 2, 0, worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"])
	if err := o.StoreColumn(pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	clone := mem.CrashClone(rand.New(rand.NewPCG(1, 2)), 0) // the power goes now
	o2, err := Config{Log: quiet, FS: clone}.Open(tp, "/arena")
	if err != nil {
		t.Fatal(err)
	}
	defer o2.Shutdown()
	if dirty, err := o2.Dirty(); err != nil || len(dirty) != 1 || dirty[0].Pos != pos {
		t.Fatalf("after a crash right after a durable store of the new match the overlay holds %v, %v; want that store alone", dirty, err)
	}
}

// Issue 35 ("Done when", the overlay's CURRENT): a flipped byte in
// CURRENT made the arena refuse to open, so its server could not start.
// Which generation holds the match and which template it began on are
// then unknown, and an arena is disposable: Open forgets the match (a
// reset, logged as an error) and serves the template. A CURRENT of a newer
// version is still refused.
func TestOpenResetsOverDamagedCurrent(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	full := encodeCurrent(2, tp.Edition())
	for i := range len(full) - 1 { // the newline's loss is a cut-short reset
		o, mem := matchInMemory(t, tp)
		if err := o.Shutdown(); err != nil {
			t.Fatal(err)
		}
		b, err := mem.ReadFile("/arena/" + currentName)
		if err != nil {
			t.Fatal(err)
		}
		b[i] ^= 0x21
		if _, err := parseCurrent(b); err == nil {
			continue // still names a generation; the template check decides
		}
		mem.WriteFile("/arena/"+currentName, b)
		var logged logBuffer // the spare's preparation logs too, in the background
		o2, err := Config{Log: slog.New(slog.NewTextHandler(&logged, nil)), FS: mem}.Open(tp, "/arena")
		if err != nil {
			t.Fatalf("CURRENT %q: open: %v", b, err)
		}
		if dirty, err := o2.Dirty(); err != nil || len(dirty) != 0 {
			t.Fatalf("CURRENT %q: the match was not forgotten: dirty %v, %v", b, dirty, err)
		}
		if !strings.Contains(logged.String(), "level=ERROR") || !strings.Contains(logged.String(), "CURRENT is damaged") {
			t.Fatalf("CURRENT %q: the reset was not reported as an error: %s", b, logged.String())
		}
		if err := o2.Shutdown(); err != nil {
			t.Fatal(err)
		}
	}
	o, mem := matchInMemory(t, tp)
	o.Shutdown()
	mem.WriteFile("/arena/"+currentName, []byte("blaze-overlay 9 gen-000002 -\n"))
	if _, err := (Config{Log: quiet, FS: mem}).Open(tp, "/arena"); !errors.Is(err, blazedb.ErrVersion) {
		t.Fatalf("a CURRENT of a newer version: %v, want ErrVersion", err)
	}
}

// shutMatch makes a match in memory over a template and shuts it down,
// returning the template, the filesystem and the match generation's engine
// directory.
func shutMatch(t *testing.T) (*provider.DB, *vfstest.MemFS, string) {
	t.Helper()
	tp := openTemplate(t, template(t, 2))
	o, mem := matchInMemory(t, tp)
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
	b, err := mem.ReadFile("/arena/" + currentName)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := parseCurrent(b)
	if err != nil {
		t.Fatal(err)
	}
	return tp, mem, "/arena/" + genName(cur.gen) + "/blaze"
}

// wantResetOnOpen opens the arena again and checks that the match was
// forgotten and the reset logged as an error that mentions says.
func wantResetOnOpen(t *testing.T, tp *provider.DB, mem *vfstest.MemFS, says string) {
	t.Helper()
	var logged logBuffer
	o, err := Config{Log: slog.New(slog.NewTextHandler(&logged, nil)), FS: mem}.Open(tp, "/arena")
	if err != nil {
		t.Fatalf("open over a damaged generation: %v", err)
	}
	defer o.Shutdown()
	if dirty, err := o.Dirty(); err != nil || len(dirty) != 0 {
		t.Fatalf("the match was not forgotten: dirty %v, %v", dirty, err)
	}
	if l := logged.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "generation is damaged") || !strings.Contains(l, says) {
		t.Fatalf("the reset was not reported as an error: %s", l)
	}
}

// Issue 35 (the damage sweep, an arena's generation): a generation that
// does not open whole, here because its log lost bytes index.dat shows
// were durable (blazedb.ErrDurableLoss), made the arena refuse to open.
// Open forgets the match instead, loudly, as for a damaged CURRENT.
func TestOpenResetsOverDamagedGeneration(t *testing.T) {
	tp, mem, eng := shutMatch(t)
	cutLogInHalf(t, mem, eng)
	wantResetOnOpen(t, tp, mem, "durable")
}

// cutLogInHalf cuts the log of the engine in eng to half its length,
// durably: bytes its index.dat shows were durable are gone.
func cutLogInHalf(t *testing.T, mem *vfstest.MemFS, eng string) {
	t.Helper()
	f, err := mem.OpenReadWrite(eng + "/chunks.dat")
	if err != nil {
		t.Fatal(err)
	}
	size, _ := f.Size()
	f.Truncate(size / 2)
	f.Sync()
	f.Close()
}

// Issue 37 (one corruption marker): a generation holding a record that
// reads intact and does not decode (here a block dictionary record whose
// name holds no id) does not open, with an error that is now
// blazedb.ErrCorrupt too. Damage is damage: Open forgets the match, loudly,
// as for a generation whose log lost bytes, where it used to refuse.
func TestOpenResetsOverGenerationThatDoesNotDecode(t *testing.T) {
	tp, mem, dir := shutMatch(t)
	worldtest.PutRecords(t, dir, mem, map[string][]byte{"dict/zz": []byte("x")}, nil)
	wantResetOnOpen(t, tp, mem, "dict/zz")
}

// logBuffer is a log's output that the test reads while the overlay's
// background work may still write to it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
