package blazedb

import (
	"slices"

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

// Exists reports whether dir holds a database (its log), through
// opts.FS: for tools that must not make a new database where Open would.
func Exists(dir string, opts Options) bool {
	o, err := opts.withDefaults()
	return err == nil && exists(o.FS, dir)
}

func exists(fs vfs.FS, dir string) bool {
	names, err := fs.List(dir)
	return err == nil && slices.Contains(names, logName)
}
