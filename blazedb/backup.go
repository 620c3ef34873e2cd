package blazedb

import (
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// A backup is a copy of an open database as it was at one moment, made
// while reads and writes go on: what a server owner needs to back up a
// running world, which copying the directory does not give (a compaction
// may replace chunks.dat between the copies of chunks.dat and index.dat,
// and the copy of a log being appended to may end inside a record).
//
// The moment is taken as compaction takes it (snapshot): under writeMu, the
// index is cloned and the log's length read, so the backup holds every
// write that returned before Backup was called and none that began after
// the snapshot. The log up to that length is then copied from the open
// file (its unsynced bytes too: the copy is synced, so nothing the
// database acknowledged is missing from a completed backup) with index.dat
// for it, into a directory beside the destination that is renamed to it
// at the end (vfs.BuildDir). After a crash the destination is either
// absent or a whole backup; the directory left beside it is never the
// only copy of anything.
//
// Backup holds compactMu throughout, so no compaction replaces the log
// while it is copied (a compaction due meanwhile waits), and it holds a
// reference to the log so Close waits for it too; Close asks it to stop.

// backupCopySize is how much of the log one read copies.
const backupCopySize = 1 << 20

// Backup writes a copy of the database as it is now into dir, which must
// not exist (an error wrapping fs.ErrExist says it does) and must lie
// outside the database's directory (fs.ErrInvalid). The copy is a
// database of its own, opened with Open; it holds every write that returned
// before Backup was called. Reads and writes go on meanwhile; a compaction
// waits for the backup. After a crash, dir is either absent or complete.
// A failed backup removes what it wrote; one cut short by a crash leaves
// dir + vfs.BuildSuffix, which Backup then refuses to overwrite, so that it
// is deleted by hand.
func (db *DB) Backup(dir string) error {
	if inside(dir, db.dir) {
		// The database would refuse to open with it there.
		return fmt.Errorf("backup to %s: %w: it is inside the database's directory %s", dir, fs.ErrInvalid, db.dir)
	}
	db.compactMu.Lock() // also one backup at a time
	defer db.compactMu.Unlock()
	if err := vfs.BuildDir(db.fs, dir, vfs.BuildSuffix, db.backupInto); err != nil {
		return fmt.Errorf("backup to %s: %w", dir, err)
	}
	return nil
}

// inside reports whether path is dir or lies under it.
func inside(path, dir string) bool {
	path, err1 := filepath.Abs(path)
	dir, err2 := filepath.Abs(dir)
	rel, err3 := filepath.Rel(dir, path)
	return err1 == nil && err2 == nil && err3 == nil && filepath.IsLocal(rel)
}

// backupInto writes the backup into the empty directory dir. The caller
// holds compactMu.
func (db *DB) backupInto(dir string) error {
	l, ix, end, seq, err := db.snapshot()
	if err != nil {
		return err
	}
	defer l.refs.Done()
	return db.writeBackup(l, ix, indexMeta{generation: l.gen, covered: end, nextSeq: seq}, dir)
}

// writeBackup copies l up to meta.covered into dir as its log, with ix as
// its index.dat, both synced.
func (db *DB) writeBackup(l *logFile, ix *index, meta indexMeta, dir string) error {
	name := filepath.Join(dir, logName)
	f, err := db.fs.Create(name)
	if err != nil {
		return err
	}
	buf := make([]byte, backupCopySize)
	for off := int64(0); off < meta.covered; {
		if db.stopping.Load() {
			f.Close()
			return ErrClosed
		}
		n := int(min(int64(len(buf)), meta.covered-off))
		if _, err := l.f.ReadAt(buf[:n], off); err != nil {
			f.Close()
			return fmt.Errorf("read %s at %d: %w", logName, off, err)
		}
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", name, err)
		}
		off += int64(n)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := vfs.ReplaceFile(db.fs, dir, indexName, encodeIndex(ix, meta)); err != nil {
		return fmt.Errorf("write %s: %w", indexName, err)
	}
	return nil // ReplaceFile synced dir
}
