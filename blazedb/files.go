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
