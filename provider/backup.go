package provider

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// backupTempSuffix is appended to a backup's directory while it is written.
const backupTempSuffix = ".backup-tmp"

// Backup writes a copy of the world as it is now into dir, which must not
// exist (an error wrapping fs.ErrExist says it does), while the server goes
// on: the engine's files (blazedb.DB.Backup: every column and player spawn
// stored before the call, none stored after it returned its snapshot),
// level.dat and levelname.txt as last saved, and dictionary.dat with the
// block dictionary entries persisted before the engine's snapshot. The copy
// is a world of its own, opened with Config.Open or set up as a server's
// world by copying the directory.
//
// It is written into dir + ".backup-tmp" and renamed to dir at the end, so
// after a crash dir is either absent or a whole world. A failed backup
// removes what it wrote; one cut short by a crash leaves the temporary
// directory, which Backup then refuses to overwrite, so that it is deleted
// by hand. One Backup of a DB runs at a time.
func (db *DB) Backup(dir string) error {
	if err := db.backup(filepath.Clean(dir)); err != nil {
		return fmt.Errorf("backup to %s: %w", dir, err)
	}
	return nil
}

func (db *DB) backup(dir string) error {
	db.backupMu.Lock()
	defer db.backupMu.Unlock()
	if db.closed.Load() {
		return ErrClosed
	}
	fsys, tmp := db.conf.FS, dir+backupTempSuffix
	for _, p := range []string{dir, tmp} {
		if _, err := fsys.List(p); err == nil {
			return fmt.Errorf("%s: %w", p, fs.ErrExist)
		}
	}
	// Taken before the engine's snapshot: every entry here is in it.
	db.dict.mu.Lock()
	dict := db.dict.persistedEntries()
	db.dict.mu.Unlock()

	if err := fsys.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if err := db.writeBackup(tmp, dict); err != nil {
		if rerr := vfs.RemoveAll(fsys, tmp); rerr != nil {
			err = errors.Join(err, fmt.Errorf("remove %s: %w", tmp, rerr))
		}
		return err
	}
	if err := fsys.Rename(tmp, dir); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(dir))
}

// writeBackup writes the world's files into dir. Each file is replaced
// atomically, which syncs dir.
func (db *DB) writeBackup(dir string, dict map[int32][]byte) error {
	if err := db.eng.Backup(filepath.Join(dir, engineDir)); err != nil {
		return err
	}
	if len(dict) > 0 {
		if err := vfs.ReplaceFile(db.conf.FS, dir, dictCopyName, appendDictCopy(nil, dict)); err != nil {
			return fmt.Errorf("write %s: %w", dictCopyName, err)
		}
	}
	if db.conf.NoLevelDat {
		return db.conf.FS.SyncDir(dir)
	}
	db.setMu.Lock()
	defer db.setMu.Unlock()
	return writeLevelDat(db.conf.FS, dir, db.ldat)
}
