package blazedb

import (
	"errors"
	"fmt"
	"io"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// A log that is gone: chunks.dat missing, or too short to hold its header
// (the header and its copy do not decode and nothing follows where they
// would be), while index.dat is there. index.dat is written only over a
// log whose header was made durable when the log was created (Open syncs
// the new log, header and copy, before anything else is written, and
// index.dat only ever later), so no crash leaves it without the log it
// describes: the log held what index.dat covers, durably, and all of it
// is lost. (A database deleted file by file, a segment's region or an
// overlay's old generation, is renamed away or no longer current first,
// and is never opened again, only removed.) Open treats this as the log cut to nothing but its header,
// which it rebuilds from index.dat (its generation and next sequence
// number), and reports it as any durable loss (recover.go): a read-write
// Open refuses with ErrDurableLoss, naming every key index.dat lists and
// changing nothing, unless Options.AcceptDurableLoss; then it writes the
// new log's header before index.dat goes, so that a crash in between
// leaves the loss to be reported again. A read-only Open reads the rebuilt
// header from memory and writes nothing. The generation is index.dat's, so
// what a user of the engine keeps beside it tied to the generation (the
// provider's dictionary.dat) still belongs with the log.
//
// Without index.dat, or with one that does not decode, Open does as
// before: a missing log is a database never created (a crash before the
// new log's rename was durable leaves none), and a short one is refused
// with ErrNotBlaze or ErrCorrupt, as nothing shows it is a Blaze log.

// goneLog is index.dat's evidence of a log that is gone.
type goneLog struct {
	ix     *index
	meta   indexMeta
	reason string // what is wrong with chunks.dat
}

// header is the rebuilt log's header, with its copy.
func (g *goneLog) header() []byte {
	return fileHeader{generation: g.meta.generation, baseSeq: g.meta.nextSeq}.encodeWithCopy()
}

// findGoneLog returns index.dat's evidence that the log, missing when
// headerErr is nil, or whose header does not decode for headerErr, is
// gone; nil when there is no such evidence (the log is longer than its
// header, or index.dat is missing or does not decode) or when headerErr is
// not the kind of error a short file gives.
func (db *DB) findGoneLog(headerErr error) *goneLog {
	reason := logName + " is missing"
	if headerErr != nil {
		if !errors.Is(headerErr, ErrNotBlaze) && !errors.Is(headerErr, ErrCorrupt) {
			return nil // a failed read, or a newer format
		}
		f, err := db.fs.Open(db.path(logName))
		if err != nil {
			return nil
		}
		size, err := f.Size()
		follow := err == nil && recordsFollowHeader(f)
		f.Close()
		if err != nil || size > fileHeaderSize+headerCopySize || follow {
			return nil // records may follow: Repair rebuilds the header from them
		}
		reason = fmt.Sprintf("%s is %d bytes, too short to hold its header (%v)", logName, size, headerErr)
		if size >= fileHeaderSize {
			reason = fmt.Sprintf("%s is %d bytes, and neither its header nor the header's copy decodes (%v): no record follows them", logName, size, headerErr)
		}
	}
	ix, meta, err := decodeIndexFile(db.fs, db.dir)
	if err != nil {
		return nil
	}
	return &goneLog{ix: ix, meta: meta, reason: reason}
}

// refuseGoneLog returns ErrDurableLoss for the gone log g, naming every
// key index.dat lists, as a read-write Open that does not accept the loss
// does. It changes nothing on disk.
func (db *DB) refuseGoneLog(g *goneLog) error {
	rec := &db.recovery
	rec.IndexProblem = g.problem()
	rec.LostBytes = g.meta.covered
	rec.Lost = lostKeys(g.ix, newIndex())
	return db.reportLoss(g.meta.covered)
}

// problem says why index.dat was not used.
func (g *goneLog) problem() string {
	return fmt.Sprintf("%s, but index.dat covers %d bytes of it, which were durable when it was written", g.reason, g.meta.covered)
}

// headerOnlyFile is the rebuilt log a read-only Open reads in place of a
// gone one: its header and copy, in memory. It refuses every write.
type headerOnlyFile struct{ b []byte }

var _ vfs.File = (*headerOnlyFile)(nil)

func (f *headerOnlyFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(f.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *headerOnlyFile) WriteAt([]byte, int64) (int, error) { return 0, ErrReadOnly }
func (f *headerOnlyFile) Sync() error                        { return ErrReadOnly }
func (f *headerOnlyFile) Truncate(int64) error               { return ErrReadOnly }
func (f *headerOnlyFile) Size() (int64, error)               { return int64(len(f.b)), nil }
func (f *headerOnlyFile) Close() error                       { return nil }
