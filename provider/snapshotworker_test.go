package provider

import (
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// A cold load's snapshot is decoded only once loads have paused for the
// worker's quiet time, and then without another load to prompt it.
func TestSnapshotWaitsForPauseInLoads(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	for i := range 3 {
		col := worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
		if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db = openDB(t, dir, Config{})
	const quiet = 300 * time.Millisecond
	db.quiet.Store(int64(quiet))
	cached := func(x int32) bool {
		k, _ := key(world.ChunkPos{x, 0}, world.Overworld)
		cols, _ := db.columns()
		_, ok := cols.peek(k)
		return ok
	}
	start := time.Now()
	var last time.Time
	for i := range 3 {
		if _, err := db.LoadColumn(world.ChunkPos{int32(i), 0}, world.Overworld); err != nil {
			t.Fatal(err)
		}
		last = time.Now()
		if i < 2 {
			time.Sleep(quiet / 4) // loads keep coming, never quiet long enough
		}
	}
	if elapsed := time.Since(start); elapsed < quiet && (cached(0) || cached(1) || cached(2)) {
		t.Fatal("a snapshot was decoded during a burst of loads")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !(cached(0) && cached(1) && cached(2)) {
		if time.Now().After(deadline) {
			t.Fatal("snapshots were never decoded after the loads stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The worker starts once the last load is quiet old; the test took
	// its time a little after the load noted its own.
	if wait := time.Since(last); wait < quiet-quiet/10 {
		t.Fatalf("snapshots decoded %v after the last load, before the pause", wait)
	}
}

// The queue keeps jobs oldest first and drops those beyond its bound.
func TestFillQueueBounded(t *testing.T) {
	q := newFillQueue(4)
	for i := range 6 {
		q.push(fillJob{k: blazedb.Key{X: int32(i)}})
	}
	select {
	case <-q.wake:
	default:
		t.Fatal("the first push did not wake the worker")
	}
	for i := range 4 {
		job, ok := q.pop()
		if !ok || job.k.X != int32(i) {
			t.Fatalf("pop %d: got %v, %v", i, job.k, ok)
		}
	}
	if _, ok := q.pop(); ok {
		t.Fatal("jobs beyond the bound were kept")
	}
	q.push(fillJob{k: blazedb.Key{X: 9}})
	if job, ok := q.pop(); !ok || job.k.X != 9 {
		t.Fatal("the emptied queue refused a job")
	}
}

// A snapshot decoded from a record that a store has replaced since is
// never cached, even once the store's own snapshot is gone (evicted, or
// never kept for want of budget): the next load would hand out the old
// column. This is the interleaving of the worker (or Prefetch) with a
// store, taken one step at a time.
func TestStaleSnapshotNeverInstalled(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{ExternalMaintenance: true})
	pos, dim := world.ChunkPos{3, -4}, world.Overworld
	k, _ := key(pos, dim)
	col := worldtest.Synthetic(1, dim, world.DefaultBlockRegistry)
	if err := db.StoreColumn(pos, dim, col); err != nil {
		t.Fatal(err)
	}
	cols, _ := db.columns()
	cols.remove(k)

	job := fillJob{k: k, rng: dim.Range(), cols: cols}
	if err := db.readRecord(&job); err != nil { // the old record and its stamp
		t.Fatal(err)
	}
	worldtest.ChangeOneBlock(col, 7)
	if err := db.StoreColumn(pos, dim, col); err != nil {
		t.Fatal(err)
	}
	cols.remove(k) // the store's snapshot evicted
	s := db.decodeSnapshot(job)
	if s == nil {
		t.Fatal("the old record does not decode")
	}
	db.install(job, s)
	if _, ok := cols.peek(k); ok {
		t.Fatal("a snapshot of the replaced record was cached")
	}
	got, err := db.LoadColumn(pos, dim)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(got, col); err != nil {
		t.Fatalf("load after the store: %v", err)
	}

	// The same steps with no store between them install the snapshot.
	cols.remove(k)
	job = fillJob{k: k, rng: dim.Range(), cols: cols}
	if err := db.readRecord(&job); err != nil {
		t.Fatal(err)
	}
	db.install(job, db.decodeSnapshot(job))
	if _, ok := cols.peek(k); !ok {
		t.Fatal("a current snapshot was not cached")
	}
}
