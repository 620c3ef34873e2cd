package provider

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/blazeworld/blaze/provider/internal/nbt"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// The store queue's bounds: what a process crash can lose in
// DurabilityBalanced and DurabilityFast, which the README's promises table
// states and tests/kill_test.go measures.
const (
	// storeQueueBytes bounds the memory of the columns stored and not yet
	// written: a store waits while more than this is queued.
	storeQueueBytes = 64 << 20
	// storeQueueAge bounds how far writing may fall behind: a store waits
	// while the oldest store not yet written was acknowledged this long ago.
	storeQueueAge = time.Second
	// storeQueueQuiet is how long the store worker waits for a burst of
	// stores (a World's Save) to end before it takes what was queued:
	// until no store has arrived for this long, a quarter of
	// storeQueueBytes is queued, half of storeQueueAge has passed, or a
	// caller waits for the queue (Sync, Close, a checkpoint). Waking the
	// worker, and its encoders running beside the tick, cost the World's
	// thread more than the store itself.
	storeQueueQuiet = 2 * time.Millisecond
)

// storeJob is a column StoreColumn acknowledged and the store worker has not
// yet written: a snapshot (cache.go) without a record, taken on the World's
// tick. Sub-chunks equal to those of the column's previous snapshot are
// shared with it; snapshots are never modified.
type storeJob struct {
	s    *snapshot
	pos  world.ChunkPos
	dim  world.Dimension
	cost int64     // the bytes the snapshot added
	at   time.Time // when its first store was acknowledged
	// first and last order the job's first store and its latest
	// replacement among every store the queue acknowledged (storeQueue.seq).
	first, last uint64
	// taken is set once the worker has taken the job: a store of the same
	// column after that queues a new job instead of replacing this one.
	taken bool
}

// storeQueue holds the stores StoreColumn acknowledged in DurabilityBalanced
// and DurabilityFast, oldest first, for the store worker, which encodes
// them and writes each batch it takes in one atomic engine batch. A store of
// a column still queued replaces the queued one in its place. The worker
// takes the oldest jobs, a batch's bytes at least, up to a moment: a batch
// holds every store acknowledged before the first store of the job after
// it, and none acknowledged later (take). Since each batch is atomic and
// written in order, whatever a crash keeps of the acknowledged stores is
// every store acknowledged before some moment, never a later one without
// the earlier ones. It is safe for concurrent use.
type storeQueue struct {
	mu    sync.Mutex
	moved *sync.Cond // a batch was written, or the queue closed
	jobs  []*storeJob
	// newest is the newest unwritten job of each column, queued or taken.
	newest map[blazedb.Key]*storeJob
	// bytes and unwritten count every job not yet written, taken or not;
	// oldest is when the oldest of them was acknowledged.
	bytes     int64
	unwritten int
	oldest    time.Time
	err       error // a failed write, for the next call that can report it
	// poisoned is a failed write of a poisoned engine (blazedb.ErrPoisoned),
	// which no later write can succeed: every later store is refused with it.
	poisoned error
	closed   bool
	wake     chan struct{} // capacity 1: jobs were queued into an empty queue
	// rush (capacity 1) tells the worker to stop waiting for the burst to
	// end: someone waits for the queue.
	rush chan struct{}
	// seq counts the stores acknowledged, queued or replacing: the order
	// of storeJob.first and last, and how the worker tells a burst of
	// stores from a quiet spell.
	seq uint64
	// takenFirst is the first of the oldest job of the batch taken and
	// not yet done (one at a time), 0 when none is.
	takenFirst uint64
	batch      int64 // the bytes a batch takes at least, unless fewer are queued
	limit      int64
	maxAge     time.Duration
	quiet      time.Duration
	// gate, when set (by tests, before the first store), holds the worker
	// until it is closed.
	gate chan struct{}
	// encoding, when set (by tests, before the first store), is called by
	// each encoder of a batch before it encodes a column.
	encoding func()
}

func newStoreQueue(limit int64, maxAge time.Duration) *storeQueue {
	q := &storeQueue{newest: map[blazedb.Key]*storeJob{}, wake: make(chan struct{}, 1), rush: make(chan struct{}, 1),
		limit: limit, maxAge: maxAge, quiet: storeQueueQuiet, batch: limit / 32}
	q.moved = sync.NewCond(&q.mu)
	return q
}

