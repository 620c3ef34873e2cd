package vfstest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// writeSynced creates name with data and syncs the file, not its directory.
func writeSynced(t *testing.T, m *MemFS, name, data string) {
	t.Helper()
	f, err := m.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(data), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// content is a file's content, or "<none>".
func content(m *MemFS, name string) string {
	b, err := m.ReadFile(name)
	if err != nil {
		return "<none>"
	}
	return string(b)
}

func mustDo(t *testing.T, errs ...error) {
	t.Helper()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// A directory MkdirAll made, and a file in it, survive a crash only once
// every directory on the way has been synced.
func TestMemNewDirectoryNeedsItsParentSynced(t *testing.T) {
	m := NewMem()
	mustDo(t, m.MkdirAll("/a/b", 0o755))
	writeSynced(t, m, "/a/b/f", "data")
	mustDo(t, m.SyncDir("/a/b"))
	if _, err := m.CrashClone(nil, 0).List("/a"); !errors.Is(err, vfs.ErrNotExist) {
		t.Fatalf("/a after a crash before / was synced: %v, want not found", err)
	}
	mustDo(t, m.SyncDir("/"))
	after := m.CrashClone(nil, 0)
	if names, err := after.List("/a"); err != nil || len(names) != 0 {
		t.Fatalf("/a after / alone was synced: %v, %v; want it empty", names, err)
	}
	mustDo(t, m.SyncDir("/a"))
	if got := content(m.CrashClone(nil, 0), "/a/b/f"); got != "data" {
		t.Fatalf("/a/b/f after every directory was synced: %q", got)
	}
}

// A renamed directory takes its contents with it, under the name its
// parent had when last synced.
func TestMemDirectoryRename(t *testing.T) {
	m := NewMem()
	mustDo(t, m.MkdirAll("/tmp", 0o755))
	writeSynced(t, m, "/tmp/f", "data")
	mustDo(t, m.SyncDir("/tmp"), m.SyncDir("/"))
	mustDo(t, m.Rename("/tmp", "/dir"))
	if names, _ := m.List("/"); !slices.Equal(names, []string{"dir"}) {
		t.Fatalf("/ holds %v after the rename, want [dir]", names)
	}
	before := m.CrashClone(nil, 0)
	if content(before, "/tmp/f") != "data" || content(before, "/dir/f") != "<none>" {
		t.Fatalf("a crash before / was synced: /tmp/f %q, /dir/f %q; want the old name", content(before, "/tmp/f"), content(before, "/dir/f"))
	}
	mustDo(t, m.SyncDir("/"))
	after := m.CrashClone(nil, 0)
	if content(after, "/tmp/f") != "<none>" || content(after, "/dir/f") != "data" {
		t.Fatalf("a crash after / was synced: /tmp/f %q, /dir/f %q; want the new name", content(after, "/tmp/f"), content(after, "/dir/f"))
	}

	if err := m.Rename("/dir", "/dir/sub"); err == nil {
		t.Fatal("moved a directory into itself")
	}
	mustDo(t, m.MkdirAll("/full", 0o755))
	writeSynced(t, m, "/full/g", "")
	if err := m.Rename("/dir", "/full"); err == nil {
		t.Fatal("renamed a directory over one that is not empty")
	}
	if err := m.Rename("/dir/f", "/full"); err == nil {
		t.Fatal("renamed a file over a directory")
	}
}

// Removals, of files and of empty directories, are undone by a crash until
// the parent is synced.
func TestMemRemoveNeedsItsParentSynced(t *testing.T) {
	m := NewMem()
	mustDo(t, m.MkdirAll("/d/e", 0o755))
	writeSynced(t, m, "/d/f", "data")
	mustDo(t, m.SyncDir("/"), m.SyncDir("/d"))
	if err := m.Remove("/d"); err == nil {
		t.Fatal("removed a directory that is not empty")
	}
	mustDo(t, m.Remove("/d/f"), m.Remove("/d/e"))
	if names, _ := m.CrashClone(nil, 0).List("/d"); !slices.Equal(names, []string{"e", "f"}) {
		t.Fatalf("/d after a crash before it was synced: %v, want [e f]", names)
	}
	mustDo(t, m.SyncDir("/d"))
	if names, err := m.CrashClone(nil, 0).List("/d"); err != nil || len(names) != 0 {
		t.Fatalf("/d after it was synced: %v, %v; want it empty", names, err)
	}
}

// One seed gives one crash state, so a failure can be replayed.
func TestMemCrashCloneIsDeterministic(t *testing.T) {
	m := NewMem()
	mustDo(t, m.MkdirAll("/d", 0o755), m.SyncDir("/"))
	for _, n := range []string{"/d/a", "/d/b", "/d/c"} {
		writeSynced(t, m, n, "")
		f, _ := m.OpenReadWrite(n)
		for i := range 20 {
			f.WriteAt([]byte("0123456789"), int64(10*i))
		}
		f.Close()
	}
	mustDo(t, m.SyncDir("/d"))
	state := func(c *MemFS) (s []string) {
		for _, n := range []string{"/d/a", "/d/b", "/d/c"} {
			s = append(s, content(c, n))
		}
		return s
	}
	want := state(m.CrashClone(rand.New(rand.NewPCG(7, 7)), 0.5))
	for range 10 {
		if got := state(m.CrashClone(rand.New(rand.NewPCG(7, 7)), 0.5)); !slices.Equal(got, want) {
			t.Fatalf("one seed gave two crash states:\n%q\n%q", want, got)
		}
	}
}

// vfs.MkdirAll's directories survive a crash once it returns, whichever
// of its operations a crash interrupts.
func TestMkdirAllIsDurable(t *testing.T) {
	for n := 1; ; n++ {
		m := NewMem()
		mustDo(t, m.MkdirAll("/have", 0o755), m.SyncDir("/"))
		m.CrashAfter(n)
		err := vfs.MkdirAll(m, "/have/a/b/c")
		if err != nil && !errors.Is(err, ErrCrashed) {
			t.Fatal(err)
		}
		m.CrashAfter(0)
		if err == nil {
			if _, err := m.CrashClone(nil, 0).List("/have/a/b/c"); err != nil {
				t.Fatalf("crash after %d operations: %v after MkdirAll returned", n, err)
			}
			if n-1 != 6 {
				t.Fatalf("MkdirAll took %d operations, want 6: three directories and their parents' syncs", n-1)
			}
			return
		}
	}
}

// Create truncates an existing file in place, as O_TRUNC does: until a Sync
// a crash may keep the old content or the empty file, never lose the name.
func TestMemCreateTruncatesInPlace(t *testing.T) {
	m := NewMem()
	writeSynced(t, m, "/f", "old")
	mustDo(t, m.SyncDir("/"))
	f, err := m.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(nil, 0); err != nil { // writes nothing, truncates nothing
		t.Fatal(err)
	}
	f.Close()
	if got := content(m.CrashClone(nil, 0), "/f"); got != "old" {
		t.Fatalf("a crash keeping no unsynced write: %q, want the old content", got)
	}
	if got := content(m.CrashClone(rand.New(rand.NewPCG(1, 1)), 1), "/f"); got != "" {
		t.Fatalf("a crash keeping every unsynced write: %q, want the file truncated", got)
	}
	f, _ = m.OpenReadWrite("/f")
	f.WriteAt([]byte("new"), 0)
	f.Sync()
	f.WriteAt(nil, 3)
	f.Close()
	if got := content(m.CrashClone(rand.New(rand.NewPCG(1, 1)), 1), "/f"); got != "new" {
		t.Fatalf("after a synced write and an empty one: %q, want %q", got, "new")
	}
}

// Changes to a directory since its last SyncDir may survive a crash, as a
// prefix of them in the order made; a rename within the directory is kept
// whole or not at all.
func TestMemUnsyncedDirectoryChangesPersistInOrder(t *testing.T) {
	m := NewMem()
	mustDo(t, m.MkdirAll("/d", 0o755), m.SyncDir("/"))
	writeSynced(t, m, "/d/old", "O")
	mustDo(t, m.SyncDir("/d"))
	writeSynced(t, m, "/d/a", "A")
	mustDo(t, m.Rename("/d/old", "/d/new"))
	writeSynced(t, m, "/d/b", "B")
	if names, _ := m.CrashClone(rand.New(rand.NewPCG(1, 1)), 0).List("/d"); !slices.Equal(names, []string{"old"}) {
		t.Fatalf("keep 0: /d holds %v, want only what was synced", names)
	}
	prefixes := map[string]bool{"[old]": true, "[a old]": true, "[a new]": true, "[a b new]": true}
	seen := map[string]bool{}
	for seed := range uint64(200) {
		c := m.CrashClone(rand.New(rand.NewPCG(seed, 1)), 1)
		names, _ := c.List("/d")
		s := fmt.Sprint(names)
		if !prefixes[s] {
			t.Fatalf("seed %d: /d holds %s, not a prefix of its changes", seed, s)
		}
		if got := content(c, "/d/old") + content(c, "/d/new"); got != "O<none>" && got != "<none>O" {
			t.Fatalf("seed %d: the renamed file reads %q under its two names", seed, got)
		}
		seen[s] = true
	}
	if len(seen) != len(prefixes) {
		t.Fatalf("200 crashes gave only %v", seen)
	}
}

// Two MkdirAll calls that share a missing parent: the one that finds the
// parent made by the other must not return before the parent is durable,
// or a store acknowledged under it could be lost with it. (Segments create
// the regions of three dimensions at once under one regions directory.)
func TestMkdirAllConcurrentSharedParent(t *testing.T) {
	m := NewMem()
	mustDo(t, m.MkdirAll("/w", 0o755), m.SyncDir("/"))
	// Stalled about to make /w/regions durable.
	release, firstDone := stallMkdirAll(m, "/w/regions/0", "/w")
	secondDone := make(chan error, 1)
	go func() { secondDone <- vfs.MkdirAll(m, "/w/regions/2") }()
	select {
	case err := <-secondDone:
		mustDo(t, err)
		if _, err := m.CrashClone(nil, 0).List("/w/regions/2"); err != nil {
			t.Fatalf("MkdirAll returned while its parent was not durable: after a crash %v", err)
		}
		close(release)
	case <-time.After(100 * time.Millisecond):
		close(release) // waiting for the first call: that is right
		mustDo(t, <-secondDone)
	}
	mustDo(t, <-firstDone)
	for _, d := range []string{"/w/regions/0", "/w/regions/2"} {
		if _, err := m.CrashClone(nil, 0).List(d); err != nil {
			t.Fatalf("%s after both calls returned and a crash: %v", d, err)
		}
	}
}

// A directory BuildDir made survives a crash once BuildDir returns, also
// when its parents did not exist: they are made durable too.
func TestBuildDirMakesParentsDurable(t *testing.T) {
	m := NewMem()
	mustDo(t, m.MkdirAll("/b", 0o755), m.SyncDir("/"))
	err := vfs.BuildDir(m, "/b/new/parents/backup", vfs.BuildSuffix, func(tmp string) error {
		f, err := m.Create(tmp + "/data")
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte("x"), 0); err != nil {
			return err
		}
		return errors.Join(f.Sync(), m.SyncDir(tmp))
	})
	mustDo(t, err)
	if got := content(m.CrashClone(nil, 0), "/b/new/parents/backup/data"); got != "x" {
		t.Fatalf("the built directory after a crash: data %q", got)
	}
}

// MkdirAll calls on paths that share no directory to make do not wait for
// each other.
func TestMkdirAllApartDoNotWait(t *testing.T) {
	m := NewMem()
	mustDo(t, m.MkdirAll("/a", 0o755), m.MkdirAll("/b", 0o755), m.SyncDir("/"))
	release, firstDone := stallMkdirAll(m, "/a/x", "/a")
	secondDone := make(chan error, 1)
	go func() { secondDone <- vfs.MkdirAll(m, "/b/y/z") }()
	select {
	case err := <-secondDone:
		mustDo(t, err)
	case <-time.After(5 * time.Second):
		t.Error("MkdirAll of /b/y/z waited for one of /a/x")
	}
	close(release)
	mustDo(t, <-firstDone)
}

// stallMkdirAll starts MkdirAll(m, dir) and returns once it is about to
// sync the directory at, where it waits until release is closed; done
// receives its result.
func stallMkdirAll(m *MemFS, dir, at string) (release chan struct{}, done chan error) {
	stalled, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var once sync.Once
	fs := Inject(m, func(op Op, name string) error {
		if op == OpSyncDir && name == at {
			once.Do(func() { close(stalled) })
			<-release
		}
		return nil
	})
	go func() { done <- vfs.MkdirAll(fs, dir) }()
	<-stalled
	return release, done
}

// With SetWindows, a MemFS refuses to rename over an open file, as Windows
// does, and allows what Windows allows a file opened with FILE_SHARE_DELETE:
// renaming it, and removing it.
func TestMemWindowsRefusesToReplaceAnOpenFile(t *testing.T) {
	m := NewMem()
	if !m.RenameReplacesOpen() {
		t.Fatal("a MemFS says it cannot replace an open file")
	}
	m.SetWindows(true)
	if m.RenameReplacesOpen() {
		t.Fatal("a Windows MemFS says it can replace an open file")
	}
	m.MkdirAll("/d", 0o755)
	writeSynced(t, m, "/d/old", "old")
	writeSynced(t, m, "/d/new", "new")
	f, err := m.Open("/d/old")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Rename("/d/new", "/d/old"); err == nil {
		t.Fatal("renamed over an open file")
	}
	if err := m.Rename("/d/old", "/d/aside"); err != nil {
		t.Fatalf("rename an open file aside: %v", err)
	}
	if err := m.Rename("/d/new", "/d/old"); err != nil {
		t.Fatalf("rename into the name set free: %v", err)
	}
	if err := m.Remove("/d/aside"); err != nil {
		t.Fatalf("remove an open file: %v", err)
	}
	f.Close()
	writeSynced(t, m, "/d/newer", "newer")
	if err := m.Rename("/d/newer", "/d/old"); err != nil {
		t.Fatalf("rename over a file no longer open: %v", err)
	}
	if c := m.CrashClone(nil, 0); c.RenameReplacesOpen() {
		t.Fatal("the crash clone of a Windows MemFS is not Windows")
	}
}

// RemoveAll of a MemFS removes the tree, file or directory, one mutating
// operation per entry, leaves its siblings, and takes a missing path for
// done; the removal is durable once the parent is synced, as RemoveAll
// the function does.
func TestMemRemoveAll(t *testing.T) {
	m := NewMem()
	mustDo(t, m.MkdirAll("/w/gen/blaze", 0o755))
	writeSynced(t, m, "/w/gen/level.dat", "l")
	writeSynced(t, m, "/w/gen/blaze/chunks.dat", "c")
	writeSynced(t, m, "/w/keep", "k")
	for _, d := range []string{"/", "/w", "/w/gen", "/w/gen/blaze"} {
		mustDo(t, m.SyncDir(d))
	}
	before := m.Ops()
	mustDo(t, vfs.RemoveAll(m, "/w/gen"), vfs.RemoveAll(m, "/w/missing"), m.RemoveAll("/w/keep/not"))
	if got := m.Ops() - before; got != 4+2 { // four entries, two SyncDirs
		t.Errorf("RemoveAll took %d operations, want 6", got)
	}
	for _, m := range []*MemFS{m, m.CrashClone(nil, 0)} {
		if names, err := m.List("/w"); err != nil || !slices.Equal(names, []string{"keep"}) {
			t.Errorf("/w after RemoveAll of /w/gen: %v, %v", names, err)
		}
	}
	if err := m.RemoveAll("/"); err == nil {
		t.Error("RemoveAll of the root succeeded")
	}
}

// MemFS lives in this process: its conflicts say so.
func TestMemLockConflictSaysThisProcess(t *testing.T) {
	m := NewMem()
	l, err := m.Lock("/LOCK", true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := m.Lock("/LOCK", true); !errors.Is(err, vfs.ErrLocked) || !strings.Contains(err.Error(), "by this process") {
		t.Fatalf("%v, want vfs.ErrLocked by this process", err)
	}
}
