package provider

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/df-mc/dragonfly/server/world/mcdb/leveldat"
)

// Repair mends damaged records in the world in dir, which must not be
// open (see blazedb.Repair). First, unless conf.NoLevelDat, level.dat and
// its checksummed copy (leveldat.go): level.dat is written again from the
// copy when it is missing, damaged or differs from it, and the copy from
// level.dat when the copy is missing or damaged; with neither intact,
// level.dat is written with Dragonfly's default settings and the name in
// levelname.txt, and the report says the settings were lost. Then the
// block dictionary: entries that do not read are written back from
// dictionary.dat, as opening the world does. An entry that neither the
// engine nor dictionary.dat holds intact is never deleted, since columns
// may use it: it is kept as a lost entry (lostEntry), so that its id is
// never given to another state, and the columns using it fail to load with
// an error wrapping both ErrUnknownState and ErrColumnCorrupt, and are
// never overwritten, until a dictionary.dat holding it is put back. Then
// the engine: a column whose newest record is damaged goes back to its
// newest intact version, or is deleted when none is left, and the world
// generates it again when it is next loaded. Column records name block
// states by dictionary ids, which are never reused, so an older record
// still reads. When anything was put back or deleted, the world gets a new
// Edition.
func (conf Config) Repair(dir string) (*RepairReport, error) {
	conf = conf.withDefaults()
	rep := &RepairReport{}
	var err error
	header := "" // a damaged log header the provider's open mended
	if !conf.NoLevelDat && conf.Exists(dir) {
		// level.dat is beside the engine, not in it: the engine's lock is
		// taken first, so that a world a server has open is refused before
		// anything of it is changed. (The dictionary's repair and the
		// engine's open the engine, which takes the lock.)
		lock, err := blazedb.Lock(filepath.Join(dir, engineDir), conf.engineOptions())
		if err != nil {
			return rep, fmt.Errorf("provider: repair %s: %w", dir, err)
		}
		rep.LevelDat, err = conf.repairSettings(dir)
		lock.Close()
		if err != nil {
			return rep, err
		}
	}
	if conf.Exists(dir) {
		if header, err = conf.repairDictionary(dir, rep, false); err != nil {
			return rep, fmt.Errorf("provider: repair %s: %w", dir, err)
		}
	}
	rep.RepairReport, err = blazedb.Repair(filepath.Join(dir, engineDir), conf.engineOptions())
	if err != nil {
		return rep, fmt.Errorf("provider: repair %s: %w", dir, err)
	}
	// The entries were marked lost before, so the engine found no damaged
	// one; should it have deleted one all the same, its id is kept.
	var deleted []int32
	for _, k := range rep.Keys {
		if id, err := dictID(k.Name); err == nil && k.Named && !k.Restored && strings.HasPrefix(k.Name, dictPrefix) {
			deleted = append(deleted, id)
		}
	}
	if len(deleted) > 0 {
		if err := markLost(filepath.Join(dir, engineDir), conf.engineOptions(), deleted); err != nil {
			return rep, fmt.Errorf("provider: repair %s: %w", dir, err)
		}
		rep.DictionaryLost = append(rep.DictionaryLost, deleted...)
	}
	if rep.Header == "" {
		rep.Header = header
	}
	if rep.LostBytes > 0 && conf.Exists(dir) {
		// The dictionary was not restored above: the open refused the
		// loss (ErrDurableLoss), which the engine's repair accepted. The
		// entries it cost are looked for in dictionary.dat now, while the
		// copy still holds them; the next open sees no loss, and would not.
		if _, err := conf.repairDictionary(dir, rep, true); err != nil {
			return rep, fmt.Errorf("provider: repair %s: %w", dir, err)
		}
	}
	if len(rep.Skipped) > 0 || len(rep.Keys) > 0 || len(rep.Lost) > 0 {
		// Columns went back to older versions or were deleted: the
		// world's columns are no longer those its edition names.
		if err := renewEdition(filepath.Join(dir, engineDir), conf.engineOptions()); err != nil {
			return rep, fmt.Errorf("provider: repair %s: renew the edition: %w", dir, err)
		}
	}
	return rep, nil
}

