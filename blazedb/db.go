package blazedb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// DB is an open database. It is safe for concurrent use by multiple
// goroutines. See the package documentation for its guarantees.
type DB struct {
	dir  string
	opts Options
	fs   vfs.FS
	lock io.Closer

	// writeMu serialises appends to the log. It guards seq and the advance
	// of log.written, and compaction holds it for its final swap. Readers
	// never take it.
	writeMu sync.Mutex
	seq     uint64 // next sequence number

	// mu guards idx and log. It is held only for in-memory work, never
	// across I/O.
	mu  sync.RWMutex
	idx *index
	log *logFile // nil once closed

	cache     *cache
	closed    atomic.Bool
	stopping  atomic.Bool // asks a running compaction to give up
	poisonErr atomic.Pointer[error]
	compactMu sync.Mutex // one compaction (or Check) at a time

	// History (history.go, snapshot.go): one snapshot created or deleted
	// at a time; when the history was last trimmed (Unix nanoseconds);
	// whether Repair's compaction drops damaged old versions.
	snapMu    sync.Mutex
	lastTrim  atomic.Int64
	repairing atomic.Bool

	// checkpointed is the length of the log that index.dat describes (0
	// when it describes none of it).
	checkpointed atomic.Int64
	// retiring counts logs that compaction replaced and whose readers have
	// not all finished; Close waits for them, so the next Open finds
	// their files closed (and aside files removed: files.go).
	retiring sync.WaitGroup

	bg struct {
		syncNow       chan struct{}
		compactNow    chan struct{}
		checkpointNow chan struct{}
		stop          chan struct{}
		wg            sync.WaitGroup
		running       atomic.Bool // a background compaction is under way

		mu         sync.Mutex
		err        error // not yet returned to a caller
		retryAfter time.Time
	}

	recovery Recovery
	stats    counters
	// lostLog is set only while Open recovers a log that was gone and
	// is rebuilt as its header alone (lostlog.go).
	lostLog *goneLog

	// carried is what the last compaction carried of damaged live records
	// (damage.go); swapped with the log, under mu. carriedFresh: a
	// compaction carried some since Maintain last reported them.
	carried      atomic.Pointer[carriedSet]
	carriedFresh atomic.Bool

	// knobs are the hooks and thresholds tests change (knobs.go).
	knobs testKnobs
}

// Open opens the database in dir, creating it if dir is empty or missing
// (unless opts.ReadOnly). It refuses a directory holding anything but
// Blaze's own files (ErrNotBlaze), a newer format (ErrVersion) or one
// no release wrote (ErrOldVersion, which wraps it), a database another
// DB holds open (ErrLocked), and, unless
// opts.AcceptDurableLoss, one that lost bytes index.dat shows were durable
// (ErrDurableLoss), its whole log included (lostlog.go); in each of these
// cases it changes nothing on disk.
func Open(dir string, opts Options) (*DB, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	db := &DB{dir: dir, opts: o, fs: o.FS}
	if err := db.open(); err != nil {
		if db.lock != nil {
			db.lock.Close()
		}
		return nil, fmt.Errorf("blazedb: open %s: %w", dir, err)
	}
	return db, nil
}

func (db *DB) path(name string) string { return filepath.Join(db.dir, name) }