// push queues j, replacing the queued job of the same column if there is
// one. Unless it replaces, it waits while the queue is over its bounds in
// bytes or age, and while the worker writes it (backpressure). It returns
// blazedb.ErrClosed once the queue is closed.
func (q *storeQueue) push(j *storeJob) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.poisoned != nil {
		return fmt.Errorf("a queued store failed: %w", q.poisoned)
	}
	if old := q.newest[j.s.key]; old != nil && !old.taken {
		q.bytes += j.cost - old.cost
		q.seq++
		old.s, old.cost, old.last = j.s, j.cost, q.seq
		return nil
	}
	for !q.closed && q.unwritten > 0 && (q.bytes+j.cost > q.limit || time.Since(q.oldest) > q.maxAge) {
		q.hurry()
		q.moved.Wait()
	}
	if q.closed {
		return blazedb.ErrClosed
	}
	if q.unwritten == 0 {
		q.oldest = j.at
	}
	q.seq++
	j.first, j.last = q.seq, q.seq
	q.jobs = append(q.jobs, j)
	q.newest[j.s.key] = j
	q.bytes += j.cost
	q.unwritten++
	if len(q.jobs) == 1 {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// find returns the newest unwritten snapshot of k, or nil (always nil
// without a queue).
func (q *storeQueue) find(k blazedb.Key) *snapshot {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if j := q.newest[k]; j != nil {
		return j.s
	}
	return nil
}

// take takes the oldest queued jobs, at least q.batch bytes of them (or
// all), and more until the batch holds no store acknowledged after the
// first store of the job after it: a store replacing a queued job carries
// the job's place but its own moment, so a batch cut before a later job's
// first store must not hold it. A bulk store's encoders then work on one
// batch while the next is queued, instead of the whole queue at once.
func (q *storeQueue) take() []*storeJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	n, cost, last := 0, int64(0), uint64(0)
	for ; n < len(q.jobs); n++ {
		j := q.jobs[n]
		if n > 0 && cost >= q.batch && last < j.first {
			break
		}
		cost += j.cost
		last = max(last, j.last)
	}
	batch := q.jobs[:n:n]
	q.jobs = q.jobs[n:]
	if len(q.jobs) == 0 {
		q.jobs = nil
	}
	for _, j := range batch {
		j.taken = true
	}
	if n > 0 {
		q.takenFirst = batch[0].first
	}
	return batch
}

// done reports batch written, or failed with err.
func (q *storeQueue) done(batch []*storeJob, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, j := range batch {
		q.bytes -= j.cost
		q.unwritten--
		if q.newest[j.s.key] == j {
			delete(q.newest, j.s.key)
		}
	}
	q.takenFirst = 0
	q.oldest = time.Now()
	if len(q.jobs) > 0 {
		q.oldest = q.jobs[0].at
	}
	q.err = errors.Join(q.err, err)
	if errors.Is(err, blazedb.ErrPoisoned) && q.poisoned == nil {
		q.poisoned = err
	}
	q.moved.Broadcast()
}

// drain waits until every store acknowledged before it is written (or the
// queue is closed), then returns the failures not yet reported.
func (q *storeQueue) drain() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waitLocked()
	return q.takeErrLocked()
}

// wait is drain leaving the failures for a call that reports them.
func (q *storeQueue) wait() {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waitLocked()
}

// waitLocked waits until every store acknowledged before it is written,
// not for the queue to empty: under stores that never pause (a map being
// generated in another dimension) it never would.
func (q *storeQueue) waitLocked() {
	through := q.seq
	for q.unwrittenThrough(through) && !q.closed {
		q.hurry()
		q.moved.Wait()
	}
}

// unwrittenThrough reports whether a job whose first store is one of the
// first seq acknowledged is not yet written. Jobs are queued, taken and
// written in the order of their first stores, so the oldest unwritten job
// (the batch being written, else the queue's first) has the smallest.
func (q *storeQueue) unwrittenThrough(seq uint64) bool {
	switch {
	case q.takenFirst != 0:
		return q.takenFirst <= seq
	case len(q.jobs) > 0:
		return q.jobs[0].first <= seq
	}
	return false
}

