package provider

import (
	"fmt"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// Backup writes a copy of the world as it is now into dir, which must not
// exist (an error wrapping fs.ErrExist says it does), while the server goes
// on: the engine's files (blazedb.DB.Backup: every column and player spawn
// stored before the call, none stored after its snapshot), level.dat and
// levelname.txt as last saved, and dictionary.dat with the block dictionary
// entries persisted before the engine's snapshot. The copy is a world of
// its own, opened with Config.Open or served as a server's world. It has an
// Edition of its own: the world goes on writing under its edition after the
// copy is taken, so the copy's columns are not those that edition names.
//
// It is written into dir + vfs.BuildSuffix and renamed to dir at the end
// (vfs.BuildDir), so after a crash dir is either absent or a whole world.
// A failed backup removes what it wrote; one cut short by a crash leaves
// the temporary directory, which Backup then refuses to overwrite, so that
// it is deleted by hand. One Backup of a DB runs at a time.
func (db *DB) Backup(dir string) error {
	db.backupMu.Lock()
	defer db.backupMu.Unlock()
	if db.closed.Load() {
		return fmt.Errorf("backup to %s: %w", dir, ErrClosed)
	}
	if err := db.flushStores(); err != nil {
		return fmt.Errorf("backup to %s: %w", dir, err)
	}
	// Taken before the engine's snapshot: every entry here is in it.
	db.dict.mu.Lock()
	dict := db.dict.persistedEntries()
	db.dict.mu.Unlock()
	// The backup's log is at this generation or, past a compaction
	// meanwhile, a later one: its copy is of the same lineage.
	gen := db.eng.Stats().Generation
	err := vfs.BuildDir(db.conf.FS, dir, vfs.BuildSuffix, func(tmp string) error { return db.writeBackup(tmp, gen, dict) })
	if err != nil {
		return fmt.Errorf("backup to %s: %w", dir, err)
	}
	return nil
}

// writeBackup writes the world's files into dir. Each file is replaced
// atomically, which syncs dir.
func (db *DB) writeBackup(dir string, gen uint64, dict map[int32][]byte) error {
	if err := db.eng.Backup(filepath.Join(dir, engineDir)); err != nil {
		return err
	}
	if err := renewEdition(filepath.Join(dir, engineDir), db.conf.engineOptions()); err != nil {
		return fmt.Errorf("renew the copy's edition: %w", err)
	}
	if len(dict) > 0 {
		if err := vfs.ReplaceFile(db.conf.FS, dir, dictCopyName, appendDictCopy(nil, gen, dict)); err != nil {
			return fmt.Errorf("write %s: %w", dictCopyName, err)
		}
	}
	if db.conf.NoLevelDat {
		return db.conf.FS.SyncDir(dir)
	}
	// A copy, written outside setMu: the backup's files are its own, and
	// SaveSettings need not wait for their fsyncs. Settings change only
	// scalar fields of ldat (PutSettings, LastPlayed), so the copy shares
	// nothing that is written.
	db.setMu.Lock()
	ldat := *db.ldat
	db.setMu.Unlock()
	return writeLevelDat(db.conf.FS, dir, &ldat)
}
