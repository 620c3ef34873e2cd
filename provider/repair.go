package provider

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb"
)

// Repair mends damaged records in the world in dir, which must not be
// open (see blazedb.Repair). First the block dictionary: entries that do
// not read are written back from dictionary.dat, as opening the world
// does. Then the engine: a column whose newest record is damaged goes back
// to its newest intact version, or is deleted when none is left, and the
// world generates it again when it is next loaded. Column records name
// block states by dictionary ids, which are never reused, so an older
// record still reads. A dictionary entry that neither the engine nor
// dictionary.dat holds intact is deleted: the columns using it then fail
// to load with an error wrapping both ErrUnknownState and
// ErrColumnCorrupt. When anything was put back or deleted, the
// world gets a new Edition. level.dat is not touched.
func (conf Config) Repair(dir string) (*RepairReport, error) {
	conf = conf.withDefaults()
	rep := &RepairReport{}
	var err error
	if conf.Exists(dir) {
		// Opening restores the dictionary. When it cannot (an entry
		// neither copy holds), the engine's repair deletes the entry.
		c := Config{Log: conf.Log, FS: conf.FS, Durability: conf.Durability, NoLevelDat: true,
			ExternalMaintenance: true, ColumnCacheBytes: -1, CacheBytes: -1}
		if db, oerr := c.withDefaults().open(dir); oerr == nil {
			rep.Dictionary = db.DictionaryRestored()
			if err = db.Close(); err != nil {
				return rep, fmt.Errorf("provider: repair %s: %w", dir, err)
			}
		} else if !errors.Is(oerr, blazedb.ErrCorrupt) {
			return rep, fmt.Errorf("provider: repair %s: %w", dir, oerr)
		}
	}
	rep.RepairReport, err = blazedb.Repair(filepath.Join(dir, engineDir), conf.engineOptions())
	if err != nil {
		return rep, fmt.Errorf("provider: repair %s: %w", dir, err)
	}
	if len(rep.Skipped) > 0 || len(rep.Keys) > 0 {
		// Columns went back to older versions or were deleted: the
		// world's columns are no longer those its edition names.
		if err := renewEdition(filepath.Join(dir, engineDir), conf.engineOptions()); err != nil {
			return rep, fmt.Errorf("provider: repair %s: renew the edition: %w", dir, err)
		}
	}
	return rep, nil
}

// RepairReport says what Repair did: the engine's report, and the block
// dictionary entries written back from dictionary.dat. It is a plain value
// that nothing else refers to, safe to use from any goroutine.
type RepairReport struct {
	*blazedb.RepairReport
	Dictionary []int32
}