// hurry tells the worker, if it waits for a burst to end, to take what is
// queued now.
func (q *storeQueue) hurry() {
	select {
	case q.rush <- struct{}{}:
	default:
	}
}

// settle waits, before the worker takes a batch, until the stores arriving
// pause for q.quiet, or the queue has grown to a quarter of its bytes or
// half of its age, or someone waits for it (hurry), or stop is closed. A
// Save's stores then queue without waking the worker for each, and its
// encoders do not run beside the tick while the Save lasts.
func (q *storeQueue) settle(t *time.Timer, stop <-chan struct{}) {
	for {
		q.mu.Lock()
		seq := q.seq
		now := len(q.jobs) == 0 || q.closed || q.bytes >= q.limit/4 || time.Since(q.oldest) >= q.maxAge/2
		q.mu.Unlock()
		if now {
			return
		}
		t.Reset(q.quiet)
		select {
		case <-t.C:
		case <-q.rush:
			return
		case <-stop:
			return
		}
		q.mu.Lock()
		quiet := q.seq == seq
		q.mu.Unlock()
		if quiet {
			return
		}
	}
}

// takeErr returns the failures not yet reported, and forgets them.
func (q *storeQueue) takeErr() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.takeErrLocked()
}

func (q *storeQueue) takeErrLocked() error {
	err := q.err
	q.err = nil
	if err != nil {
		return fmt.Errorf("a queued store failed: %w", err)
	}
	return nil
}

// close refuses further stores and wakes every waiter; the jobs still
// queued are dropped (Discard).
func (q *storeQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.moved.Broadcast()
}

// flushStores writes every store acknowledged before it and returns the
// queue's failures not yet reported: for the calls that read or copy the
// engine's own state (Sync, Backup, Snapshot, ChangedSince, Columns, a
// revert), which would otherwise miss acknowledged stores.
func (db *DB) flushStores() error {
	if db.store == nil {
		return nil
	}
	return db.store.drain()
}

// queueStore is StoreColumn in DurabilityBalanced and DurabilityFast: it
// takes a snapshot of col, sharing what equals the column's newest
// snapshot, and queues it for the store worker. An identical column queues
// nothing. A failure of an earlier queued store is returned with col's own
// outcome: col is stored all the same, since Dragonfly only logs the error
// and would lose col if it is unloading it.
//
// While a checkpoint is gathered (checkpoint.go) it queues nothing and
// reports queued false: the store then takes the direct path (writeColumn),
// whose gate puts it into the checkpoint's batch. A queued store would reach
// the engine beside that batch, and break the checkpoint's promise that the
// chunks and the players in it are of one moment (the crash dupe). The
// check and the push hold the gate's lock read, so that a checkpoint is
// armed between pushes; beginCheckpoint drains the queue, with the lock
// held, before it arms: while a checkpoint is gathered the queue is empty,
// nothing queued can land after the checkpoint, and the cache holds each
// column's newest snapshot, which the direct path encodes against.
func (db *DB) queueStore(k blazedb.Key, pos world.ChunkPos, dim world.Dimension, col *chunk.Column) (queued bool, err error) {
	if col == nil || col.Chunk == nil {
		return true, fmt.Errorf("%w: nil column or chunk", ErrInvalidColumn)
	}
	if err := column.CheckShape(col.Chunk); err != nil {
		return true, fmt.Errorf("%w: %w", ErrInvalidColumn, err)
	}
	db.ckpt.mu.RLock()
	defer db.ckpt.mu.RUnlock()
	if db.ckpt.pending != nil {
		return false, nil // an earlier failure waits for the next call
	}
	earlier := db.store.takeErr()
	cols, br := db.columns()
	base := db.store.find(k)
	if base == nil {
		base, _ = cols.peek(k)
	}
	s, cost, same := db.dict.snapshotOf(k, br, col, base)
	if same {
		return true, earlier
	}
	return true, errors.Join(earlier, db.store.push(&storeJob{s: s, pos: pos, dim: dim, cost: cost, at: time.Now()}))
}

