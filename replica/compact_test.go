package replica

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 39 item 2: a compaction while a shipment reads the log (its
// generation replaced under it) is no failure: the shipment copies the
// new log whole at once, and the replica restores to the world.
func TestCompactionDuringShipment(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "compacting")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	db := openWorld(t, dir)
	defer db.Close()
	want := columns{}
	seeds := map[world.ChunkPos]uint64{}
	for i := range 12 {
		seeds[world.ChunkPos{int32(i), 0}] = uint64(i)
	}
	store(t, db, want, seeds)
	rep, err := Start(ctx, db.Engine(), dir, st, Config{Interval: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for range 12 {
		done := make(chan error)
		go func() { done <- db.Engine().Compact() }()
		if err := rep.Ship(ctx); err != nil {
			t.Fatalf("a shipment during a compaction: %v", err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := rep.Stats(); s.Failures != 0 {
		t.Errorf("stats: %+v", s)
	}
	out := filepath.Join(t.TempDir(), "restored")
	if _, err := Restore(ctx, st, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	compareWorld(t, out, want)
}
