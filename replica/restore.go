package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider"
	"github.com/minio/minio-go/v7"
)

// quiet takes the logs of the engine a restore opens to verify: an index
// rebuilt by a scan is what it expects.
var quiet = slog.New(slog.DiscardHandler)

// RestoreSuffix is the suffix a restore builds its directory under, renamed
// to the directory asked for when whole and verified.
const RestoreSuffix = ".restore-tmp"

// RestoreReport says what a restore rebuilt.
type RestoreReport struct {
	Epoch      uint64    // the writer's epoch the log came from
	Generation uint64    // the generation of chunks.dat rebuilt
	LogBytes   int64     // its length
	Objects    int       // objects read, world files included
	AsOf       time.Time // when the newest byte restored was durable
	// Scanned is how much of chunks.dat the verification's open replayed
	// by scanning: what follows what the shipped index.dat covers, all of
	// it without one.
	Scanned int64
	// Regions counts a segmented world's regions restored, each as its
	// root is; the fields above are the root's.
	Regions int
}

// Restore rebuilds into dir, which must not exist, the world its replica in
// store held at time at (the newest the replica holds when at is zero):
// chunks.dat from the newest whole copy shipped by then and the appended
// bytes shipped after it by then, and the world's files as shipped by
// then. A writer's objects count only until the next epoch began, so a
// writer fenced late adds nothing. The world is verified before dir
// appears: every record's checksums end to end (the engine opened
// read-only and checked) and nothing torn or missing; then it is given an
// edition of its own (provider.RenewEdition). After a crash, dir is absent
// or whole; dir+RestoreSuffix may be left, to delete. A time before the
// newest horizon the replica was pruned to fails with ErrNoReplica: the
// prune may have deleted what it needs (Prune).
func Restore(ctx context.Context, store *Store, dir string, at time.Time) (*RestoreReport, error) {
	m, _, err := readManifest(ctx, store)
	if errors.Is(err, errNotFound) {
		return nil, fmt.Errorf("%w at %s", ErrNoReplica, store)
	}
	if err != nil {
		return nil, err
	}
	rels, err := listRegions(ctx, store) // a plain world's: none
	if err != nil {
		return nil, err
	}
	pruned, err := prunedTo(ctx, store, rels)
	if err != nil {
		return nil, err
	}
	if !at.IsZero() && at.Before(pruned) {
		return nil, fmt.Errorf("%w at %s as at %v: it was pruned to %v", ErrNoReplica, store, at.UTC(), pruned)
	}
	plan, err := planRestore(ctx, store, m, at, time.Time{})
	if err != nil {
		return nil, err
	}
	err = vfs.BuildDir(vfs.Default, dir, RestoreSuffix, func(tmp string) error {
		if err := plan.build(ctx, store, tmp); err != nil {
			return err
		}
		regions, objects, err := restoreRegions(ctx, store, m, at, tmp, rels)
		plan.report.Regions = regions
		plan.report.Objects += objects
		if err != nil {
			return err
		}
		// A prune that began meanwhile may have deleted a region's copy,
		// which would read as a region made after at; its mark was written
		// before it deleted anything.
		if pruned, err := prunedTo(ctx, store, rels); err != nil {
			return err
		} else if !at.IsZero() && at.Before(pruned) {
			return fmt.Errorf("%w at %s as at %v: it was pruned to %v while restoring", ErrNoReplica, store, at.UTC(), pruned)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("replica: restore %s to %s: %w", store, dir, err)
	}
	return &plan.report, nil
}

// restorePlan lists the objects a restore reads.
type restorePlan struct {
	log    []logObject // in order, each from where the last left off
	files  []fileObject
	report RestoreReport
}

// planRestore chooses the objects under store that make the world (or
// region) as of at, of those shipped at from or later.
func planRestore(ctx context.Context, store *Store, m *manifest, at, from time.Time) (*restorePlan, error) {
	inTime := validIn(m, at)
	valid := func(epoch uint64, t time.Time) bool { return inTime(epoch, t) && !t.Before(from) }
	names, err := store.list(ctx, logDir)
	if err != nil {
		return nil, err
	}
	var logs []logObject
	for _, n := range names {
		o, ok := parseLogObject(n)
		if !ok {
			return nil, fmt.Errorf("%w: %s is not a log object's name", ErrCorrupt, n)
		}
		if valid(o.epoch, o.time) {
			logs = append(logs, o)
		}
	}
	// The newest whole copy: of the latest epoch, then generation.
	var base *logObject
	for i, o := range logs {
		if o.start == 0 && (base == nil || o.epoch > base.epoch || o.epoch == base.epoch && o.gen > base.gen) {
			base = &logs[i]
		}
	}
	if base == nil {
		if at.IsZero() {
			return nil, fmt.Errorf("%w: %s holds no copy of chunks.dat", ErrNoReplica, store)
		}
		return nil, fmt.Errorf("%w: %s holds no copy of chunks.dat as early as %v", ErrNoReplica, store, at.Format(time.RFC3339Nano))
	}
	p := &restorePlan{report: RestoreReport{Epoch: base.epoch, Generation: base.gen}}
	p.log, p.report.LogBytes = chainFrom(logs, *base)
	for _, o := range p.log {
		if o.time.After(p.report.AsOf) {
			p.report.AsOf = o.time
		}
	}
	// A later object of this log that does not join on is a gap: an
	// object missing from the middle.
	last := base.epoch
	if len(p.log) > 0 {
		last = p.log[len(p.log)-1].epoch
	}
	for _, o := range logs {
		if inChain(o, *base, last) && o.start > p.report.LogBytes {
			return nil, fmt.Errorf("%w: %s lacks bytes %d to %d of chunks.dat (generation %d, epoch %d)", ErrCorrupt, store, p.report.LogBytes, o.start, o.gen, o.epoch)
		}
	}
	names, err = store.list(ctx, fileDir)
	if err != nil {
		return nil, err
	}
	newest := map[string]fileObject{}
	for _, n := range names {
		o, ok := parseFileObject(n)
		if !ok {
			return nil, fmt.Errorf("%w: %s is not a world file object's name", ErrCorrupt, n)
		}
		if !slices.Contains(shippedFiles, o.file) {
			return nil, fmt.Errorf("%w: %s names a file Blaze does not ship", ErrCorrupt, n)
		}
		if cur, ok := newest[o.file]; valid(o.epoch, o.time) && (!ok || o.time.After(cur.time)) {
			newest[o.file] = o
		}
	}
	for _, name := range shippedFiles {
		if o, ok := newest[name]; ok {
			p.files = append(p.files, o)
		}
	}
	p.report.Objects = len(p.log) + len(p.files)
	return p, nil
}

// validIn says whether an object of epoch shipped at t counts in a
// restore at at: an epoch's objects count until the next epoch began.
func validIn(m *manifest, at time.Time) func(epoch uint64, t time.Time) bool {
	until := map[uint64]time.Time{}
	for i, e := range m.Epochs {
		until[e.Epoch] = time.Time{}
		if i+1 < len(m.Epochs) {
			until[e.Epoch] = m.Epochs[i+1].Began
		}
	}
	return func(epoch uint64, t time.Time) bool {
		end, ok := until[epoch]
		return ok && (at.IsZero() || !t.After(at)) && (end.IsZero() || t.Before(end))
	}
}

// build writes the planned world into the empty directory tmp and verifies
// it.
func (p *restorePlan) build(ctx context.Context, store *Store, tmp string) error {
	engine := filepath.Join(tmp, provider.EngineDir)
	if err := os.Mkdir(engine, 0o755); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(engine, "chunks.dat"))
	if err != nil {
		return err
	}
	pos := int64(0)
	for _, o := range p.log {
		if err := store.copyRange(ctx, o.name(), log, pos-o.start, o.end-o.start); err != nil {
			log.Close()
			return err
		}
		pos = o.end
	}
	if err := errors.Join(log.Sync(), log.Close()); err != nil {
		return err
	}
	for _, o := range p.files {
		f, err := os.Create(filepath.Join(tmp, filePath(o.file)))
		if err != nil {
			return err
		}
		if err := store.copyRange(ctx, o.name(), f, 0, -1); err != nil {
			f.Close()
			return err
		}
		if err := errors.Join(f.Sync(), f.Close()); err != nil {
			return err
		}
	}
	scanned, err := verify(engine)
	if err != nil {
		return err
	}
	p.report.Scanned = scanned
	if err := provider.RenewEdition(tmp, provider.Config{Log: quiet}); err != nil {
		return fmt.Errorf("renew the restored world's edition: %w", err)
	}
	return vfs.Default.SyncDir(engine)
}

// verify opens the engine in dir read-only and checks every record: the
// log must open with nothing torn, lost or damaged. It returns how much of
// the log the open replayed by scanning.
func verify(dir string) (int64, error) {
	db, err := blazedb.Open(dir, blazedb.Options{ReadOnly: true, CacheBytes: -1, Logger: quiet})
	if err != nil {
		return 0, fmt.Errorf("%w: open the restored log: %v", ErrCorrupt, err)
	}
	defer db.Close()
	rec := db.Recovery()
	if rec.TornBytes > 0 || rec.LostBytes > 0 || len(rec.Corrupt) > 0 {
		return 0, fmt.Errorf("%w: the restored log does not open whole: %d bytes torn, %d lost, %d damaged stretches", ErrCorrupt, rec.TornBytes, rec.LostBytes, len(rec.Corrupt))
	}
	if err := db.Check(); err != nil {
		return 0, fmt.Errorf("%w: check of the restored log: %v", ErrCorrupt, err)
	}
	return rec.ScannedBytes, nil
}

// copyRange writes the object name, from byte skip on, to w; its length
// must be want (when not negative).
func (s *Store) copyRange(ctx context.Context, name string, w io.Writer, skip, want int64) error {
	obj, err := s.c.GetObject(ctx, s.bucket, s.prefix+name, minio.GetObjectOptions{})
	if err != nil {
		return s.classify("get", name, err)
	}
	defer obj.Close()
	info, err := obj.Stat()
	if err != nil {
		return s.classify("get", name, err)
	}
	if want >= 0 && info.Size != want {
		return fmt.Errorf("%w: %s holds %d bytes, its name says %d", ErrCorrupt, name, info.Size, want)
	}
	if _, err := io.CopyN(io.Discard, obj, skip); err != nil {
		return s.classify("get", name, err)
	}
	n, err := io.Copy(w, obj)
	if err != nil {
		return s.classify("get", name, err)
	}
	if n != info.Size-skip {
		return fmt.Errorf("%w: %s: read %d bytes of %d", ErrCorrupt, name, n+skip, info.Size)
	}
	return nil
}
