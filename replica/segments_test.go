package replica

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

// Issue 39 (segmented worlds): a segmented world shipped region by region
// as it is written, with regions closed while idle, one deleted and made
// again, restored at three points in time; each restore opens as a
// segmented world and is compared column by column with what was stored
// by then, the layout record with it (a region size of 2 chunks: the
// restore opens with the world's own size, or every column would be
// looked for in the wrong region).
func TestShipAndRestoreSegmented(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "seg/world")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	// MaxOpen 1: storing into one region closes the last one, whose last
	// bytes may not have been shipped.
	conf := segment.Config{SegmentSize: 2, MaxOpen: 1, Log: quiet}
	w, err := conf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := StartSegmented(ctx, w, dir, st, Config{Interval: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	storeIn, ship := segmentedWriter(t, w, rep)

	// Four regions: (0,0), (1,0), (-1,-1), (0,3).
	want := columns{{0, 0}: nil, {1, 1}: nil, {2, 0}: nil, {-1, -1}: nil, {0, 6}: nil}
	storeIn(want, map[world.ChunkPos]uint64{{0, 0}: 1, {1, 1}: 2, {2, 0}: 3, {-1, -1}: 4})
	t1, first := ship(), clone(want)

	// Region (1,0) deleted, (0,0) changed, (0,3) new.
	if err := w.DeleteSegmentFor(world.ChunkPos{2, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	want[world.ChunkPos{2, 0}] = nil
	storeIn(want, map[world.ChunkPos]uint64{{0, 0}: 10, {0, 6}: 5})
	t2, second := ship(), clone(want)

	// Region (1,0) made again, with another column; (-1,-1) changed,
	// then closed as (0,0) is stored to.
	storeIn(want, map[world.ChunkPos]uint64{{2, 0}: 6, {-1, -1}: 11})
	storeIn(want, map[world.ChunkPos]uint64{{1, 1}: 12})
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := rep.Stats(); s.Failures != 0 || s.Fenced {
		t.Errorf("stats: %+v", s)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name    string
		at      time.Time
		want    columns
		regions int
	}{{"first", t1, first, 3}, {"second", t2, second, 3}, {"latest", time.Time{}, want, 4}} {
		out := filepath.Join(t.TempDir(), c.name)
		r, err := Restore(ctx, st, out, c.at)
		if err != nil {
			t.Fatalf("restore %s: %v", c.name, err)
		}
		if r.Regions != c.regions {
			t.Errorf("restore %s: %d regions; want %d", c.name, r.Regions, c.regions)
		}
		compareSegmented(t, out, c.want)
	}

	// Issue 39 item 3: the points in time, regions' shipments included:
	// the first a whole copy, none before it restorable.
	points, err := Points(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) < 3 || points[0].Whole == 0 || points[0].Time.After(t1) || !points[len(points)-1].Time.After(t2) {
		t.Errorf("points %+v; want a whole copy first, by %v, and some after %v", points, t1, t2)
	}
	for i := 1; i < len(points); i++ {
		if !points[i].Time.After(points[i-1].Time) {
			t.Errorf("points out of order: %v after %v", points[i].Time, points[i-1].Time)
		}
	}
	if _, err := Restore(ctx, st, filepath.Join(t.TempDir(), "early"), points[0].Time.Add(-time.Nanosecond)); !errors.Is(err, ErrNoReplica) {
		t.Errorf("restore before the first point: %v; want ErrNoReplica", err)
	}

	// Started again (a new epoch): every region on disk is offered,
	// opened one after another (MaxOpen 1 closes each as the next opens),
	// and carries on from its log in the replica (item 3: resumed, not
	// copied whole); a region the shipper opened and closed is not
	// offered again, so later shipments of an idle world upload nothing.
	if w, err = conf.Open(dir); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if rep, err = StartSegmented(ctx, w, dir, st, Config{Interval: time.Hour, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	defer rep.Close(ctx)
	storeIn, ship = segmentedWriter(t, w, rep)
	ship()
	if s := rep.Stats(); s.FullCopies != 0 || s.Resumed != 5 || s.Epoch != 2 {
		t.Errorf("after a restart: %+v; want the root's and 4 regions' logs resumed in epoch 2", s)
	}
	before := rep.Stats().Uploads
	ship()
	ship()
	if s := rep.Stats(); s.Uploads != before {
		t.Errorf("an idle world uploaded %d objects", s.Uploads-before)
	}
	// A restore joins the two epochs' objects of a region's log.
	storeIn(want, map[world.ChunkPos]uint64{{1, 0}: 13})
	ship()
	out := filepath.Join(t.TempDir(), "resumed")
	if _, err := Restore(ctx, st, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	compareSegmented(t, out, want)
}

// compareSegmented opens the segmented world in dir with its own region
// size and compares it column by column with want.
func compareSegmented(t *testing.T, dir string, want columns) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "regions")); err != nil {
		t.Fatalf("%s is not segmented: %v", dir, err)
	}
	w, err := segment.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for pos, c := range want {
		got, err := w.LoadColumn(pos, world.Overworld)
		if c == nil {
			if !errors.Is(err, leveldb.ErrNotFound) {
				t.Errorf("%s: column %v should be absent: %v", dir, pos, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: column %v: %v", dir, pos, err)
			continue
		}
		if err := colcmp.Compare(got, c); err != nil {
			t.Errorf("%s: column %v: %v", dir, pos, err)
		}
	}
}

// segmentedWriter returns storeIn, which stores a synthetic column of each
// seed at its place in w and notes it in want, and ship, which ships rep
// and returns a time after the shipment and before anything later.
func segmentedWriter(t *testing.T, w *segment.Provider, rep *Replicator) (storeIn func(want columns, seeds map[world.ChunkPos]uint64), ship func() time.Time) {
	storeIn = func(want columns, seeds map[world.ChunkPos]uint64) {
		t.Helper()
		for pos, seed := range seeds {
			if err := w.StoreColumn(pos, world.Overworld, synthetic(seed)); err != nil {
				t.Fatal(err)
			}
			want[pos] = synthetic(seed)
		}
	}
	ship = func() time.Time {
		t.Helper()
		if err := rep.Ship(t.Context()); err != nil {
			t.Fatal(err)
		}
		at := time.Now()
		time.Sleep(2 * time.Millisecond)
		return at
	}
	return storeIn, ship
}
