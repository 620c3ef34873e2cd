package blazedb

import (
	"errors"
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
	f    vfs.File
	gen  uint64
	refs sync.WaitGroup // readers and writers using f
	// alt maps the first copy of each body (alias.go) to its second, read
	// when the first does not verify. Set before the log is in use, and
	// never changed: only compaction writes bodies, into a new log.
	alt map[int64]int64

	// marked is the length of the file its sync marks cover: the value
	// of the last mark appended, or the mark's own end when that value
	// is its offset (a mark appended when all before it was durable
	// leaves nothing unmarked but itself). A mark is appended when synced
	// passes it (markSynced, and a write in front of its record).
	// Guarded by DB.writeMu.
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
	unmarked   bool  // an fsync succeeded that no mark has reported yet
	superseded bool  // compaction copied every record into a synced new file, installed durably unless the DB is poisoned
}

func newLogFile(f vfs.File, h fileHeader, size int64, synced int64) *logFile {
	// Nothing before the first record written needs a mark: the header
	// and its copy were synced when the file was made.
	l := &logFile{f: f, gen: h.generation, synced: synced, marked: fileHeaderSize + headerCopySize}
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
	if took >= db.knobs.slowFsyncAfter() {
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
		l.unmarked = true
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

// syncMarked is syncTo followed, when the caller's fsync (or one it waited
// for) made bytes durable that no sync mark covers yet, by markSynced. It
// is for callers that do not hold db.writeMu. A mark that cannot be
// written does not fail the caller, whose bytes are durable: it is a
// background error, which the next call that reports one returns (and
// the DB is poisoned if even the cut of the failed mark failed).
func (db *DB) syncMarked(l *logFile, end int64, group bool) error {
	if err := db.syncTo(l, end, group); err != nil {
		return err
	}
	if err := db.markSynced(l); err != nil {
		db.reportBackground(err)
	}
	return nil
}

// markSynced appends a sync mark saying what the last fsync made durable,
// unless one already says so. Without it, the synced bytes since the last
// mark would be covered only by the mark the next write carries: if none
// came before a crash, decay in them would look like a crash's damage to
// a scan (scan.go), and the log would be cut there, taking every later
// record with it. The mark itself is not synced: a crash of the process
// keeps it, and the next fsync (DurabilityBalanced's within SyncInterval,
// or Close's) makes it durable. Of the callers that waited for one fsync,
// only the first does the work; the others find nothing to do without
// taking db.writeMu. db.writeMu must not be held.
func (db *DB) markSynced(l *logFile) error {
	l.mu.Lock()
	due := l.unmarked
	l.unmarked = false
	l.mu.Unlock()
	if !due {
		return nil
	}
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	if db.log != l || db.closed.Load() || db.poisoned() != nil {
		return nil
	}
	synced := l.durable()
	if synced <= l.marked {
		return nil
	}
	off := l.written.Load()
	if _, err := l.f.WriteAt(appendMark(make([]byte, 0, markSize), synced), off); err != nil {
		// As a failed write (write.go): cut what may have reached the
		// file, or poison the DB when even that fails.
		if terr := l.f.Truncate(off); terr != nil {
			db.poison(fmt.Errorf("cut failed sync mark at %d: %w (after %v)", off, terr, err))
		}
		return fmt.Errorf("write a sync mark to %s at %d: %w", logName, off, err)
	}
	l.written.Store(off + markSize)
	l.markBytes.Add(markSize)
	l.marked = markCovers(synced, off)
	l.dirtyAt.CompareAndSwap(0, time.Now().UnixNano())
	return nil
}

// markCovers is what a sync mark of value synced written at off covers:
// the log up to synced, or up to the mark's end when it is written right
// there, all before it durable.
func markCovers(synced, off int64) int64 {
	if synced == off {
		return off + markSize
	}
	return synced
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
	if err := db.syncMarked(l, l.written.Load(), true); err != nil && !errors.Is(err, ErrPoisoned) {
		db.reportBackground(err)
	}
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
		return db.syncMarked(l, end, true)
	}
	switch db.opts.Durability {
	case DurabilitySafe:
		return db.syncMarked(l, end, false)
	case DurabilitySafeBatch:
		return db.syncMarked(l, end, true)
	case DurabilityBalanced:
		if l.unsynced() >= db.opts.SyncBytes {
			if db.opts.ExternalMaintenance {
				return db.syncMarked(l, end, true) // no goroutine to hand it to
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