// biomeBufs holds the buffers snapshotOf encodes a column's changed biomes
// into before it copies them.
var biomeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// snapshotOf takes a snapshot of col without its record, sharing with base
// (the column's newest snapshot, or nil) every part equal to base's; same
// reports that nothing differs. cost is what the snapshot's own copies
// hold, about.
//
// It runs on the World's tick, so its copies are the cheapest to make that
// stay true copies: on the raw path, the changed sub-chunks are copied in
// their flat form (column/flatsub.go), all into one allocation, which the
// store worker encodes as they are (a load builds SubChunks from them);
// the biomes are encoded, which is quicker than copying their storages and
// a third of the size.
func (d *dictionary) snapshotOf(k blazedb.Key, br chunk.BlockRegistry, col *chunk.Column, base *snapshot) (s *snapshot, cost int64, same bool) {
	subs := col.Chunk.Sub()
	if base != nil && len(base.subs) != len(subs) {
		base = nil
	}
	s = &snapshot{key: k, rng: col.Chunk.Range(), br: br, tick: col.Tick, subs: make([]*chunk.SubChunk, len(subs))}
	flat := d.codec.FlatSubs()
	if flat {
		s.flat, s.codec = make([][]byte, len(subs)), d.codec
	}
	same = base != nil
	// The changed sub-chunks, listed on the stack (a column has a few
	// dozen): grown by appends on the heap, the list cost more
	// allocations than the rest of a new column's snapshot.
	var freshBuf [64]int
	fresh := freshBuf[:0]
	for i, sub := range subs {
		switch {
		case base == nil:
		case base.subs[i] != nil && column.SubEqual(sub, base.subs[i]):
			s.subs[i] = base.subs[i]
			continue
		case flat && base.flat != nil && base.flat[i] != nil:
			// A queued snapshot's own copy, or a written one's that no
			// load has built: compared in its form.
			if d.codec.SubEqualFlat(sub, i+s.rng[0]>>4, base.flat[i]) {
				s.flat[i] = base.flat[i]
				continue
			}
		}
		fresh = append(fresh, i)
	}
	same = same && len(fresh) == 0
	if flat && len(fresh) > 0 {
		n := 0
		for _, i := range fresh {
			n += d.codec.FlatSubBound(subs[i])
		}
		// One allocation for all: each copy is a slice of it, its capacity
		// cut to its length.
		buf := make([]byte, 0, n)
		for _, i := range fresh {
			start := len(buf)
			buf = d.codec.AppendFlatSub(buf, col.Chunk, i)
			s.flat[i] = buf[start:len(buf):len(buf)]
		}
		cost += int64(len(buf)) + 64
	}
	if !flat {
		for _, i := range fresh {
			s.subs[i] = subs[i].Clone()
			cost += 8 << 10
		}
	}
	if base != nil && d.codec.EqualBiomes(base.biomes, col.Chunk) {
		s.biomes = base.biomes
	} else {
		same = false
		sp := biomeBufs.Get().(*[]byte)
		*sp = d.codec.AppendBiomes((*sp)[:0], col.Chunk)
		s.biomes = slices.Clone(*sp)
		biomeBufs.Put(sp)
		cost += int64(len(s.biomes))
	}
	if base != nil && nbt.EqualBlockEntities(col.BlockEntities, base.blockEntities) && nbt.EqualEntities(col.Entities, base.entities) {
		s.blockEntities, s.entities = base.blockEntities, base.entities
	} else {
		same = false
		s.blockEntities, s.entities = nbt.CloneBlockEntities(col.BlockEntities), nbt.CloneEntities(col.Entities)
		cost += int64(512 * (len(s.blockEntities) + len(s.entities)))
	}
	if base != nil && slices.Equal(col.ScheduledBlocks, base.scheduled) {
		s.scheduled = base.scheduled
	} else {
		same = false
		s.scheduled = slices.Clone(col.ScheduledBlocks)
	}
	same = same && col.Tick == base.tick
	return s, cost + 512, same
}

// Has reports whether the world holds a column at pos in dim, a store
// acknowledged and not yet written included, from memory alone. Safe for
// concurrent use.
func (db *DB) Has(pos world.ChunkPos, dim world.Dimension) (bool, error) {
	k, err := key(pos, dim)
	if err != nil {
		return false, err
	}
	if db.store.find(k) != nil {
		return true, nil
	}
	return db.eng.Has(k)
}
