package replica

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 39: retention. Prune deletes the generations before the one a
// restore at the horizon starts from, and the world files' older copies;
// restores at the horizon and later still give what was stored then, one
// before it finds nothing. Config.Retention prunes after each whole copy.
func TestPrune(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "pruned")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	db := openWorld(t, dir)
	defer db.Close()
	rep, err := Start(ctx, db.Engine(), dir, st, Config{Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := columns{}
	var times []time.Time
	var states []columns
	for i := range 3 {
		if i > 0 {
			if err := db.Engine().Compact(); err != nil {
				t.Fatal(err)
			}
		}
		store(t, db, want, map[world.ChunkPos]uint64{{int32(i), 0}: uint64(i)})
		settings := db.Settings()
		settings.Name = fmt.Sprint("world ", i)
		db.SaveSettings(settings) // level.dat written again
		if err := rep.Ship(ctx); err != nil {
			t.Fatal(err)
		}
		times, states = append(times, time.Now()), append(states, clone(want))
		time.Sleep(5 * time.Millisecond)
	}
	gens := func() map[string]bool {
		names, err := st.list(ctx, logDir)
		if err != nil {
			t.Fatal(err)
		}
		g := map[string]bool{}
		for _, n := range names {
			o, _ := parseLogObject(n)
			g[hex16(o.gen)] = true
		}
		return g
	}
	if g := gens(); len(g) != 3 {
		t.Fatalf("generations shipped: %v, want 3", g)
	}
	if n, err := Prune(ctx, st, times[0].Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("prune before the first copy: %d deleted, %v", n, err)
	}
	n, err := Prune(ctx, st, times[1])
	if err != nil || n == 0 {
		t.Fatalf("prune at the second shipment: %d deleted, %v", n, err)
	}
	if g := gens(); len(g) != 2 {
		t.Errorf("generations left: %v, want the last 2", g)
	}
	for i, at := range times[1:] {
		out := filepath.Join(t.TempDir(), "at")
		if _, err := Restore(ctx, st, out, at); err != nil {
			t.Fatalf("restore at shipment %d after the prune: %v", i+1, err)
		}
		compareWorld(t, out, states[i+1])
	}
	if _, err := Restore(ctx, st, filepath.Join(t.TempDir(), "gone"), times[0]); !errors.Is(err, ErrNoReplica) {
		t.Errorf("restore before the horizon: %v; want ErrNoReplica", err)
	}
	files, err := st.list(ctx, fileDir)
	if err != nil {
		t.Fatal(err)
	}
	if levels := strings.Count(strings.Join(files, " "), "level.dat/"); levels != 2 {
		t.Errorf("level.dat copies left: %d, want 2 (the one at the horizon, the newer): %v", levels, files)
	}
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// Config.Retention: a writer keeping nothing older than now keeps,
	// after each whole copy, that one and the generation a restore just
	// before it reads.
	rep, err = Start(ctx, db.Engine(), dir, st, Config{Interval: time.Hour, Retention: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := db.Engine().Compact(); err != nil {
			t.Fatal(err)
		}
		if err := rep.Ship(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if g := gens(); len(g) != 2 || rep.Stats().Pruned == 0 {
		t.Errorf("with retention, generations left: %v, pruned %d", g, rep.Stats().Pruned)
	}
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "last")
	if _, err := Restore(ctx, st, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	compareWorld(t, out, want)

	// A horizon past the end of time prunes to now; none is refused. The
	// replica restores and lists its points as before.
	if _, err := Prune(ctx, st, time.Time{}); err == nil {
		t.Error("a prune with no horizon was taken")
	}
	if _, err := Prune(ctx, st, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ctx, st, filepath.Join(t.TempDir(), "after-far"), time.Time{}); err != nil {
		t.Fatalf("restore after a prune to the year 9999: %v", err)
	}
	if _, err := Points(ctx, st); err != nil {
		t.Fatalf("points after a prune to the year 9999: %v", err)
	}
}
