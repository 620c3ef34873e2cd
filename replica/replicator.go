package replica

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
)

// Config configures a Replicator. Zero means the default.
type Config struct {
	// Interval is the longest time between shipments of new log bytes
	// (default 1s): at most every Interval an object is uploaded.
	Interval time.Duration
	// Lease is how long the manifest holds the replica for this writer
	// after each renewal (default 30s); a writer refused (ErrOwned) may
	// take it once the lease has run out.
	Lease time.Duration
	// Owner names this writer in the manifest; default host name and the
	// world's absolute directory. A Start by the same owner takes the
	// replica at once (a restarted server).
	Owner string
	// Takeover takes the replica even while another owner's lease runs;
	// that writer is fenced at its next upload.
	Takeover bool
	// Retention, when set, is how far back a restore must stay possible:
	// after each whole copy the writer deletes what no restore that recent
	// reads (Prune). Zero keeps everything.
	Retention time.Duration
	// Timeout bounds one shipment in the background (default 10 minutes):
	// a store that stops answering fails it, to be retried, rather than
	// holding shipping up for ever.
	Timeout time.Duration
	// MaxBackoff caps the wait between retries after failures (default
	// 30s); the first retry waits Interval, each next one twice as long.
	MaxBackoff time.Duration
	// Logger receives failures and fencing (default slog.Default()).
	Logger *slog.Logger
	// FS is the file system the world's files are read through (default
	// vfs.Default), as the provider's Config.FS.
	FS vfs.FS
	// Now is the clock (default time.Now): for tests.
	Now func() time.Time
}

