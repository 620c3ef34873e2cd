package blazedb

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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
	asidePrefix = "chunks.dat.old-"    // then its generation, 16 hex digits
)

// Where a rename cannot replace an open file (Windows: see
// vfs.FS.RenameReplacesOpen), compaction first renames the open chunks.dat
// aside, to asideName of its generation, then the new log into its place;
// the aside file is removed when its last reader closes it. A crash between
// the two renames leaves no chunks.dat: Open renames the aside log back
// (the new one never took a write), and removes aside files otherwise.

func asideName(gen uint64) string { return fmt.Sprintf("%s%016x", asidePrefix, gen) }

// asideGen returns the generation an aside file's name holds.
func asideGen(name string) (uint64, bool) {
	hex, ok := strings.CutPrefix(name, asidePrefix)
	if !ok || len(hex) != 16 {
		return 0, false
	}
	gen, err := strconv.ParseUint(hex, 16, 64)
	return gen, err == nil
}

// newestAside returns the name among names of the aside log of the highest
// generation, or "".
func newestAside(names []string) string {
	best, found := "", uint64(0)
	for _, n := range names {
		if gen, ok := asideGen(n); ok && (best == "" || gen > found) {
			best, found = n, gen
		}
	}
	return best
}

func isOurFile(name string) bool {
	switch name {
	case logName, indexName, lockName, logName + tmpSuffix, indexName + tmpSuffix, compactName:
		return true
	}
	_, aside := asideGen(name)
	return aside
}

// Exists reports whether dir holds a database (its log, or a log that an
// interrupted compaction renamed aside, or index.dat, which is written only
// beside a log and shows one was there: lostlog.go), through opts.FS: for
// tools that must not make a new database where Open would.
func Exists(dir string, opts Options) bool {
	o, err := opts.withDefaults()
	return err == nil && exists(o.FS, dir)
}

func exists(fs vfs.FS, dir string) bool {
	names, err := fs.List(dir)
	return err == nil && (slices.Contains(names, logName) || slices.Contains(names, indexName) || slices.ContainsFunc(names, func(n string) bool {
		_, ok := asideGen(n)
		return ok
	}))
}
