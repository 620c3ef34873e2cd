package replica

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"time"

	"github.com/blazeworld/blaze/blazedb"
)

// A writer starting on a replica carries on from the log shipped before
// rather than copying it whole, when its own log begins with it: the same
// generation (each compaction starts a new one), at least as long, and the
// SHA-256 of its bytes 0 to END, computed from the local log, what the
// last object of the replica's chain says (logDigestMeta). Each log object
// carries the digest of its log's whole prefix, not only of its own
// bytes, so that one comparison covers every byte shipped before. A log
// that differs (its tail lost to a power cut and written again
// differently, another copy of the world) is copied whole, as before.

// logDigestMeta is the user metadata (x-amz-meta-blaze-log-sha256) of a
// log object: the SHA-256, in hexadecimal, of bytes 0 to END of its log.
// fileDigestMeta is a world file object's: the SHA-256 of its bytes.
const (
	logDigestMeta  = "blaze-log-sha256"
	fileDigestMeta = "blaze-file-sha256"
)

// resume sets p to carry on from the replica's log of generation gen when
// the local log, durable to durable, begins with it (else it leaves p to
// copy the log whole), and marks shipped each of files the replica's
// newest copy of is. r.shipMu is held.
func (r *Replicator) resume(ctx context.Context, p *part, db *blazedb.DB, gen uint64, durable int64, files map[string]worldFile) error {
	if err := r.resumeFiles(ctx, p, files); err != nil {
		return err
	}
	return r.resumeLog(ctx, p, db, gen, durable)
}

// resumeFiles marks shipped each of files whose newest copy in the
// replica (its digest, fileDigestMeta) is what it holds now.
func (r *Replicator) resumeFiles(ctx context.Context, p *part, files map[string]worldFile) error {
	names, err := p.store.list(ctx, fileDir)
	if err != nil {
		return err
	}
	valid := validIn(r.man, time.Time{})
	newest := map[string]fileObject{}
	for _, n := range names {
		o, ok := parseFileObject(n)
		if !ok {
			return fmt.Errorf("%w: %s is not a world file object's name", ErrCorrupt, n)
		}
		if cur, ok := newest[o.file]; valid(o.epoch, o.time) && (!ok || o.time.After(cur.time)) {
			newest[o.file] = o
		}
	}
	for name, o := range newest {
		f, ok := files[name]
		if !ok {
			continue
		}
		meta, err := p.store.meta(ctx, o.name())
		if err != nil {
			return err
		}
		if meta[fileDigestMeta] == hex.EncodeToString(f.sum[:]) {
			p.files[name] = f.sum
		}
	}
	return nil
}

// resumeLog is resume's part for the log.
func (r *Replicator) resumeLog(ctx context.Context, p *part, db *blazedb.DB, gen uint64, durable int64) error {
	names, err := p.store.list(ctx, logDir)
	if err != nil {
		return err
	}
	valid := validIn(r.man, time.Time{})
	var logs []logObject
	var base logObject
	found := false
	for _, n := range names {
		o, ok := parseLogObject(n)
		if !ok {
			return fmt.Errorf("%w: %s is not a log object's name", ErrCorrupt, n)
		}
		if o.gen != gen || !valid(o.epoch, o.time) {
			continue
		}
		logs = append(logs, o)
		if o.start == 0 && (!found || o.epoch > base.epoch) {
			base, found = o, true
		}
	}
	if !found {
		return nil
	}
	chain, end := chainFrom(logs, base)
	if end > durable {
		return nil // the replica holds more than this log: not this log
	}
	meta, err := p.store.meta(ctx, chain[len(chain)-1].name())
	if err != nil {
		return err
	}
	want := meta[logDigestMeta]
	if want == "" {
		return nil // shipped without a digest
	}
	digest := sha256.New().(hash.Cloner)
	if err := hashLog(db, gen, 0, end, digest); errors.Is(err, blazedb.ErrGenerationGone) {
		return nil // compacted meanwhile: the new log is copied whole
	} else if err != nil {
		return fmt.Errorf("replica: read the log: %w", err)
	}
	if hex.EncodeToString(digest.Sum(nil)) != want {
		r.conf.Logger.Warn("replica: the replica's log differs from this world's: copying it whole", "replica", p.store.String(), "bytes", end)
		return nil
	}
	p.gen, p.shipped, p.digest = gen, end, digest
	r.updateStats(func(s *Stats) {
		s.Resumed++
		if p.root {
			s.Generation, s.Shipped = gen, end
		}
	})
	return nil
}

// chainFrom returns the objects that make a log from the whole copy base
// on, in order, each from where the last left off, and where the last
// ends. Objects of base's generation count from base's epoch on: a later
// writer that carried on from base's log (resume) ships its bytes in its
// own epoch. At each step the latest epoch's object wins, and the chain
// never goes back to an earlier epoch, so that a fenced writer's late
// objects are not joined to the bytes of the writer that took over; within
// an epoch the one reaching furthest does (a retried upload may have left
// two that begin alike).
func chainFrom(logs []logObject, base logObject) ([]logObject, int64) {
	var chain []logObject
	pos, epoch := int64(0), base.epoch
	for {
		var next *logObject
		for i, o := range logs {
			if inChain(o, base, epoch) && o.start <= pos && o.end > pos &&
				(next == nil || o.epoch > next.epoch || o.epoch == next.epoch && o.end > next.end) {
				next = &logs[i]
			}
		}
		if next == nil {
			return chain, pos
		}
		chain = append(chain, *next)
		pos, epoch = next.end, next.epoch
	}
}

// inChain says whether o may be part of the log whose whole copy is base,
// from a point the chain reached in epoch on.
func inChain(o, base logObject, epoch uint64) bool {
	return o.gen == base.gen && o.epoch >= epoch
}

// hashLog writes bytes start to end of the log of generation gen to h.
func hashLog(db *blazedb.DB, gen uint64, start, end int64, h hash.Hash) error {
	buf := make([]byte, min(end-start, 64<<10))
	for off := start; off < end; {
		p := buf[:min(int64(len(buf)), end-off)]
		if err := db.ReadLogAt(gen, p, off); err != nil {
			return err
		}
		h.Write(p)
		off += int64(len(p))
	}
	return nil
}