func (c Config) withDefaults(world string) (Config, error) {
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.Lease == 0 {
		c.Lease = 30 * time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.FS == nil {
		c.FS = vfs.Default
	}
	if c.Owner == "" {
		host, _ := os.Hostname()
		abs, err := filepath.Abs(world)
		if err != nil {
			return c, err
		}
		c.Owner = host + ":" + abs
	}
	if c.Interval < 0 || c.Lease < 0 || c.MaxBackoff < 0 || c.Retention < 0 || c.Timeout < 0 {
		return c, fmt.Errorf("replica: negative interval, lease, backoff, retention or timeout")
	}
	return c, nil
}

// Stats are a Replicator's figures: a plain value, safe to copy.
type Stats struct {
	Epoch       uint64    // the epoch this writer holds
	Generation  uint64    // generation of chunks.dat last shipped
	Shipped     int64     // bytes of that generation shipped
	Uploads     int64     // objects uploaded (the manifest's renewals not counted)
	UploadBytes int64     // their bytes
	FullCopies  int64     // whole copies of chunks.dat among them
	Failures    int64     // shipments that failed (each retried)
	LastError   string    // the last failure's message, "" if none since the last success
	LastShipped time.Time // when the last shipment succeeded
	Fenced      bool      // another writer took the replica: nothing more is uploaded
	Pruned      int64     // objects deleted by Config.Retention
	Resumed     int64     // logs carried on from the replica's at a start rather than copied whole
}

// Replicator ships one open world to its replica, from a goroutine of its
// own: it reads the engine's durable log (blazedb.DB.DurableLog,
// ReadLogAt) and the world's files, and never holds a lock a store or the
// tick waits for. Its methods are safe for concurrent use.
type Replicator struct {
	db    *blazedb.DB
	world string
	store *Store
	conf  Config

	// shipMu is held by a shipment, and guards what it ships from.
	shipMu sync.Mutex
	man    *manifest
	etag   string
	root   part // the world, or a segmented world's root
	// A segmented world's regions (segments.go): nil for a plain world.
	regions Segmented
	parts   map[string]*part // by the region's directory in the world
	offered bool             // every region on disk was shipped in this epoch

	// mu guards what the other methods read, briefly.
	mu      sync.Mutex
	stats   Stats
	pending []error // failures not yet returned by Ship, Err or Close
	fenced  error
	closed  bool

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

// Start takes the replica in store for the world in dir, whose engine is
// db (provider.DB.Engine()), and ships it from now on: first a whole copy
// of chunks.dat (or, when the replica's log is a prefix of it, what
// follows: resume.go) and the world's files it does not hold as they are,
// then what is appended. It fails with ErrOwned while another writer holds
// the replica.
func Start(ctx context.Context, db *blazedb.DB, dir string, store *Store, conf Config) (*Replicator, error) {
	return start(ctx, db, nil, dir, store, conf)
}

// start is Start, and StartSegmented when regions is not nil.
func start(ctx context.Context, db *blazedb.DB, regions Segmented, dir string, store *Store, conf Config) (*Replicator, error) {
	conf, err := conf.withDefaults(dir)
	if err != nil {
		return nil, err
	}
	m, etag, err := acquire(ctx, store, conf.Owner, conf.Lease, conf.Takeover, conf.Now)
	if err != nil {
		return nil, err
	}
	r := &Replicator{
		db: db, world: dir, store: store, conf: conf, regions: regions,
		man: m, etag: etag, root: newPart(store, dir), parts: map[string]*part{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	r.root.root = true
	r.stats.Epoch = m.Epoch
	if conf.Interval > conf.Lease/3 {
		conf.Logger.Warn("replica: the interval is over a third of the lease: another server may take the replica while this one is idle", "interval", conf.Interval, "lease", conf.Lease)
	}
	r.kick <- struct{}{} // the first shipment at once
	go r.run()
	return r, nil
}

// run ships every Interval, waiting longer after failures, until Close.
func (r *Replicator) run() {
	defer close(r.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-r.stop:
			cancel()
		case <-r.done:
		}
	}()
	wait, failures := r.conf.Interval, 0
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-r.kick:
		case <-timer.C:
		}
		sctx, stop := context.WithTimeout(ctx, r.conf.Timeout)
		err := r.shipOnce(sctx)
		stop()
		switch {
		case errors.Is(err, ErrFenced):
			return
		case err != nil && ctx.Err() == nil:
			failures++
			wait = backoff(r.conf.Interval, r.conf.MaxBackoff, failures)
			r.conf.Logger.Warn("replica: shipping failed; retrying", "replica", r.store.String(), "in", wait, "err", err)
		default:
			failures, wait = 0, r.conf.Interval
		}
		timer.Reset(wait)
	}
}

// backoff is the wait after the n-th failure in a row: interval, doubling,
// capped at most.
func backoff(interval, most time.Duration, n int) time.Duration {
	wait := interval
	for ; n > 1; n-- {
		if wait > most/2 {
			return most
		}
		wait *= 2
	}
	return min(wait, most)
}

// Ship makes every store that has returned durable (blazedb.DB.SyncLog;
// for a segmented world, Segmented.Sync) and ships it now. It returns
// that shipment's failure with those of the background shipments not
// reported yet, retried or not, and ErrFenced, every time, once another
// writer took the replica.
func (r *Replicator) Ship(ctx context.Context) error {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return r.flush(ctx)
}

func (r *Replicator) flush(ctx context.Context) error {
	var err error
	if r.regions != nil {
		err = r.regions.Sync()
	} else {
		err = r.db.SyncLog()
	}
	if err != nil {
		err = fmt.Errorf("replica: ship: %w", err)
	} else {
		err = r.shipOnce(ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.take(err)
}

// Err returns the failures of the background shipments not reported yet
// (and ErrFenced, every time, once fenced), or nil.
func (r *Replicator) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.take(nil)
}

// take returns err with the pending failures (err, when it is the last
// of them, once) and ErrFenced when fenced, and forgets the failures.
// r.mu is held.
func (r *Replicator) take(err error) error {
	errs := r.pending
	r.pending = nil
	if r.fenced != nil && !errors.Is(err, ErrFenced) {
		errs = append(errs, r.fenced)
	}
	if err != nil && (len(errs) == 0 || errs[len(errs)-1] != err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Stats returns the replicator's figures now.
func (r *Replicator) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Close stops the background shipping, ships what is durable one last
// time (call it before closing the world: the engine must be open) and
// returns every failure not reported yet. The replica stays owned until
// its lease runs out, or until this owner starts again.
func (r *Replicator) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	r.closed = true
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	return r.flush(ctx)
}

// shipOnce renews the manifest and uploads what is new: a whole copy of
// chunks.dat when its generation is not the one shipped (after a
// compaction, and first in each epoch), else the durable bytes appended
// since, and each world file that changed. A failure is recorded in the
// stats and among the pending errors, and returned.
func (r *Replicator) shipOnce(ctx context.Context) error {
	r.shipMu.Lock()
	defer r.shipMu.Unlock()
	r.mu.Lock()
	fenced := r.fenced
	r.mu.Unlock()
	if fenced != nil {
		return fenced
	}
	err := r.ship(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		r.stats.LastError, r.stats.LastShipped = "", r.conf.Now()
	case errors.Is(err, ErrFenced):
		r.fenced = err
		r.stats.Fenced = true
		r.conf.Logger.Error("replica: FENCED: another writer took the replica; this server uploads nothing more", "replica", r.store.String(), "epoch", r.man.Epoch, "err", err)
	case errors.Is(ctx.Err(), context.Canceled):
		// Cut short (Close, or the caller's context): not a failure of
		// the store, and what it did not ship is shipped next time.
	default:
		r.stats.Failures++
		r.stats.LastError = err.Error()
		r.pending = append(r.pending, err)
	}
	return err
}

// ship does shipOnce's work; r.shipMu is held. The manifest is renewed
// before the shipment's first upload, and when nothing changed, once a
// third of the lease has passed since the last renewal.
func (r *Replicator) ship(ctx context.Context) error {
	renewed := false
	renewFirst := func() error {
		if renewed {
			return nil
		}
		// Renewed first: a writer fenced meanwhile uploads nothing more.
		etag, err := renew(ctx, r.store, r.man, r.etag, r.conf.Now())
		if err != nil {
			return err
		}
		r.etag, renewed = etag, true
		return nil
	}
	if err := r.shipPart(ctx, &r.root, r.db, renewFirst); err != nil {
		return err
	}
	if r.regions != nil {
		if err := r.shipRegions(ctx, renewFirst); err != nil {
			return err
		}
	}
	if !renewed && r.conf.Now().Sub(r.man.Renewed) >= r.conf.Lease/3 {
		return renewFirst()
	}
	return nil
}

// part is one database the replicator ships, under a prefix of its own:
// the world (a segmented world's root) or one of a segmented world's
// regions. r.shipMu guards it.
type part struct {
	store   *Store // at the part's prefix
	dir     string // the database's directory
	gen     uint64
	shipped int64 // -1: nothing of gen shipped in this epoch
	// digest is the SHA-256 state of bytes 0 to shipped of the log, sent
	// with each log object (logDigestMeta) for a later writer to resume.
	digest hash.Cloner
	files  map[string][sha256.Size]byte
	root   bool // the world's: its shipments' figures are Stats'
	// tried is set once this epoch's writer has tried to resume the
	// replica's log of this part (resume.go).
	tried bool
}

func newPart(store *Store, dir string) part {
	return part{store: store, dir: dir, shipped: -1, files: map[string][sha256.Size]byte{}}
}

// shipPart uploads what is new of p, whose engine is db: a whole copy of
// chunks.dat when its generation is not the one shipped, else the durable
// bytes appended since, and each world file that changed; renewFirst
// runs before its first upload.
func (r *Replicator) shipPart(ctx context.Context, p *part, db *blazedb.DB, renewFirst func() error) error {
	files, err := r.readFiles(p.dir)
	if err != nil {
		return err
	}
	gen, durable, err := db.DurableLog()
	if err != nil {
		return fmt.Errorf("replica: read the log's length: %w", err)
	}
	if !p.tried {
		// First in each epoch: carry on from the replica's log when it
		// holds a prefix of this one, rather than copy it whole, and
		// upload no file the replica holds as it is.
		if err := r.resume(ctx, p, db, gen, durable, files); err != nil {
			return err
		}
		p.tried = true
	}
	// Every byte and file read so far was there at t.
	t := r.conf.Now()
	changed := gen != p.gen || p.shipped < 0 || durable > p.shipped
	for name, f := range files {
		if p.files[name] != f.sum {
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if err := renewFirst(); err != nil {
		return err
	}
	// A compaction while the log is read replaces it: the new one is
	// then copied whole, at once (a few times at most, if compactions
	// follow each other that fast).
	for attempt := 0; ; attempt++ {
		err := r.shipLog(ctx, p, db, gen, durable, t)
		if !errors.Is(err, blazedb.ErrGenerationGone) || attempt == 3 {
			if err != nil {
				return err
			}
			break
		}
		if gen, durable, err = db.DurableLog(); err != nil {
			return fmt.Errorf("replica: read the log's length: %w", err)
		}
		t = r.conf.Now()
	}
	for name, f := range files {
		if p.files[name] == f.sum {
			continue
		}
		o := fileObject{file: name, epoch: r.man.Epoch, time: t}
		meta := map[string]string{fileDigestMeta: hex.EncodeToString(f.sum[:])}
		if _, err := p.store.putMeta(ctx, o.name(), bytes.NewReader(f.data), int64(len(f.data)), condition{}, meta); err != nil {
			return err
		}
		p.files[name] = f.sum
		r.updateStats(func(s *Stats) {
			s.Uploads++
			s.UploadBytes += int64(len(f.data))
		})
	}
	return nil
}

// shipLog uploads the bytes of p's log of generation gen up to durable
// not shipped yet (all of them when the generation is new), durable at t.
// It returns blazedb.ErrGenerationGone, unwrapped, when a compaction
// replaced the log as it was read. r.shipMu is held.
func (r *Replicator) shipLog(ctx context.Context, p *part, db *blazedb.DB, gen uint64, durable int64, t time.Time) error {
	if gen != p.gen || p.shipped < 0 {
		p.gen, p.shipped = gen, -1
		if p.root {
			r.updateStats(func(s *Stats) { s.Generation, s.Shipped = gen, 0 })
		}
	}
	start := max(p.shipped, 0)
	if durable <= start {
		return nil
	}
	// The digest of bytes 0 to durable goes with the object: the bytes
	// are read twice, once for it (it is sent before them) and once to
	// upload.
	var digest hash.Cloner = sha256.New().(hash.Cloner)
	if start > 0 {
		var err error
		if digest, err = p.digest.Clone(); err != nil {
			return fmt.Errorf("replica: %w", err)
		}
	}
	if err := hashLog(db, gen, start, durable, digest); err != nil {
		if errors.Is(err, blazedb.ErrGenerationGone) {
			p.shipped = -1
			return blazedb.ErrGenerationGone
		}
		return fmt.Errorf("replica: read the log: %w", err)
	}
	o := logObject{epoch: r.man.Epoch, gen: gen, start: start, end: durable, time: t}
	lr := &logReader{db: db, gen: gen, off: start, end: durable}
	meta := map[string]string{logDigestMeta: hex.EncodeToString(digest.Sum(nil))}
	if _, err := p.store.putMeta(ctx, o.name(), lr, durable-start, condition{}, meta); err != nil {
		if errors.Is(lr.err, blazedb.ErrGenerationGone) {
			p.shipped = -1 // the new log is copied whole
			return blazedb.ErrGenerationGone
		}
		return err
	}
	p.shipped, p.digest = durable, digest
	r.updateStats(func(s *Stats) {
		if p.root {
			s.Shipped = durable
		}
		s.Uploads++
		s.UploadBytes += durable - start
		if start == 0 {
			s.FullCopies++
		}
	})
	if start == 0 && r.conf.Retention > 0 {
		n, err := prune(ctx, p.store, r.man, t.Add(-r.conf.Retention), !p.root)
		r.updateStats(func(s *Stats) { s.Pruned += int64(n) })
		if err != nil {
			return fmt.Errorf("replica: retention: %w", err)
		}
	}
	return nil
}

func (r *Replicator) updateStats(f func(*Stats)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.stats)
}

type worldFile struct {
	data []byte
	sum  [sha256.Size]byte
}

// readFiles reads the shipped files in dir that exist. Each is replaced
// by rename, so a read sees one whole version.
func (r *Replicator) readFiles(dir string) (map[string]worldFile, error) {
	out := map[string]worldFile{}
	for _, name := range shippedFiles {
		b, err := vfs.ReadFile(r.conf.FS, filepath.Join(dir, filePath(name)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("replica: %w", err)
		}
		out[name] = worldFile{data: b, sum: sha256.Sum256(b)}
	}
	return out, nil
}

// logReader reads chunks.dat of one generation from off to end through
// the engine.
type logReader struct {
	db       *blazedb.DB
	gen      uint64
	off, end int64
	err      error // the engine's, kept: the client may not wrap it
}

func (lr *logReader) Read(p []byte) (int, error) {
	if lr.off >= lr.end {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), lr.end-lr.off, 1<<20)]
	if err := lr.db.ReadLogAt(lr.gen, p, lr.off); err != nil {
		lr.err = err
		return 0, err
	}
	lr.off += int64(len(p))
	return len(p), nil
}
