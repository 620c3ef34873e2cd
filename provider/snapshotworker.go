package provider

import (
	"sync"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/block/cube"
)

// The snapshot worker's limits.
const (
	// snapshotQuiet is how long the worker waits after the last LoadColumn
	// before it decodes. Loads come in bursts (a player joining, crossing
	// into new chunks, teleporting), and a decode beside a decode slows
	// both, as each allocates a column's worth of memory. Waiting for a
	// pause moves that work out of the burst to where the World is not
	// loading.
	snapshotQuiet = time.Millisecond
	// pendingCost is what the queue reckons a snapshot costs the column
	// cache, about a realistic column's (its record and its raw size): the
	// queue holds at most as many jobs as the cache could hold snapshots,
	// since more would only decode snapshots that evict each other. A load
	// beyond it gets no snapshot: the column is cached when next loaded or
	// stored, and a store of it meanwhile encodes it whole.
	pendingCost = 64 << 10
)

// fillJob describes a column to snapshot for the cache. A load queues only
// its key, range and cache; readRecord fills in the record and its stamp
// when the worker (or Prefetch) gets to it.
type fillJob struct {
	k     blazedb.Key
	rec   []byte // shared with the engine's cache, never written
	stamp uint64 // the engine's stamp of k, taken before rec was read
	rng   cube.Range
	cols  *columnCache
}

// fillQueue holds the jobs waiting for the snapshot worker, oldest first,
// at most limit of them. Loads push without waking the worker, except the
// push that finds the queue empty. It is safe for concurrent use.
type fillQueue struct {
	mu    sync.Mutex
	jobs  []fillJob
	limit int
	wake  chan struct{} // capacity 1: the queue was empty and is not
}

func newFillQueue(limit int) *fillQueue {
	return &fillQueue{limit: limit, wake: make(chan struct{}, 1)}
}

// push queues job, or drops it if the queue is full.
func (q *fillQueue) push(job fillJob) {
	q.mu.Lock()
	if len(q.jobs) >= q.limit {
		q.mu.Unlock()
		return
	}
	q.jobs = append(q.jobs, job)
	first := len(q.jobs) == 1
	q.mu.Unlock()
	if first {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// pop takes the oldest job.
func (q *fillQueue) pop() (fillJob, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.jobs) == 0 {
		return fillJob{}, false
	}
	job := q.jobs[0]
	q.jobs[0] = fillJob{}
	q.jobs = q.jobs[1:]
	return job, true
}

// snapshotWorker decodes just-loaded columns a second time into private
// snapshots for the column cache, so that LoadColumn need not clone what it
// returns, and storing the column again finds what did not change. It
// decodes only after a pause in loads of db.quiet (snapshotQuiet). A
// snapshot is installed only if the key's engine stamp is the one taken
// before its record was read (no write since) and no newer snapshot
// exists, so it can never be stale; the check is in memory, under the
// cache lock, with no I/O. Jobs still waiting at Close are dropped:
// snapshots only save work.
func (db *DB) snapshotWorker() {
	defer db.fillDone.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-db.fillStop:
			return
		case <-db.fill.wake:
		}
		for {
			quiet := time.Duration(db.quiet.Load())
			if idle := time.Since(db.born) - time.Duration(db.lastLoad.Load()); idle < quiet {
				timer.Reset(quiet - idle)
				select {
				case <-db.fillStop:
					return
				case <-timer.C:
				}
				continue
			}
			job, ok := db.fill.pop()
			if !ok {
				break
			}
			db.snapshot(job)
			select {
			case <-db.fillStop:
				return
			default:
			}
		}
	}
}

func (db *DB) snapshot(job fillJob) {
	if db.readRecord(&job) != nil {
		return // deleted since, or unreadable: the next load reports it
	}
	if s := db.decodeSnapshot(job); s != nil {
		db.install(job, s)
	}
}

// readRecord reads job's record, shared with the engine's cache, and the
// stamp it had before the read.
func (db *DB) readRecord(job *fillJob) error {
	job.stamp, _ = db.eng.Stamp(job.k)
	var err error
	job.rec, err = db.eng.GetShared(job.k)
	return err
}

// decodeSnapshot decodes job's record into a snapshot, or nil if it does
// not decode (LoadColumn reports that).
func (db *DB) decodeSnapshot(job fillJob) *snapshot {
	col, lay, biomes, err := db.dict.codec.Decode(job.rec, job.rng, true)
	if err != nil {
		return nil
	}
	return &snapshot{key: job.k, rng: job.rng, rec: job.rec, lay: lay, subs: col.Chunk.Sub(), biomes: biomes, chunk: col.Chunk,
		tick: col.Tick, blockEntities: col.BlockEntities, entities: col.Entities, scheduled: col.ScheduledBlocks}
}

// install caches s unless the key was written since job's record was read
// or already has a snapshot.
func (db *DB) install(job fillJob, s *snapshot) {
	job.cols.putIfAbsent(s, func() bool {
		now, ok := db.eng.Stamp(job.k)
		return ok && now == job.stamp
	})
}
