package blazedb

import (
	"fmt"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// The files of a database directory. Anything else in the directory makes
// Open refuse it (ErrNotBlaze), so Blaze never writes over another program's
// data.
const (
	logName     = "chunks.dat"
	indexName   = "index.dat"
	lockName    = "LOCK"
	tmpSuffix   = ".tmp"
	compactName = "chunks.dat.compact" // compaction output before its rename
)

func isOurFile(name string) bool {
	switch name {
	case logName, indexName, lockName, logName + tmpSuffix, indexName + tmpSuffix, compactName:
		return true
	}
	return false
}

// replaceFile atomically replaces dir/name with data: write a temporary
// file, fsync it, rename it over the old one, fsync the directory. After a
// crash at any point the file is either wholly old or wholly new.
func replaceFile(fs vfs.FS, dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+tmpSuffix)
	f, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	if err := fs.SyncDir(dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// readAll reads a whole file.
func readAll(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && int64(len(b)) != size {
		return nil, err
	}
	return b, nil
}
