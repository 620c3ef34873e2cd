package provider

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
)

// storeNow stores col and waits until the store is written: for the tests
// that look at what a write leaves behind (the cache's snapshot, the
// engine's records, the edition), which a queued store (issue 42) leaves
// only once the store worker has written it.
func storeNow(db *DB, pos world.ChunkPos, dim world.Dimension, col *chunk.Column) error {
	if err := db.StoreColumn(pos, dim, col); err != nil {
		return err
	}
	return db.flushStores()
}

func queueJob(x int32, cost int64) *storeJob {
	return &storeJob{s: &snapshot{key: blazedb.Key{X: x}}, cost: cost, at: time.Now()}
}

// returnsWithin reports whether f returns within d.
func returnsWithin(d time.Duration, f func()) (chan struct{}, bool) {
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
		return done, true
	case <-time.After(d):
		return done, false
	}
}

// Issue 42: a store of a column still queued replaces the queued one in
// its place, costing its own bytes only; once the worker has taken it, a
// store queues anew.
func TestStoreQueueReplaces(t *testing.T) {
	q := newStoreQueue(1<<20, time.Hour)
	a1, b1, a2 := queueJob(1, 100), queueJob(2, 10), queueJob(1, 300)
	for _, j := range []*storeJob{a1, b1, a2} {
		if err := q.push(j); err != nil {
			t.Fatal(err)
		}
	}
	if len(q.jobs) != 2 || q.jobs[0] != a1 || a1.s != a2.s || q.bytes != 310 || q.unwritten != 2 {
		t.Fatalf("after a replacement: %d jobs, %d bytes, %d unwritten", len(q.jobs), q.bytes, q.unwritten)
	}
	if q.find(blazedb.Key{X: 1}) != a2.s {
		t.Fatal("find does not give the newest store")
	}
	batch := q.take()
	a3 := queueJob(1, 50)
	if err := q.push(a3); err != nil {
		t.Fatal(err)
	}
	if len(q.jobs) != 1 || q.unwritten != 3 || q.find(blazedb.Key{X: 1}) != a3.s {
		t.Fatal("a store of a column being written did not queue anew")
	}
	q.done(batch, nil)
	if q.find(blazedb.Key{X: 1}) != a3.s || q.find(blazedb.Key{X: 2}) != nil || q.bytes != 50 {
		t.Fatalf("after the batch: %d bytes", q.bytes)
	}
}

// Issue 42: the queue holds at most its bound in bytes, and falls at most
// its bound in time behind: a store beyond either waits for the worker
// (backpressure), and one into an empty queue never waits.
func TestStoreQueueBackpressure(t *testing.T) {
	q := newStoreQueue(1000, time.Hour)
	if err := q.push(queueJob(1, 2000)); err != nil { // alone: admitted
		t.Fatal(err)
	}
	batch := q.take()
	done, ok := returnsWithin(50*time.Millisecond, func() { q.push(queueJob(2, 10)) })
	if ok {
		t.Fatal("a store beyond the byte bound did not wait")
	}
	q.done(batch, nil)
	<-done

	q = newStoreQueue(1<<20, 20*time.Millisecond)
	q.push(queueJob(1, 10))
	if _, ok := returnsWithin(time.Second, func() { q.push(queueJob(2, 10)) }); !ok {
		t.Fatal("a store within both bounds waited")
	}
	time.Sleep(30 * time.Millisecond)
	done, ok = returnsWithin(50*time.Millisecond, func() { q.push(queueJob(3, 10)) })
	if ok {
		t.Fatal("a store behind a queue older than its bound did not wait")
	}
	q.done(q.take(), nil)
	<-done

	// Closing releases a waiting store with ErrClosed.
	q = newStoreQueue(10, time.Hour)
	q.push(queueJob(1, 10))
	var err error
	done, _ = returnsWithin(10*time.Millisecond, func() { err = q.push(queueJob(2, 10)) })
	q.close()
	<-done
	if !errors.Is(err, blazedb.ErrClosed) {
		t.Fatalf("a store waiting on a closed queue: %v", err)
	}
}