func (db *DB) open() error {
	ro := db.opts.ReadOnly
	names, err := db.fs.List(db.dir)
	made := false // by vfs.MkdirAll, which synced the parent
	if errors.Is(err, vfs.ErrNotExist) && !ro {
		if err := vfs.MkdirAll(db.fs, db.dir); err != nil {
			return err
		}
		names, err, made = nil, nil, true
	}
	if err != nil {
		return err
	}
	for _, n := range names {
		if !isOurFile(n) {
			return fmt.Errorf("%w: the directory holds %q, which is not a Blaze file (is this a LevelDB world or another program's data?)", ErrNotBlaze, n)
		}
	}
	hasLog := slices.Contains(names, logName)
	aside := newestAside(names)
	var gone *goneLog // index.dat's evidence of a log that is gone (lostlog.go)
	switch {
	case hasLog:
		// Validate before taking the lock, so a foreign or newer database
		// is refused without creating a file.
		if _, err := db.readHeader(); err != nil {
			if gone = db.findGoneLog(err); gone == nil {
				return err
			}
		}
	case aside != "" && ro:
		return fmt.Errorf("no %s: a compaction interrupted on Windows left it as %s; open the database read-write once to put it back: %w", logName, aside, vfs.ErrNotExist)
	case aside == "" && slices.Contains(names, indexName):
		if gone = db.findGoneLog(nil); gone == nil && ro {
			return fmt.Errorf("no %s: %w", logName, vfs.ErrNotExist)
		}
	case ro:
		return fmt.Errorf("no %s: %w", logName, vfs.ErrNotExist)
	}

	if !ro || slices.Contains(names, lockName) {
		db.lock, err = db.fs.Lock(db.path(lockName), !ro)
		if errors.Is(err, vfs.ErrLocked) {
			return fmt.Errorf("%w (%v)", ErrLocked, err)
		}
		if err != nil {
			return err
		}
	}
	db.lostLog = gone
	if gone != nil && !ro && !db.opts.AcceptDurableLoss {
		return db.refuseGoneLog(gone)
	}
	if !ro {
		if !hasLog && aside != "" {
			// A crash between compaction's two renames (files.go): the
			// log renamed aside is the database; the new one never
			// took a write, and goes as a leftover.
			if err := db.fs.Rename(db.path(aside), db.path(logName)); err != nil {
				return fmt.Errorf("put %s back as %s: %w", aside, logName, err)
			}
			if err := db.fs.SyncDir(db.dir); err != nil {
				return fmt.Errorf("put %s back as %s: %w", aside, logName, err)
			}
			names = slices.DeleteFunc(names, func(n string) bool { return n == aside })
			hasLog = true
			if _, err := db.readHeader(); err != nil {
				return err
			}
		}
		if err := db.removeLeftovers(names, hasLog || gone != nil); err != nil {
			return err
		}
		if gone != nil {
			// The loss is accepted: the log is rebuilt as its header
			// alone, and recovery reports the loss against index.dat,
			// which goes only after the new log is durable.
			if err := vfs.ReplaceFile(db.fs, db.dir, logName, gone.header()); err != nil {
				return fmt.Errorf("rebuild %s: %w", logName, err)
			}
			hasLog = true
		}
		if !hasLog {
			// Whoever made the directory, its entry must be durable
			// before a write into it is acknowledged. It is synced before
			// the log exists, so that an Open tried again after a failure
			// here syncs it again.
			if parent := filepath.Dir(db.dir); parent != db.dir && !made {
				if err := db.fs.SyncDir(parent); err != nil {
					return fmt.Errorf("sync directory %s: %w", parent, err)
				}
			}
			h := fileHeader{generation: rand.Uint64() >> 1}
			if err := vfs.ReplaceFile(db.fs, db.dir, logName, h.encodeWithCopy()); err != nil {
				// Its name may be in place but not durable: a later Open
				// must create it again, not take it as it is.
				if rerr := db.fs.Remove(db.path(logName)); rerr != nil && !errors.Is(rerr, vfs.ErrNotExist) {
					err = errors.Join(err, fmt.Errorf("remove it: %w", rerr))
				}
				return fmt.Errorf("create %s: %w", logName, err)
			}
		}
	}

	var f vfs.File
	if ro && gone != nil {
		f = &headerOnlyFile{b: gone.header()} // nothing is written
	} else if ro {
		f, err = db.fs.Open(db.path(logName))
	} else {
		f, err = db.fs.OpenReadWrite(db.path(logName))
	}
	if err != nil {
		return err
	}
	err = db.openLog(f)
	db.lostLog = nil // its index is not kept
	if err != nil {
		f.Close()
		return err
	}
	if db.opts.CacheBytes > 0 {
		db.cache = newCache(db.opts.CacheBytes)
	}
	db.bg.syncNow = make(chan struct{}, 1)
	db.bg.compactNow = make(chan struct{}, 1)
	db.bg.checkpointNow = make(chan struct{}, 1)
	db.bg.stop = make(chan struct{})
	db.trimHistory(time.Now())
	if !ro && !db.opts.ExternalMaintenance {
		db.bg.wg.Add(1)
		go db.background()
	}
	return nil
}

