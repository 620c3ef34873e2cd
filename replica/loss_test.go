package replica

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

// Issue 39: on total loss of the machine at most the last interval is
// lost. Columns are stored (durable at once) one after another while the
// replica ships every Interval; at a moment the machine is "lost" the
// replica is restored as it is then, and the stores missing from it are
// measured: the oldest missing one is at most about an interval old (the
// upload under way, and the time to make it, added).
func TestLossOnMachineLoss(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "loss")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	db, err := provider.Config{Log: quiet, Durability: blazedb.DurabilitySafe}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const interval = 100 * time.Millisecond
	rep, err := Start(ctx, db.Engine(), dir, st, Config{Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close(ctx)
	col := synthetic(1)
	var stored []time.Time
	start := time.Now()
	for time.Since(start) < 15*interval {
		pos := world.ChunkPos{int32(len(stored)), 0}
		if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, time.Now())
		time.Sleep(5 * time.Millisecond)
	}
	lost := time.Now() // the machine is gone: what the store holds now is all there is
	out := filepath.Join(t.TempDir(), "restored")
	if _, err := Restore(ctx, st, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	got, err := provider.Config{Log: quiet, ReadOnly: true}.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	var window time.Duration
	kept := len(stored)
	for i, at := range stored {
		_, err := got.LoadColumn(world.ChunkPos{int32(i), 0}, world.Overworld)
		if errors.Is(err, leveldb.ErrNotFound) {
			window, kept = lost.Sub(at), i
			t.Logf("lost: the stores of the last %v (%d of %d), shipping every %v", window.Round(time.Millisecond), len(stored)-i, len(stored), interval)
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The upload under way, and a loaded machine; under the time stored
	// for, so that a replica shipped only at the end fails.
	bound := interval + time.Second
	if window > bound || kept == 0 {
		t.Errorf("lost the stores of the last %v, shipping every %v (bound %v)", window, interval, bound)
	}
}
