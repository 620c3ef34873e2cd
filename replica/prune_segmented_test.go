package replica

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 39 (segmented worlds): after a prune, a restore before its horizon
// fails (ErrNoReplica) instead of leaving out a region whose older copies
// the prune deleted, and Points lists no time before it; a region deleted
// by the horizon and not made again has its objects pruned.
func TestPruneSegmented(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "seg/pruned")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	w, err := segment.Config{SegmentSize: 2, Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := StartSegmented(ctx, w, dir, st, Config{Interval: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	want := columns{}
	storeIn, ship := segmentedWriter(t, w, rep)
	// Regions (0,0), (1,0) and (3,0).
	storeIn(want, map[world.ChunkPos]uint64{{0, 0}: 1, {2, 0}: 2, {6, 0}: 3})
	t1 := ship()
	// (1,0) compacted: its next shipment is a whole copy of a new
	// generation, and a prune after it deletes the one a restore at t1
	// reads. (3,0) deleted.
	storeIn(want, map[world.ChunkPos]uint64{{2, 0}: 4})
	if err := w.CompactSegment(world.ChunkPos{2, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if err := w.DeleteSegmentFor(world.ChunkPos{6, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	delete(want, world.ChunkPos{6, 0})
	ship()
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := Restore(ctx, st, filepath.Join(t.TempDir(), "before"), t1); err != nil || r.Regions != 3 {
		t.Fatalf("restore at t1 before the prune: %+v, %v", r, err)
	}

	horizon := time.Now()
	if n, err := Prune(ctx, st, horizon); err != nil || n == 0 {
		t.Fatalf("prune: %d deleted, %v", n, err)
	}
	if _, err := Restore(ctx, st, filepath.Join(t.TempDir(), "after"), t1); !errors.Is(err, ErrNoReplica) {
		t.Fatalf("restore at t1 after a prune to a later time: %v; want ErrNoReplica", err)
	}
	points, err := Points(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range points {
		if p.Time.Before(horizon) {
			t.Errorf("point %v listed before the horizon %v", p.Time, horizon)
		}
	}
	gone := st.sub("regions/0/r.3.0")
	if logs, err := gone.list(ctx, logDir); err != nil || len(logs) != 0 {
		t.Errorf("the deleted region's log objects after the prune: %v, %v", logs, err)
	}
	out := filepath.Join(t.TempDir(), "latest")
	r, err := Restore(ctx, st, out, time.Time{})
	if err != nil || r.Regions != 2 {
		t.Fatalf("latest restore after the prune: %+v, %v", r, err)
	}
	compareSegmented(t, out, want)

	// A later prune of region (1,0), compacted again, replaces its mark:
	// one a prefix, however many prunes retention makes.
	region := st.sub("regions/0/r.1.0")
	marks := func() []string {
		t.Helper()
		names, err := region.list(ctx, prunedDir)
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if m := marks(); len(m) != 1 {
		t.Fatalf("region (1,0)'s prune marks: %v, want one", m)
	}
	if w, err = (segment.Config{Log: quiet}).Open(dir); err != nil {
		t.Fatal(err)
	}
	if rep, err = StartSegmented(ctx, w, dir, st, Config{Interval: time.Hour, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	storeIn, ship = segmentedWriter(t, w, rep)
	storeIn(want, map[world.ChunkPos]uint64{{2, 0}: 5})
	if err := w.CompactSegment(world.ChunkPos{2, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	ship()
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	later := time.Now()
	if n, err := Prune(ctx, st, later); err != nil || n == 0 {
		t.Fatalf("second prune: %d deleted, %v", n, err)
	}
	if m := marks(); len(m) != 1 || m[0] != prunedObject(later) {
		t.Fatalf("region (1,0)'s prune marks after a second prune: %v, want %s alone", m, prunedObject(later))
	}
}