func (db *DB) removeLeftovers(names []string, hasLog bool) error {
	removed := false
	for _, n := range names {
		_, aside := asideGen(n)
		stale := n == logName+tmpSuffix || n == indexName+tmpSuffix || n == compactName || (n == indexName && !hasLog) || aside
		if stale {
			if err := db.fs.Remove(db.path(n)); err != nil {
				return fmt.Errorf("remove leftover %s: %w", n, err)
			}
			removed = true
		}
	}
	if removed {
		return db.fs.SyncDir(db.dir)
	}
	return nil
}

// openLog reads the header of the open log, recovers the index, and
// installs both.
func (db *DB) openLog(f vfs.File) error {
	h, damage, err := readFileHeader(f)
	if err != nil {
		return err
	}
	size, err := f.Size()
	if err != nil {
		return err
	}
	rec, err := db.recoverIndex(f, h, size)
	if err != nil {
		return err
	}
	if damage.reason != "" {
		if err := db.mendHeader(f, h, damage); err != nil {
			return err
		}
	}
	end := rec.end
	synced := int64(0)
	if !db.opts.ReadOnly {
		// What a crashed process left may sit in the page cache only; make
		// it durable before anything is built on it. When index.dat covered
		// the whole log, the close that wrote it had synced the log already.
		if db.recovery.ScannedBytes > 0 || db.recovery.TornBytes > 0 || !db.recovery.IndexLoaded {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("sync %s: %w", logName, err)
			}
		}
		synced = end
	}
	db.idx = rec.ix
	db.seq = rec.nextSeq
	db.log = newLogFile(f, h, end, synced)
	db.log.alt = rec.ix.alternates()
	db.log.markBytes.Store(rec.marks)
	if rec.endMarked {
		db.log.marked = end // nothing to mark again before more is written
	} else if !db.opts.ReadOnly {
		// The sync above made what a crashed process left durable: a mark
		// says so, as after every fsync, or decay in those bytes after a
		// later power cut would be taken for a torn tail and cut with
		// everything after it.
		if err := db.markEnd(db.log); err != nil {
			return err
		}
	}
	return nil
}

// Recovery reports what Open found: whether index.dat was used, damaged
// regions skipped, the torn tail cut and durable data lost.
func (db *DB) Recovery() Recovery {
	r := db.recovery
	r.Corrupt = slices.Clone(r.Corrupt)
	r.Lost = slices.Clone(r.Lost)
	return r
}

// Close syncs the log, writes index.dat (unless the one on disk already
// describes the whole log: a database only read closes without writing),
// stops background work and releases the directory. It returns every error
// it met, joined, including a background error no call has reported yet
// and the report of damaged live records compaction carries (damage.go).
// Close is idempotent: a second call returns nil. Every other method
// returns ErrClosed after it.
func (db *DB) Close() error { return db.close(true) }

// Discard closes the DB without making anything durable: no fsync, no
// index.dat. It is for a database about to be deleted (an overlay
// generation being reset), where syncing would be wasted work. After a
// crash the files hold whatever the OS wrote; Open recovers them as usual.
func (db *DB) Discard() error { return db.close(false) }

