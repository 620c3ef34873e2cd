package blazedb

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// The header of chunks.dat is kept twice (record.go): Open reads whichever
// copy decodes. When neither does (a zeroed start of the file), Repair
// rebuilds it from what the rest of the directory still shows:
//
//   - that the file is a Blaze log at all: valid records follow the
//     header, and the directory holds only Blaze's files;
//   - the generation, which ties index.dat to this log: index.dat's, if
//     every entry it holds points at a valid record of its key in this
//     file (a stale index.dat, of another generation, does not), else a
//     new one, and index.dat is then not used;
//   - the base sequence: past every sequence number in the log and
//     index.dat's next one;
//   - the version: the current one, the only one a build reads (a log of
//     a version no release wrote is refused, ErrOldVersion, but one whose
//     header is destroyed cannot say so, and is read as the current
//     version: its records are laid out the same).
//
// Open never does this itself: it would be guessing at what an
// unreadable header said. Repair is asked to mend, reports what it
// rebuilt, and compacts, which writes a new header and copy.

// recordsFollowHeader reports whether a valid record starts where the
// header's copy or, should the copy be damaged too, the first record would:
// evidence that a file whose header does not decode is a Blaze log.
func recordsFollowHeader(f vfs.File) bool {
	end, err := f.Size()
	if err != nil {
		return false
	}
	b := make([]byte, headerCopySize+recHeaderSize)
	for _, off := range []int64{fileHeaderSize, fileHeaderSize + headerCopySize} {
		n, _ := f.ReadAt(b[:recHeaderSize], off)
		if n < recHeaderSize {
			return false
		}
		size, err := checkHeader(b[:recHeaderSize], true)
		if err != nil || off+int64(size) > end {
			continue
		}
		if cap(b) < size {
			b = make([]byte, size)
		}
		if n, _ := f.ReadAt(b[:size], off); n == size {
			if _, _, err := decodeRecord(b[:size], true); err == nil {
				return true
			}
		}
	}
	return false
}

// rebuildHeader writes a new header for the log in dir when neither the
// header nor its copy decodes and the file is evidently a Blaze log. It
// returns what it did ("" when the header needs no rebuilding). o has its
// defaults.
func rebuildHeader(dir string, o Options) (string, error) {
	fs := o.FS
	names, err := fs.List(dir)
	if err != nil {
		return "", err
	}
	if !slices.Contains(names, logName) {
		return "", nil // Open reports it (or puts an aside log back)
	}
	for _, n := range names {
		if !isOurFile(n) {
			return "", nil // Open refuses the directory
		}
	}
	path := filepath.Join(dir, logName)
	f, err := fs.Open(path)
	if err != nil {
		return "", err
	}
	_, _, herr := readFileHeader(f)
	if herr == nil || !(errors.Is(herr, ErrCorrupt) || errors.Is(herr, ErrNotBlaze)) {
		f.Close()
		return "", nil
	}
	lock, err := fs.Lock(filepath.Join(dir, lockName), true)
	if err != nil {
		f.Close()
		if errors.Is(err, vfs.ErrLocked) {
			return "", fmt.Errorf("%w (%v)", ErrLocked, err)
		}
		return "", err
	}
	defer lock.Close()
	size, err := f.Size()
	if err != nil {
		f.Close()
		return "", err
	}
	res, err := scanLog(f, fileHeaderSize, size, false, func(int64, *record) error { return nil })
	if err != nil {
		f.Close()
		return "", err
	}
	if res.records == 0 {
		f.Close()
		return "", nil // nothing shows it is a Blaze log: Open reports why not
	}
	h := fileHeader{generation: rand.Uint64() >> 1, baseSeq: res.maxSeq + 1}
	how := "a new generation (index.dat is not used)"
	if ix, meta, err := decodeIndexFile(fs, dir); err == nil && meta.covered <= size && indexFits(f, ix, res.corrupt) {
		h.generation, h.baseSeq = meta.generation, max(h.baseSeq, meta.nextSeq)
		how = "the generation index.dat names, every entry of which it holds"
	}
	f.Close()
	w, err := fs.OpenReadWrite(path)
	if err != nil {
		return "", err
	}
	defer w.Close()
	if _, err := w.WriteAt(h.encode(), 0); err != nil {
		return "", fmt.Errorf("rebuild %s header: %w", logName, err)
	}
	if err := w.Sync(); err != nil {
		return "", fmt.Errorf("rebuild %s header: sync: %w", logName, err)
	}
	return fmt.Sprintf("neither the header of %s nor its copy decodes (%v): rebuilt from its %d records, with %s", logName, herr, res.records, how), nil
}

// decodeIndexFile reads and decodes index.dat in dir.
func decodeIndexFile(fs vfs.FS, dir string) (*index, indexMeta, error) {
	b, err := vfs.ReadFile(fs, filepath.Join(dir, indexName))
	if err != nil {
		return nil, indexMeta{}, err
	}
	return decodeIndex(b)
}