// Issue 42: a failed write is returned once, by the next call that can
// report it; a poisoned engine's refuses every later store.
func TestStoreQueueErrors(t *testing.T) {
	q := newStoreQueue(1<<20, time.Hour)
	boom := errors.New("boom")
	q.push(queueJob(1, 10))
	q.done(q.take(), boom)
	if err := q.drain(); !errors.Is(err, boom) {
		t.Fatalf("drain after a failure: %v", err)
	}
	if err := q.drain(); err != nil {
		t.Fatalf("a failure reported twice: %v", err)
	}
	if err := q.push(queueJob(2, 10)); err != nil {
		t.Fatalf("a store after an ordinary failure: %v", err)
	}
	q.done(q.take(), fmt.Errorf("write: %w", blazedb.ErrPoisoned))
	if err := q.push(queueJob(3, 10)); !errors.Is(err, blazedb.ErrPoisoned) {
		t.Fatalf("a store after the engine was poisoned: %v", err)
	}
}

// Issue 42: with the bounds a DB opens with, the ones the README gives for
// a process crash, a store waits once the oldest store not yet written was
// acknowledged more than a second ago, until the worker writes it.
// (TestKilledServer cannot reach this bound: its worker keeps up.)
func TestStoreWaitsPastTheAgeBound(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	if db.store.maxAge != time.Second || db.store.limit != 64<<20 {
		t.Fatalf("the queue's bounds are %v and %d bytes; the README says a second and 64 MiB", db.store.maxAge, db.store.limit)
	}
	gate := make(chan struct{})
	db.store.gate = gate
	var open sync.Once
	openGate := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(openGate) // before the DB's Close, which drains the queue
	store := func(x int32) func() {
		col := worldtest.Synthetic(uint64(x), world.Overworld, world.DefaultBlockRegistry)
		return func() {
			if err := db.StoreColumn(world.ChunkPos{x, 0}, world.Overworld, col); err != nil {
				t.Error(err)
			}
		}
	}
	first := time.Now()
	store(0)()
	if _, ok := returnsWithin(500*time.Millisecond, store(1)); !ok {
		t.Fatal("a store waited with the oldest unwritten one younger than a second")
	}
	time.Sleep(time.Second - time.Since(first) + 50*time.Millisecond)
	done, ok := returnsWithin(300*time.Millisecond, store(2))
	if ok {
		t.Fatal("a store returned with the oldest unwritten one older than a second")
	}
	openGate()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the store still waits after the worker wrote the queue")
	}
}

// Issue 42: a store not yet written is what a load returns (read your
// writes), a copy the caller owns, whatever the World does to the column it
// stored; Has counts it; Sync writes it; a second store of it replaces it,
// and the column is encoded once.
func TestQueuedStoreReadYourWrites(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	gate := make(chan struct{})
	db.store.gate = gate
	var encoded atomic.Int64
	db.store.encoding = func() { encoded.Add(1) }
	pos := world.ChunkPos{4, 5}
	col := worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry)
	want := worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry)
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	col.Chunk.SetBlock(0, 0, 0, 0, obsidian)
	col.BlockEntities[0].Data["CustomName"] = "changed after store"
	k, _ := key(pos, world.Overworld)
	if ok, _ := db.eng.Has(k); ok {
		t.Fatal("the gated worker wrote the store")
	}
	if ok, err := db.Has(pos, world.Overworld); !ok || err != nil {
		t.Fatalf("Has of a queued store: %v, %v", ok, err)
	}
	got, err := db.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatalf("load of a queued store: %v", err)
	}
	if err := worldtest.Compare(want, got); err != nil {
		t.Fatalf("load of a queued store: %v", err)
	}
	got.Chunk.SetBlock(1, 1, 1, 0, obsidian) // the caller's own
	if again, _ := db.LoadColumn(pos, world.Overworld); worldtest.Compare(want, again) != nil {
		t.Fatal("mutating a loaded queued column changed the next load")
	}
	// A second store of it replaces the queued one.
	want.Chunk.SetBlock(0, 0, 0, 0, obsidian)
	want.BlockEntities[0].Data["CustomName"] = "changed after store"
	if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	if n := len(db.store.jobs); n != 1 {
		t.Fatalf("%d jobs queued for one column", n)
	}
	close(gate)
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.eng.Has(k); !ok {
		t.Fatal("Sync did not write the queued store")
	}
	if n := encoded.Load(); n != 1 {
		t.Fatalf("a column stored twice while queued was encoded %d times", n)
	}
	if got, _ := db.LoadColumn(pos, world.Overworld); worldtest.Compare(want, got) != nil {
		t.Fatal("the written column is not the last store")
	}
}

