package provider

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/df-mc/dragonfly/server/world/mcdb/leveldat"
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
// world gets a new Edition. First, unless conf.NoLevelDat, level.dat and
// its checksummed copy (leveldat.go): level.dat is written again from the
// copy when it is missing, damaged or differs from it, and the copy from
// level.dat when the copy is missing or damaged; with neither intact,
// level.dat is written with Dragonfly's default settings and the name in
// levelname.txt, and the report says the settings were lost.
func (conf Config) Repair(dir string) (*RepairReport, error) {
	conf = conf.withDefaults()
	rep := &RepairReport{}
	var err error
	if !conf.NoLevelDat && conf.Exists(dir) {
		if rep.LevelDat, err = conf.repairSettings(dir); err != nil {
			return rep, err
		}
	}
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

// repairSettings mends level.dat and its copy in dir, as Repair says, and
// returns what it did: "" when both were intact and agreed.
func (conf Config) repairSettings(dir string) (string, error) {
	fs := conf.FS
	sr, err := readSettings(fs, dir, true)
	if errors.Is(err, blazedb.ErrCorrupt) {
		d := &leveldat.Data{}
		d.FillDefault()
		if name, rerr := vfs.ReadFile(fs, filepath.Join(dir, levelNameName)); rerr == nil && len(name) > 0 {
			d.LevelName = string(name)
		}
		if werr := writeLevelDat(fs, dir, d); werr != nil {
			return "", fmt.Errorf("provider: repair %s: write level.dat: %w", dir, werr)
		}
		return fmt.Sprintf("level.dat did not read and has no intact copy (%v): written again with Dragonfly's default settings, named %q; the world's settings are lost", err, d.LevelName), nil
	}
	if err != nil {
		return "", fmt.Errorf("provider: repair %s: read level.dat: %w", dir, err)
	}
	if !sr.rewrite {
		return "", nil
	}
	write := func() error { return writeLevelDat(fs, dir, sr.data) }
	if sr.raw != nil {
		write = func() error { return writeLevelDatBytes(fs, dir, sr.raw, sr.data.LevelName) }
	}
	if err := write(); err != nil {
		return "", fmt.Errorf("provider: repair %s: write level.dat: %w", dir, err)
	}
	rec := sr.rec
	switch {
	case rec.Defaults:
		return fmt.Sprintf("%v: level.dat written again with Dragonfly's default settings, named %q; the world's settings are lost", rec.LevelDat, sr.data.LevelName), nil
	case rec.FromCopy && rec.LevelDat != nil:
		return fmt.Sprintf("%v: level.dat written again from its checksummed copy, %s", rec.LevelDat, levelCopyName), nil
	case rec.FromCopy:
		return "", nil // a new world's first write, cut short: not damage
	case rec.Damaged():
		return fmt.Sprintf("%v: %s written again from level.dat", rec.Copy, levelCopyName), nil
	}
	return "", nil // only the copy was missing: written, and not damage
}

// RepairReport says what Repair did: the engine's report, and the block
// dictionary entries written back from dictionary.dat. It is a plain value
// that nothing else refers to, safe to use from any goroutine.
type RepairReport struct {
	*blazedb.RepairReport
	Dictionary []int32
	// LevelDat says what was done to level.dat or its copy because one of
	// them was missing or damaged: empty when nothing was.
	LevelDat string
}
