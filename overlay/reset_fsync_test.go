package overlay

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
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
	fs := vfs.Inject(vfs.Default, func(op vfs.Op, name string) error {
		if (op == vfs.OpSync || op == vfs.OpSyncDir) && gated.Load() {
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
	fs := vfs.Inject(vfs.Default, func(op vfs.Op, name string) error {
		var err error
		if armed.Load() && op == vfs.OpSyncDir && name == filepath.ToSlash(dir) {
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
		f, err := mem.Create("/arena/" + currentName)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte(cut), 0); err != nil {
			t.Fatal(err)
		}
		f.Sync()
		f.Close()
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