// Issue 42: Close writes every queued store before it closes the engine.
func TestCloseDrainsQueue(t *testing.T) {
	dir := t.TempDir()
	db, err := Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cols := make([]*chunk.Column, 64)
	for i := range cols {
		cols[i] = worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
		if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, cols[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDB(t, dir, Config{})
	for i, want := range cols {
		got, err := db.LoadColumn(world.ChunkPos{int32(i), 0}, world.Overworld)
		if err != nil {
			t.Fatalf("column %d after Close: %v", i, err)
		}
		if err := worldtest.Compare(want, got); err != nil {
			t.Fatalf("column %d after Close: %v", i, err)
		}
	}
}

// failingWrites opens a world in memory whose writes of chunks.dat fail
// while fail is set.
func failingWrites(t *testing.T) (fail *atomic.Bool, fs vfs.FS, db *DB) {
	fail = new(atomic.Bool)
	fs = vfstest.Inject(vfstest.NewMem(), func(op vfstest.Op, name string) error {
		if op == vfstest.OpWrite && fail.Load() && filepath.Base(name) == "chunks.dat" {
			return errors.New("injected write failure")
		}
		return nil
	})
	db, err := Config{FS: fs, Log: quiet}.Open("/w")
	if err != nil {
		t.Fatal(err)
	}
	return fail, fs, db
}

// Issue 42: a queued store the engine fails to write is returned by the
// next call that can report it (here Sync), once; Close reports one that
// failed while it drained.
func TestQueuedStoreFailureSurfaces(t *testing.T) {
	fail, _, db := failingWrites(t)
	col := worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)
	if err := storeNow(db, world.ChunkPos{0, 0}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	other := worldtest.Synthetic(2, world.Overworld, world.DefaultBlockRegistry)
	if err := db.StoreColumn(world.ChunkPos{1, 0}, world.Overworld, other); err != nil {
		t.Fatalf("the store itself: %v", err)
	}
	if err := db.Sync(); err == nil || !strings.Contains(err.Error(), "injected write failure") {
		t.Fatalf("Sync after a failed queued write: %v", err)
	}
	fail.Store(false)
	if err := db.Sync(); err != nil {
		t.Fatalf("the failure reported twice: %v", err)
	}
	if _, err := db.LoadColumn(world.ChunkPos{1, 0}, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("load of the column whose write failed: %v", err)
	}
	fail.Store(true)
	if err := db.StoreColumn(world.ChunkPos{2, 0}, world.Overworld, other); err != nil {
		t.Fatalf("the store itself: %v", err)
	}
	// The engine's own Close fails on the same fault: the error must also
	// name the queued store.
	if err := db.Close(); err == nil || !strings.Contains(err.Error(), "a queued store failed") {
		t.Fatalf("Close drained a failing write without reporting it: %v", err)
	}
}

// Issues 40 and 42: a checkpoint arms only once the store queue has
// written every store acknowledged before it, and a store made while it
// is gathered goes into its batch, not into the queue: no queued store
// reaches the engine beside the checkpoint's batch or after it.
func TestCheckpointDrainsStoreQueue(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	gate := make(chan struct{})
	db.store.gate = gate
	var open sync.Once
	openGate := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(openGate) // before the DB's Close, which drains the queue
	pos := world.ChunkPos{7, -2}
	k, _ := key(pos, world.Overworld)
	col := worldtest.Synthetic(5, world.Overworld, world.DefaultBlockRegistry)
	if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	var p *pendingCheckpoint
	armed, ok := returnsWithin(100*time.Millisecond, func() { p = db.beginCheckpoint() })
	if ok {
		t.Fatal("the checkpoint armed with a store still queued")
	}
	openGate()
	<-armed
	if db.store.find(k) != nil {
		t.Fatal("a store is queued while the checkpoint is gathered")
	}
	if ok, _ := db.eng.Has(k); !ok {
		t.Fatal("the store acknowledged before the checkpoint is not written when it arms")
	}
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	col.Chunk.SetBlock(0, 0, 0, 0, obsidian)
	want := worldtest.Synthetic(5, world.Overworld, world.DefaultBlockRegistry)
	want.Chunk.SetBlock(0, 0, 0, 0, obsidian)
	if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	if db.store.find(k) != nil || len(p.keys) != 1 || p.keys[0] != k {
		t.Fatalf("a store during the checkpoint was queued, not gathered (%d keys gathered)", len(p.keys))
	}
	if err := db.commitCheckpoint(p); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDB(t, dir, Config{})
	got, err := db.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(want, got); err != nil {
		t.Fatalf("after the checkpoint and a reopen: %v", err)
	}
}

// unwritten is how many acknowledged stores the worker has not written.
func unwritten(db *DB) int {
	db.store.mu.Lock()
	defer db.store.mu.Unlock()
	return db.store.unwritten
}

// Issue 42: the store worker waits for a burst of stores (a Save) to end
// before it takes them, instead of being woken, and encoding beside the
// tick, for each; whoever waits for the queue (Sync, Close) cuts the wait
// short, and so do a quiet spell and the queue's byte bound.
func TestStoreWorkerWaitsForBurst(t *testing.T) {
	br := world.DefaultBlockRegistry
	store := func(db *DB, i int) {
		t.Helper()
		if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, worldtest.Synthetic(uint64(i), world.Overworld, br)); err != nil {
			t.Fatal(err)
		}
	}
	// No quiet spell ever long enough: the burst waits for Sync.
	db := openDB(t, t.TempDir(), Config{})
	db.store.quiet, db.store.maxAge = time.Hour, time.Hour // however slow the machine
	var encoded atomic.Int32
	db.store.encoding = func() { encoded.Add(1) }
	for i := range 4 {
		store(db, i)
		time.Sleep(2 * time.Millisecond)
	}
	if n := encoded.Load(); n != 0 {
		t.Fatalf("the worker encoded %d columns while the stores kept coming", n)
	}
	if _, ok := returnsWithin(5*time.Second, func() { db.Sync() }); !ok {
		t.Fatal("Sync waited for the burst's end")
	}
	if n := encoded.Load(); n != 4 || unwritten(db) != 0 {
		t.Fatalf("after Sync: %d encoded, %d unwritten", n, unwritten(db))
	}
	store(db, 20)
	if _, ok := returnsWithin(5*time.Second, func() { db.Close() }); !ok {
		t.Fatal("Close waited for the burst's end")
	}

	// A quiet spell ends the wait without anyone asking.
	db = openDB(t, t.TempDir(), Config{})
	db.store.quiet = 10 * time.Millisecond
	store(db, 1)
	deadline := time.Now().Add(5 * time.Second)
	for unwritten(db) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if unwritten(db) > 0 {
		t.Fatal("a store was not written after a quiet spell")
	}

	// A quarter of the byte bound ends it too.
	db = openDB(t, t.TempDir(), Config{})
	db.store.quiet, db.store.maxAge = time.Hour, time.Hour
	db.store.limit = 1
	store(db, 1)
	deadline = time.Now().Add(5 * time.Second)
	for unwritten(db) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if unwritten(db) > 0 {
		t.Fatal("a queue past a quarter of its bytes waited for a quiet spell")
	}
}

// Sync and Close wait for the stores acknowledged before them, not for the
// queue to empty: under stores that never pause (a map generated in the
// nether while the overworld syncs) the queue never empties, and Sync
// waited until the writer happened to catch up, or for ever.
func TestSyncUnderSteadyStores(t *testing.T) {
	br := world.DefaultBlockRegistry
	db := openDB(t, t.TempDir(), Config{})
	cols := make([]*chunk.Column, 8)
	for i := range cols {
		cols[i] = worldtest.Synthetic(uint64(i), world.Nether, br)
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	var stores atomic.Int64
	go func() {
		defer close(stopped)
		// 509 places, 8 columns: each store changes its place's column.
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := db.StoreColumn(world.ChunkPos{int32(i % 509), 0}, world.Nether, cols[i%8]); err != nil {
				if !errors.Is(err, blazedb.ErrClosed) {
					t.Error(err)
				}
				return
			}
			stores.Add(1)
		}
	}()
	for stores.Load() < 100 {
		time.Sleep(time.Millisecond)
	}
	before := stores.Load()
	for range 3 {
		if _, ok := returnsWithin(10*time.Second, func() { db.Sync() }); !ok {
			t.Fatal("Sync waited for the stores to pause")
		}
	}
	if stores.Load() == before {
		t.Fatal("the stores paused while Sync waited: nothing tested")
	}
	if _, ok := returnsWithin(10*time.Second, func() { db.Close() }); !ok {
		t.Fatal("Close waited for the stores to pause")
	}
	close(stop)
	<-stopped
}

// Issue 42 item 4: the worker takes the oldest jobs, a batch's bytes at
// least, so that a bulk store's encoders work while the next batch
// queues; a batch never holds a store acknowledged after the first store
// of a job it leaves, so that what a crash keeps is still every store
// acknowledged before some moment.
func TestStoreQueueTakesBatches(t *testing.T) {
	q := newStoreQueue(1<<20, time.Hour)
	q.batch = 10
	keys := func(batch []*storeJob) (out []int32) {
		for _, j := range batch {
			out = append(out, j.s.key.X)
		}
		return out
	}
	for x := range int32(3) {
		q.push(queueJob(x, 10))
	}
	if got := keys(q.take()); fmt.Sprint(got) != "[0]" {
		t.Fatalf("first batch %v, want [0]", got)
	}
	// 1 is replaced after 2's first store: a batch cut before 2 would hold
	// a store acknowledged after 2's, so 2 goes with it.
	q.push(queueJob(1, 10))
	if got := keys(q.take()); fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("batch after a replacement %v, want [1 2]", got)
	}
	if got := keys(q.take()); len(got) != 0 {
		t.Fatalf("empty queue gave %v", got)
	}
}

// Issue 42: the StoreColumn that reports an earlier queued store's failure
// stores its own column all the same: Dragonfly only logs the error, and
// a column it is unloading would otherwise be lost.
func TestStoreAfterFailureStillStores(t *testing.T) {
	fail, fs, db := failingWrites(t)
	var err error
	defer func() { db.Close() }()
	br := world.DefaultBlockRegistry
	fail.Store(true)
	if err := db.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, worldtest.Synthetic(1, world.Overworld, br)); err != nil {
		t.Fatalf("the store itself: %v", err)
	}
	db.store.wait() // the write failed; its error waits for a call to report it
	fail.Store(false)
	want := worldtest.Synthetic(2, world.Overworld, br)
	err = db.StoreColumn(world.ChunkPos{1, 0}, world.Overworld, want)
	if err == nil || !strings.Contains(err.Error(), "injected write failure") {
		t.Fatalf("the next store did not report the failure: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Config{FS: fs, Log: quiet}.Open("/w")
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.LoadColumn(world.ChunkPos{1, 0}, world.Overworld)
	if err != nil {
		t.Fatalf("the column of the store that reported the failure, after reopening: %v", err)
	}
	if err := worldtest.Compare(want, got); err != nil {
		t.Fatal(err)
	}
}
