package replica

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 39 item 3: a writer started again carries on from the log it
// shipped before instead of copying it whole, and the restore joins the
// two epochs' objects; a world of the same generation whose log differs
// (a copy that went its own way) is copied whole, and restores as itself.
func TestResumeOnlyTheSameLog(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "resume")
	ctx := t.Context()
	dirA := filepath.Join(t.TempDir(), "a")
	dirB := filepath.Join(t.TempDir(), "b")
	conf := Config{Interval: time.Hour, Owner: "server", Logger: quiet}
	session := func(dir string, want columns, seeds map[world.ChunkPos]uint64) Stats {
		t.Helper()
		db := openWorld(t, dir)
		defer db.Close()
		rep, err := Start(ctx, db.Engine(), dir, st, conf)
		if err != nil {
			t.Fatal(err)
		}
		store(t, db, want, seeds)
		if err := rep.Close(ctx); err != nil {
			t.Fatal(err)
		}
		return rep.Stats()
	}
	restored := func(want columns) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "restored")
		if _, err := Restore(ctx, st, out, time.Time{}); err != nil {
			t.Fatal(err)
		}
		compareWorld(t, out, want)
	}

	wantA := columns{{1, 0}: nil, {2, 0}: nil}
	if s := session(dirA, wantA, map[world.ChunkPos]uint64{{0, 0}: 1}); s.FullCopies != 1 || s.Resumed != 0 {
		t.Fatalf("first session: %+v", s)
	}
	if err := fsutil.CopyTree(dirA, dirB, nil); err != nil {
		t.Fatal(err)
	}
	wantB := clone(wantA)

	// A again: its log begins with the replica's.
	s := session(dirA, wantA, map[world.ChunkPos]uint64{{1, 0}: 2})
	if s.FullCopies != 0 || s.Resumed != 1 || s.Epoch != 2 {
		t.Errorf("A started again: %+v; want its log carried on, not copied", s)
	}
	restored(wantA)
	lenA := s.Shipped

	// A once more, writing nothing: dictionary.dat, unchanged, is not
	// uploaded again (the digest its newest copy carries says so).
	copies := func() int {
		names, err := st.list(ctx, fileDir+"dictionary.dat/")
		if err != nil || len(names) == 0 {
			t.Fatalf("copies of dictionary.dat: %v (%v)", names, err)
		}
		return len(names)
	}
	before := copies()
	if s := session(dirA, wantA, nil); s.FullCopies != 0 || s.Resumed != 1 {
		t.Errorf("A started a third time: %+v", s)
	}
	if n := copies(); n != before {
		t.Errorf("dictionary.dat, unchanged, uploaded again at a restart: %d copies, were %d", n, before)
	}

	// B: the same generation, a log longer than A's, other bytes, when
	// its writer starts.
	db := openWorld(t, dirB)
	store(t, db, wantB, map[world.ChunkPos]uint64{{2, 0}: 3, {3, 0}: 4, {4, 0}: 5})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s = session(dirB, wantB, nil)
	if s.Shipped <= lenA {
		t.Fatalf("B's log (%d bytes) is not longer than A's (%d): the digest is not what refuses it", s.Shipped, lenA)
	}
	if s.FullCopies != 1 || s.Resumed != 0 {
		t.Errorf("B after A: %+v; want its log copied whole", s)
	}
	restored(wantB)
}

// Issue 39 item 3: a writer fenced as another took over (here the same
// owner starting again, which resumed the log) may still land an upload
// it began before: an object of the old epoch from the point the new
// writer carried on, reaching further. The restore follows the new
// writer's objects, not the late one (whose bytes, here garbage, would
// not verify).
func TestResumedLogIgnoresALateUpload(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "late")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	db := openWorld(t, dir)
	defer db.Close()
	conf := Config{Interval: time.Hour, Owner: "server", Logger: quiet}
	want := columns{}
	rep, err := Start(ctx, db.Engine(), dir, st, conf)
	if err != nil {
		t.Fatal(err)
	}
	store(t, db, want, map[world.ChunkPos]uint64{{0, 0}: 1})
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err = Start(ctx, db.Engine(), dir, st, conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Ship(ctx); err != nil {
		t.Fatal(err)
	}
	from := rep.Stats().Shipped
	store(t, db, want, map[world.ChunkPos]uint64{{1, 0}: 2})
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s := rep.Stats()
	if s.Resumed != 1 || s.Shipped <= from {
		t.Fatalf("stats %+v: want the log resumed from %d, then more", s, from)
	}
	late := logObject{epoch: 1, gen: s.Generation, start: from, end: s.Shipped + 100, time: rep.man.Epochs[1].Began.Add(-time.Nanosecond)}
	junk := bytes.Repeat([]byte{0xb1}, int(late.end-late.start))
	if _, err := st.put(ctx, late.name(), bytes.NewReader(junk), int64(len(junk)), condition{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "restored")
	if _, err := Restore(ctx, st, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	compareWorld(t, out, want)
}