// repairDictionary restores the block dictionary of the world in dir as
// opening it does, from dictionary.dat. An entry that neither the log nor
// the copy holds intact is never deleted, as columns may use it: its
// record is replaced with lostEntry, which keeps its id from being given
// to another state, and the world opens again. afterLoss: the engine's
// repair gave up durable bytes, so every entry the engine lacks is looked
// for in the copy.
func (conf Config) repairDictionary(dir string, rep *RepairReport, afterLoss bool) (header string, err error) {
	c := Config{Log: conf.Log, FS: conf.FS, Durability: conf.Durability, NoLevelDat: true, SegmentRoot: conf.SegmentRoot,
		ExternalMaintenance: true, ColumnCacheBytes: -1, CacheBytes: -1, dictLost: afterLoss}.withDefaults()
	for try := 0; ; try++ {
		db, err := c.open(dir)
		var lost *entriesLostError
		if errors.As(err, &lost) && try == 0 {
			if err := markLost(filepath.Join(dir, engineDir), conf.engineOptions(), lost.ids); err != nil {
				return "", err
			}
			rep.DictionaryLost = lost.ids
			continue
		}
		if errors.Is(err, blazedb.ErrCorrupt) && !errors.Is(err, ErrColumnCorrupt) {
			return "", nil // the engine's repair below mends what it can
		}
		// A record that reads intact and does not decode (ErrColumnCorrupt,
		// now blazedb.ErrCorrupt too) is not the engine's to mend: its
		// repair would leave it, so the error is reported, as it was before
		// such errors wrapped blazedb.ErrCorrupt. A dictionary entry of
		// that kind came back above as lost entries, like a damaged one.
		if err != nil {
			return "", err
		}
		rep.Dictionary = append(rep.Dictionary, db.DictionaryRestored()...)
		header = db.eng.Recovery().HeaderDamage
		// Damage compaction carries is the engine's repair's to mend.
		if err := db.Close(); err != nil && !blazedb.IsDamageReport(err) {
			return "", err
		}
		return header, nil
	}
}

// markLost replaces the records of the block dictionary entries ids, in
// the engine in dir, with lostEntry.
func markLost(dir string, opts blazedb.Options, ids []int32) error {
	opts.DisableAutoCompaction = true
	eng, err := blazedb.Open(dir, opts)
	if err != nil {
		return err
	}
	var b blazedb.Batch
	for _, id := range ids {
		b.PutNamed(dictPrefix+strconv.FormatUint(uint64(id), 16), []byte(lostEntry))
	}
	err = eng.Apply(&b)
	if err == nil {
		err = eng.Sync()
	}
	if err = errors.Join(err, eng.Close()); err != nil {
		return fmt.Errorf("mark block dictionary entries %v lost: %w", ids, err)
	}
	return nil
}

// DescribeRecord names what the engine record called name holds, for
// reports: "block dictionary entry 1a", "player spawn <uuid>", "the
// world's edition", or the record's name.
func DescribeRecord(name string) string {
	switch {
	case strings.HasPrefix(name, dictPrefix):
		if id, err := dictID(name); err == nil {
			return fmt.Sprintf("block dictionary entry %d", id)
		}
	case strings.HasPrefix(name, playerPrefix):
		return "player spawn " + strings.TrimPrefix(name, playerPrefix)
	case strings.HasPrefix(name, playerDataPrefix):
		return "data of player " + strings.TrimPrefix(name, playerDataPrefix)
	case name == editionName:
		return "the world's edition"
	case name == settingsName:
		return "the world's settings as last saved (for views of the past)"
	}
	return fmt.Sprintf("record %q", name)
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
		write = func() error { return writeLevelCopy(fs, dir, sr.raw) }
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
	// Dictionary lists the block dictionary entries written back from
	// dictionary.dat.
	Dictionary []int32
	// DictionaryLost lists the block dictionary entries that were damaged
	// and that no copy held intact: each is kept as a lost entry
	// (lostEntry), never deleted, so that its id is never given to another
	// block state; the columns using it fail to load, and are never
	// overwritten, until a dictionary.dat that holds it is put back.
	DictionaryLost []int32
	// LevelDat says what was done to level.dat or its copy because one of
	// them was missing or damaged: empty when nothing was.
	LevelDat string
}