func (db *DB) close(persist bool) error {
	if !db.closed.CompareAndSwap(false, true) {
		return nil
	}
	db.stopping.Store(true)
	close(db.bg.stop)
	db.bg.wg.Wait()
	db.compactMu.Lock()
	defer db.compactMu.Unlock()

	var errs []error
	db.writeMu.Lock()
	db.mu.Lock()
	l, ix := db.log, db.idx
	damage := standingDamage(db.carried.Load(), ix, l.gen)
	db.log = nil
	db.mu.Unlock()
	summary := []any{"dir", db.dir, "chunk_keys", ix.count - len(ix.named), "named_keys", len(ix.named),
		"log_bytes", l.written.Load(), "live_bytes", ix.live, "compactions", db.stats.compactions.Load(),
		"appends", db.stats.appends.Load(), "append_bytes", db.stats.appendBytes.Load()}
	if !db.opts.ReadOnly && persist {
		if err := db.poisoned(); err != nil {
			errs = append(errs, err)
		} else if err := db.syncTo(l, l.written.Load(), false); err != nil {
			errs = append(errs, err)
		} else if err := db.markEnd(l); err != nil {
			errs = append(errs, err)
		} else if covered := l.written.Load(); db.checkpointed.Load() != covered {
			// Not when index.dat already describes the whole log (nothing
			// was written since Open, the last checkpoint or compaction):
			// rewriting it would cost two fsyncs and a rename for the same
			// bytes, at every close of a world only read.
			if err := db.writeIndex(ix, indexMeta{generation: l.gen, covered: covered, nextSeq: db.seq}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	db.writeMu.Unlock()
	l.refs.Wait()
	if err := l.f.Close(); err != nil {
		errs = append(errs, err)
	}
	db.retiring.Wait()
	if db.lock != nil {
		if err := db.lock.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := db.takeBackgroundErr(); err != nil {
		errs = append(errs, err)
	}
	if persist {
		errs = append(errs, damageError(damage))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("blazedb: close %s: %w", db.dir, err)
	}
	// A summary of the session: at Info for a database written or
	// compacted while open, else at Debug, so that closing the many
	// databases only read (regions, templates, tools) adds no noise.
	level := slog.LevelDebug
	if persist && !db.opts.ReadOnly && (db.stats.appends.Load() > 0 || db.stats.compactions.Load() > 0) {
		level = slog.LevelInfo
	}
	db.opts.Logger.Log(context.Background(), level, "blazedb: closed", summary...)
	return nil
}

// markEnd appends a sync mark for everything l holds, and syncs it, unless
// the last mark already says all of it is durable: without one, decay of
// the last records would look like a crash's damage to a scan (scan.go)
// and be cut with everything after it. db.writeMu must be held, and l
// synced to its end.
func (db *DB) markEnd(l *logFile) error {
	synced := l.durable()
	if synced <= l.marked {
		return nil
	}
	mark := appendMark(nil, synced)
	if _, err := l.f.WriteAt(mark, synced); err != nil {
		return fmt.Errorf("write %s at %d: %w", logName, synced, err)
	}
	end := synced + int64(len(mark))
	l.written.Store(end)
	l.markBytes.Add(markSize)
	l.marked = end
	return db.syncTo(l, end, false)
}

// Sync makes every write that has returned durable, whatever the
// durability mode, and returns any background error not yet reported. It
// also returns, every time, the report of damaged live records compaction
// carries (damage.go): an error wrapping ErrCorrupt that does not mean
// the sync failed (a failed one wraps ErrPoisoned).
func (db *DB) Sync() error {
	l, err := db.acquireLog()
	if err != nil {
		return err
	}
	defer l.refs.Done()
	if !db.opts.ReadOnly {
		err = db.syncMarked(l, l.written.Load(), true)
	}
	if err = errors.Join(err, db.takeBackgroundErr(), db.damageErr()); err != nil {
		return fmt.Errorf("blazedb: sync: %w", err)
	}
	return nil
}

// acquireLog returns the current log with a reference the caller must
// release with l.refs.Done().
func (db *DB) acquireLog() (*logFile, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.log == nil {
		return nil, ErrClosed
	}
	db.log.refs.Add(1)
	return db.log, nil
}

func (db *DB) checkWritable() error {
	switch {
	case db.closed.Load():
		return ErrClosed
	case db.opts.ReadOnly:
		return ErrReadOnly
	}
	return db.poisoned()
}