// indexFits reports whether every entry of ix is a valid record of its
// key in f, or lies in one of the damaged stretches a scan of f found: the
// damage explains those, where an index.dat of another generation points
// at bytes that are not its records throughout the log.
func indexFits(f vfs.File, ix *index, damaged []CorruptRegion) bool {
	inDamage := func(e entry) bool {
		return slices.ContainsFunc(damaged, func(c CorruptRegion) bool {
			return e.off < c.Offset+c.Length && c.Offset < e.off+int64(e.size)
		})
	}
	ok := true
	var buf []byte
	ix.each(func(k rkey, e entry) bool {
		buf = slices.Grow(buf[:0], int(e.size))[:e.size]
		if n, _ := f.ReadAt(buf, e.off); n < len(buf) {
			ok = false
			return false
		}
		r, _, err := decodeRecord(buf, buf[16]&0x80 == 0)
		if err != nil {
			ok = inDamage(e)
			return ok
		}
		if r.kind == kindBody { // an alias (alias.go): the key is the list's
			ok = !k.named && r.vsum == e.vsum
			return ok
		}
		got, err := parseKey(r.key)
		ok = err == nil && got == k
		return ok
	})
	return ok
}
func (db *DB) readHeader() (fileHeader, error) {
	f, err := db.fs.Open(db.path(logName))
	if err != nil {
		return fileHeader{}, err
	}
	defer f.Close()
	h, _, err := readFileHeader(f)
	return h, err
}

// headerDamage says which copy of the log's header is damaged, and how.
type headerDamage struct {
	header bool   // the header at offset 0 (read from its copy); else the copy
	reason string // "" when neither is
}

// readFileHeader reads and decodes the header of the log f. When it does
// not decode but its copy does, the copy's is returned,
// and damage says so; damage also reports a damaged copy behind a header
// that decodes. A file too short to hold a header is for decodeFileHeader
// to judge; a failed read is returned as such, not taken for damage. A
// header that does not decode and has no copy gives its own error: a
// foreign file is ErrNotBlaze, a newer format (whose copy, if any, says
// so too) ErrVersion, a version no release wrote ErrOldVersion.
func readFileHeader(f vfs.File) (h fileHeader, damage headerDamage, err error) {
	b := make([]byte, fileHeaderSize+headerCopySize)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fileHeader{}, damage, fmt.Errorf("read %s header: %w", logName, err)
	}
	b = b[:n]
	h, herr := decodeFileHeader(b[:min(n, fileHeaderSize)])
	var rest []byte
	if n > fileHeaderSize {
		rest = b[fileHeaderSize:]
	}
	if herr == nil {
		if c, cerr := decodeHeaderCopy(rest); cerr != nil {
			damage.reason = cerr.Error()
		} else if c != h {
			damage.reason = fmt.Sprintf("the header copy at offset %d differs from the header", fileHeaderSize)
		}
		return h, damage, nil
	}
	if errors.Is(herr, ErrOldVersion) {
		// An intact header (its checksum is checked before an old version
		// is reported, unlike a newer one, whose layout may differ) of a
		// version no release wrote: whatever follows it is no copy of a
		// current header.
		return fileHeader{}, damage, herr
	}
	c, cerr := decodeHeaderCopy(rest)
	if cerr == nil {
		return c, headerDamage{header: true, reason: herr.Error()}, nil
	}
	if errors.Is(herr, ErrNotBlaze) && recordsFollowHeader(f) {
		// Not another program's file: Blaze's records follow.
		return fileHeader{}, damage, corruptf(logName, 0, "neither the header nor its copy decodes, but records follow (Repair rebuilds it): %v", herr)
	}
	return fileHeader{}, damage, herr
}

// removeLeftovers deletes temporary files of an interrupted index write,
// creation or compaction, and old logs renamed aside (files.go). None of
// them is ever the only copy of anything.

// mendHeader reports a damaged header or header copy and, in a read-write
// open, rewrites a damaged header from its copy (and syncs it). The copy
// is never rewritten in place: a damaged one goes with the next
// compaction, as any damaged record does. A crash while the header is
// rewritten leaves the copy to read it from again.
func (db *DB) mendHeader(f vfs.File, h fileHeader, damage headerDamage) error {
	rec := &db.recovery
	if !damage.header {
		rec.HeaderDamage = "the header copy is damaged: " + damage.reason
		db.opts.Logger.Warn("blazedb: the copy of the log's header is damaged; the header is intact, and the next compaction writes a new copy",
			"dir", db.dir, "reason", damage.reason)
		return nil
	}
	rec.HeaderDamage = "the header is damaged, and was read from its copy: " + damage.reason
	if db.opts.ReadOnly {
		db.opts.Logger.Warn("blazedb: the log's header is damaged; it was read from its copy (read-only open: not rewritten)",
			"dir", db.dir, "reason", damage.reason)
		return nil
	}
	db.opts.Logger.Warn("blazedb: the log's header is damaged; rewriting it from its copy", "dir", db.dir, "reason", damage.reason)
	if _, err := f.WriteAt(h.encode(), 0); err != nil {
		return fmt.Errorf("rewrite %s header from its copy: %w", logName, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("rewrite %s header from its copy: sync: %w", logName, err)
	}
	rec.HeaderRewritten = true
	return nil
}
