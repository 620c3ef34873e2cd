package blazedb

import (
	"github.com/blazeworld/blaze/blazedb/vfs"
)

// The files of a database directory. Anything else in the directory makes
// Open refuse it (ErrNotBlaze), so Blaze never writes over another program's
// data.
const (
	logName     = "chunks.dat"
	indexName   = "index.dat"
	lockName    = "LOCK"
	tmpSuffix   = vfs.TempSuffix
	compactName = "chunks.dat.compact" // compaction output before its rename
)

func isOurFile(name string) bool {
	switch name {
	case logName, indexName, lockName, logName + tmpSuffix, indexName + tmpSuffix, compactName:
		return true
	}
	return false
}

// replaceFile atomically replaces dir/name with data (vfs.ReplaceFile).
func replaceFile(fs vfs.FS, dir, name string, data []byte) error {
	return vfs.ReplaceFile(fs, dir, name, data)
}

func readAll(fs vfs.FS, path string) ([]byte, error) { return vfs.ReadFile(fs, path) }
