package replica

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 39 item 2: shipping never blocks a store. With the object store
// hung (its process stopped, an upload under way waiting for an answer),
// stores return as fast as ever; once it answers again, everything is
// shipped. A shipment that waits longer than Config.Timeout fails, to be
// retried.
func TestHungStoreBlocksNoStore(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "hung")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	db := openWorld(t, dir)
	defer db.Close()
	rep, err := Start(ctx, db.Engine(), dir, st, Config{Interval: 5 * time.Millisecond, Timeout: 300 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	want := columns{}
	store(t, db, want, map[world.ChunkPos]uint64{{0, 0}: 1})
	srv.Pause()
	time.Sleep(50 * time.Millisecond) // a shipment is now waiting for the store
	for i := range 4 {
		start := time.Now()
		store(t, db, want, map[world.ChunkPos]uint64{{int32(i), 1}: uint64(i)})
		if err := db.Engine().SyncLog(); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 2*time.Second {
			srv.Resume()
			t.Fatalf("a store took %v while the object store hung", took)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); rep.Stats().Failures == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			srv.Resume()
			t.Fatal("a shipment hung past its timeout did not fail")
		}
	}
	srv.Resume()
	if err := rep.Close(ctx); err != nil {
		t.Logf("the shipments that timed out: %v", err)
	}
	out := filepath.Join(t.TempDir(), "restored")
	if _, err := Restore(ctx, st, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	compareWorld(t, out, want)
}
