package blazedb

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// logFile is one generation of chunks.dat together with what is known to
// be durable in it. Compaction replaces the DB's logFile with a new one; the
// old one is closed once the last reader or writer holding a reference
// (refs) lets go.
type logFile struct {
	f     vfs.File
	gen   uint64
	marks bool           // the file is version 2: appends carry sync marks
	refs  sync.WaitGroup // readers and writers using f

	// marked is the durable length the last sync mark appended gave; a
	// write carries a new mark when synced has passed it. Guarded by
	// DB.writeMu.
	marked int64
	// markBytes counts the bytes of sync marks known to be in the file:
	// overhead that compaction does not reclaim, so not garbage. Marks
	// in the part of the log index.dat covered at Open are not known.
	markBytes atomic.Int64
	// keptBytes counts the bytes of the older versions compaction keeps
	// beside damaged live records (damage.go): not garbage either, or
	// every compaction would be followed by another.
	keptBytes atomic.Int64

	written atomic.Int64 // bytes in the file; advanced under DB.writeMu
	// dirtyAt is when (unix nanoseconds) the oldest write not yet known
	// durable was made; 0 when none is known. It may read 0 while bytes
	// are unsynced (a write racing a sync), never the reverse for long:
	// readers treat 0 with unsynced bytes as dirty now.
	dirtyAt atomic.Int64

	mu         sync.Mutex
	cond       sync.Cond
	synced     int64 // bytes known durable
	syncing    bool  // a group-commit leader is in fsync
	superseded bool  // compaction copied every record into a synced new file, installed durably unless the DB is poisoned
}

func newLogFile(f vfs.File, h fileHeader, size int64, synced int64) *logFile {
	l := &logFile{f: f, gen: h.generation, marks: h.marks(), synced: synced, marked: fileHeaderSize}
	l.cond.L = &l.mu
	l.written.Store(size)
	return l
}

// retire marks l as superseded, wakes its waiters, and closes its file when
// the last reference is gone, then calls closed. Called after compaction's
// swap.
func (l *logFile) retire(closed func()) {
	l.mu.Lock()
	l.superseded = true
	l.cond.Broadcast()
	l.mu.Unlock()
	go func() {
		l.refs.Wait()
		l.f.Close()
		closed()
	}()
}

// slowFsync is how long an fsync of chunks.dat may take before it is logged
// as a warning: on a healthy disk one takes milliseconds, and a writer
// that waits for it (the Safe modes, Sync) holds its World's tick that
// long. etcd warns from the same second. A variable for tests.
var slowFsync = time.Second

// fsync syncs l and records what became durable. A failure poisons the
// DB: the kernel may have dropped the dirty pages, and a later fsync that
// succeeds would prove nothing about them. A slow one is logged, so that
// a server owner looking for the cause of stalled ticks finds the disk.
func (db *DB) fsync(l *logFile) error {
	target := l.written.Load()
	start := time.Now()
	err := l.f.Sync()
	took := time.Since(start)
	db.stats.fsyncs.Add(1)
	db.stats.fsyncNanos.Add(int64(took))
	if took >= slowFsync {
		attrs := []any{"dir", db.dir, "took", took.Round(time.Millisecond)}
		if err != nil {
			attrs = append(attrs, "err", err) // a successful one logs no err=<nil>
		}
		db.opts.Logger.Warn("blazedb: slow fsync of chunks.dat: the disk is overloaded or failing", attrs...)
	}
	if err != nil {
		db.poison(fmt.Errorf("fsync %s: %w", logName, err))
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
		return db.poisoned()
	}
	l.mu.Lock()
	if target > l.synced {
		l.synced = target
	}
	if l.synced >= l.written.Load() {
		l.dirtyAt.Store(0)
	}
	l.cond.Broadcast()
	l.mu.Unlock()
	return nil
}

// syncTo returns once the first end bytes of l are durable. With group set,
// concurrent callers share fsyncs (one leader syncs everything written so
// far while the others wait for it); without, each caller that still needs
// it issues its own.
func (db *DB) syncTo(l *logFile, end int64, group bool) error {
	l.mu.Lock()
	for !l.superseded && l.synced < end {
		if err := db.poisoned(); err != nil {
			l.mu.Unlock()
			return err
		}
		if group && l.syncing {
			l.cond.Wait()
			continue
		}
		if group {
			l.syncing = true
		}
		l.mu.Unlock()
		err := db.fsync(l)
		l.mu.Lock()
		if group {
			l.syncing = false
			l.cond.Broadcast()
		}
		if err != nil {
			l.mu.Unlock()
			return err
		}
	}
	// Durable only if nothing poisoned the database. In particular a
	// compaction whose directory sync failed poisoned it before retiring
	// l (superseded) or installing its file (whose synced bytes a power
	// loss may then replace with l's).
	err := db.poisoned()
	l.mu.Unlock()
	return err
}

// maintainSync is Maintain's part of DurabilityBalanced: it fsyncs once
// the oldest unsynced write is SyncInterval/2 old, or SyncBytes are
// pending. An owner calling Maintain every SyncInterval/2 or more often
// keeps the promise that a write is durable within SyncInterval, without
// an fsync at every call: a pool maintaining many databases every half
// second would otherwise fsync each of them twice a second.
func (db *DB) maintainSync() {
	l, err := db.acquireLog()
	if err != nil {
		return
	}
	defer l.refs.Done()
	n := l.unsynced()
	if n == 0 {
		return
	}
	if at := l.dirtyAt.Load(); at != 0 && n < db.opts.SyncBytes && time.Since(time.Unix(0, at)) < db.opts.SyncInterval/2 {
		return
	}
	db.syncTo(l, l.written.Load(), true)
}

// garbage is what compaction would reclaim from l, with live bytes of
// live records: all but the header, those, the sync marks known and the
// older versions kept beside damaged records.
func (l *logFile) garbage(live int64) int64 {
	return l.written.Load() - fileHeaderSize - live - l.markBytes.Load() - l.keptBytes.Load()
}

// durable reports how many bytes of l are known durable.
func (l *logFile) durable() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.synced
}

// unsynced reports how many written bytes of l are not yet durable.
func (l *logFile) unsynced() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.superseded {
		return 0
	}
	return l.written.Load() - l.synced
}

// waitDurable applies the DB's durability mode after a write that ended at
// end in l; with sync, it waits for durability in every mode.
func (db *DB) waitDurable(l *logFile, end int64, sync bool) error {
	if sync && db.opts.Durability != DurabilitySafe {
		return db.syncTo(l, end, true)
	}
	switch db.opts.Durability {
	case DurabilitySafe:
		return db.syncTo(l, end, false)
	case DurabilitySafeBatch:
		return db.syncTo(l, end, true)
	case DurabilityBalanced:
		if l.unsynced() >= db.opts.SyncBytes {
			if db.opts.ExternalMaintenance {
				return db.syncTo(l, end, true) // no goroutine to hand it to
			}
			db.kick(&db.bg.syncNow)
		}
	}
	return nil
}

// poison records the first fatal I/O error; later writes return it.
func (db *DB) poison(err error) {
	db.poisonErr.CompareAndSwap(nil, &err)
}

func (db *DB) poisoned() error {
	if p := db.poisonErr.Load(); p != nil {
		return fmt.Errorf("%w: %w", ErrPoisoned, *p)
	}
	return nil
}
