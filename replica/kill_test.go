package replica

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Issue 39: the object store's server killed (SIGKILL) in the middle of
// uploads, whole copies among them, while the world is written and
// compacted, then started again: the writer retries, loses nothing, and
// the replica restores to exactly the world, at the end and at a time
// while the server was down.
func TestServerKilledMidUpload(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "killed")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	db := openWorld(t, dir)
	defer db.Close()
	rep, err := Start(ctx, db.Engine(), dir, st, Config{Interval: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Columns made once: making them is slower than storing them.
	var cols []*chunk.Column
	for i := range 8 {
		cols = append(cols, synthetic(uint64(i)))
	}
	want := columns{}
	var stores atomic.Int64
	var mu sync.Mutex
	var atKill time.Time
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the writer: stores, syncs and compacts throughout
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			pos := world.ChunkPos{int32(i % 12), 0}
			col := cols[i%len(cols)]
			if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			want[pos] = col
			mu.Unlock()
			stores.Add(1)
			// Sync writes the provider's queued store (issue 42) and
			// syncs the log the replica ships.
			if err := db.Sync(); err != nil {
				t.Error(err)
				return
			}
			if i%4 == 3 {
				if err := db.Engine().Compact(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	wait := func(n int64) { // until the writer stored n more
		for target := stores.Load() + n; stores.Load() < target; {
			time.Sleep(time.Millisecond)
		}
	}
	rounds := 3
	if os.Getenv("BLAZE_SOAK") != "" { // make soak
		rounds = 200
	}
	// Until a whole copy made after a compaction has been shipped since
	// the server last started: on a busy machine the rounds could
	// otherwise pass without one, and nothing would be restorable.
	shipped := func() {
		n := rep.Stats().FullCopies
		for deadline := time.Now().Add(10 * time.Second); rep.Stats().FullCopies == n && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	for round := 0; round < rounds; round++ {
		shipped()
		wait(3) // uploads under way
		srv.Stop()
		if round == 1 {
			atKill = time.Now()
		}
		wait(3)
		// Until the replicator has tried to ship to the stopped server.
		for deadline := time.Now().Add(10 * time.Second); rep.Stats().Failures == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		srv.Restart()
	}
	wait(3)
	close(stop)
	<-done
	if err := rep.Close(ctx); err != nil {
		t.Logf("failures while the server was down, as expected: %v", err)
	}
	if s := rep.Stats(); s.Failures == 0 || s.FullCopies < 2 {
		t.Errorf("stats %+v: want failures while the server was down, and whole copies after compactions", s)
	}
	out := filepath.Join(t.TempDir(), "end")
	if _, err := Restore(ctx, st, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	compareWorld(t, out, want)
	// A restore at a time the server was down is of what was shipped
	// before: whole, verified, and no later.
	out = filepath.Join(t.TempDir(), "down")
	r, err := Restore(ctx, st, out, atKill)
	if err != nil {
		t.Fatal(err)
	}
	if r.AsOf.After(atKill) {
		t.Errorf("restore at %v is as of %v", atKill, r.AsOf)
	}
}
