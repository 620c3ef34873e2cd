package provider

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider/internal/nbt"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/mcdb/leveldat"
)

// level.dat is kept in Dragonfly's own format (package leveldat), so tools
// that read a Bedrock world's level.dat read Blaze's too. That format has
// no checksum: a flipped bit either makes it unreadable or changes a
// setting silently. So every time level.dat is written, level.dat.blaze
// beside it gets a checksummed copy of the very same bytes, written first
// (vfs.ReplaceFile each), so that the copy is never older than level.dat:
//
//	+-------+------------------------------------------------------------+
//	| bytes | field                                                      |
//	+-------+------------------------------------------------------------+
//	|     3 | signature "BZL"                                            |
//	|     1 | version (1)                                                |
//	|     4 | n, the length of level.dat, uint32 LE                      |
//	|     n | level.dat's bytes, exactly as written to level.dat         |
//	|     4 | CRC-32C (Castagnoli) of every byte before it, LE           |
//	+-------+------------------------------------------------------------+
//
// A file beside level.dat rather than a named record in the engine: level
// dat is written where no engine is open (WriteSettings, a backup), it is
// read before the engine opens, damage to the engine's log cannot reach it,
// and it is made durable by its own fsync, not by the engine's durability
// mode. Opening a world compares the two (readSettings): when level.dat is
// missing from a world that exists, does not read, or differs from an
// intact copy, the settings come from the copy, with a warning, and a
// read-write open writes level.dat again. Part of the on-disk format.
const (
	levelDatName      = "level.dat"
	levelNameName     = "levelname.txt"
	levelCopyName     = "level.dat.blaze"
	levelCopySig      = "BZL"
	levelCopyVersion  = 1
	maxLevelDatLength = 64 << 20
)

// checkLevelDat refuses a level.dat that Dragonfly's reader could not take
// safely: its header (a version and the length of the NBT that follows,
// each an int32 LE) is used to allocate before anything is checked, so a
// damaged length panics or allocates up to 2 GiB, and gophertunnel's NBT
// decoder panics on some damaged NBT. nbt.Decode checks the NBT first, as
// the decoders agree on what they accept.
func checkLevelDat(b []byte) error {
	if len(b) < 8 {
		return fmt.Errorf("%w: level.dat of %d bytes has no header", blazedb.ErrCorrupt, len(b))
	}
	n := int64(int32(binary.LittleEndian.Uint32(b[4:])))
	if n < 0 || n > int64(len(b)-8) {
		return fmt.Errorf("%w: level.dat declares %d bytes of NBT and holds %d", blazedb.ErrCorrupt, n, len(b)-8)
	}
	if _, err := nbt.Decode(b[8 : 8+n]); err != nil {
		return fmt.Errorf("%w: level.dat: %v", blazedb.ErrCorrupt, err)
	}
	return nil
}

// parseLevelDat decodes the contents of a level.dat with Dragonfly's own
// reader, once checkLevelDat finds it safe to.
func parseLevelDat(b []byte) (*leveldat.Data, error) {
	if err := checkLevelDat(b); err != nil {
		return nil, err
	}
	ld, err := leveldat.Read(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: level.dat: %v", blazedb.ErrCorrupt, err)
	}
	if v := ld.Ver(); v != leveldat.Version && v >= 10 {
		return nil, fmt.Errorf("level.dat version %d is unsupported", v)
	}
	d := &leveldat.Data{}
	if err := ld.Unmarshal(d); err != nil {
		return nil, fmt.Errorf("%w: level.dat: %v", blazedb.ErrCorrupt, err)
	}
	return d, nil
}

// appendLevelCopy appends level.dat.blaze holding the level.dat ld to b.
func appendLevelCopy(b, ld []byte) []byte {
	start := len(b)
	b = append(b, levelCopySig...)
	b = append(b, levelCopyVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ld)))
	b = append(b, ld...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// parseLevelCopy returns the level.dat that the level.dat.blaze b holds, a
// slice of b. Damage gives an error wrapping blazedb.ErrCorrupt, never a
// panic; a newer version is refused, never guessed at.
func parseLevelCopy(b []byte) ([]byte, error) {
	bad := func(format string, args ...any) ([]byte, error) {
		return nil, fmt.Errorf("%w: %s: %s", blazedb.ErrCorrupt, levelCopyName, fmt.Sprintf(format, args...))
	}
	const overhead = len(levelCopySig) + 1 + 4 + 4
	if len(b) < overhead {
		return bad("%d bytes is too short", len(b))
	}
	body := b[:len(b)-4]
	if sum, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(b[len(body):]); sum != want {
		return bad("checksum %08x, want %08x", sum, want)
	}
	if string(body[:3]) != levelCopySig {
		return bad("no signature")
	}
	if v := body[3]; v != levelCopyVersion {
		return bad("version %d, this build reads %d", v, levelCopyVersion)
	}
	if n := binary.LittleEndian.Uint32(body[4:]); int64(n) != int64(len(body)-8) {
		return bad("declares %d bytes of level.dat and holds %d", n, len(body)-8)
	}
	return body[8:], nil
}

// SettingsRecovery says what opening a world found of level.dat and its
// checksummed copy, level.dat.blaze: a plain value, safe to copy and share.
// The zero value means both read and agreed (or the world keeps no
// level.dat: Config.NoLevelDat).
type SettingsRecovery struct {
	// LevelDat is what was wrong with level.dat: missing from a world
	// that exists, damaged, or different from an intact copy. Nil when it
	// read and matched its copy, or had no copy to match.
	LevelDat error
	// Copy is what was wrong with level.dat.blaze: damaged, or missing
	// (an error wrapping vfs.ErrNotExist: not damage, as a world made
	// before the copy existed has none; a read-write open writes it).
	Copy error
	// FromCopy reports that the settings were taken from level.dat.blaze.
	FromCopy bool
	// Defaults reports that neither file held the settings of a world
	// that exists: they are Dragonfly's defaults, with the world's name
	// taken from levelname.txt when it has one.
	Defaults bool
}

// Damaged reports whether a byte of level.dat or of its copy went bad, or
// level.dat went missing from a world that exists: what blaze check
// reports as damage.
func (r SettingsRecovery) Damaged() bool {
	return r.LevelDat != nil || (r.Copy != nil && !errors.Is(r.Copy, vfs.ErrNotExist))
}

// settingsRead is what readSettings found.
type settingsRead struct {
	data *leveldat.Data
	rec  SettingsRecovery
	// rewrite reports that level.dat, or its copy, is to be written
	// again (by a read-write open, or repair).
	rewrite bool
	// raw is level.dat's bytes as found, when they are used: then only
	// the copy is to be written, of them.
	raw []byte
}

// readSettings reads dir/level.dat and its copy, dir/level.dat.blaze, and
// decides which to use: level.dat when it reads and matches an intact copy
// (or has none), else the copy. A world whose engine exists (exists) and
// that has neither gets Dragonfly's defaults, named after levelname.txt;
// so does a new world, quietly. It fails, wrapping blazedb.ErrCorrupt,
// only when level.dat does not read and no intact copy is left.
func readSettings(fs vfs.FS, dir string, exists bool) (r settingsRead, err error) {
	// Damage names its file (CorruptionError).
	defer func() {
		r.rec.LevelDat = corruption(levelDatName, "", r.rec.LevelDat)
		r.rec.Copy = corruption(levelCopyName, "", r.rec.Copy)
	}()
	ld, lerr := vfs.ReadFile(fs, filepath.Join(dir, levelDatName))
	var ldat *leveldat.Data
	if lerr == nil {
		// An error that is not ErrCorrupt (a version this build does not
		// read) is not taken for damage unless an intact copy differs.
		ldat, lerr = parseLevelDat(ld)
		lerr = corruption(levelDatName, "", lerr)
	} else if !errors.Is(lerr, vfs.ErrNotExist) {
		return r, lerr
	}
	cb, cerr := vfs.ReadFile(fs, filepath.Join(dir, levelCopyName))
	var cld []byte
	var cdat *leveldat.Data
	if cerr == nil {
		if cld, cerr = parseLevelCopy(cb); cerr == nil {
			if cdat, cerr = parseLevelDat(cld); cerr != nil {
				cerr = fmt.Errorf("%w: %s holds a level.dat that does not read: %v", blazedb.ErrCorrupt, levelCopyName, cerr)
			}
		}
	} else if errors.Is(cerr, vfs.ErrNotExist) {
		cerr = fmt.Errorf("%s is missing (%w)", levelCopyName, vfs.ErrNotExist)
	} else {
		return r, cerr
	}
	r.rec.Copy = cerr
	missing := errors.Is(lerr, vfs.ErrNotExist)
	switch {
	case lerr == nil && cerr == nil && bytes.Equal(ld, cld):
		r.data, r.raw = ldat, ld
		return r, nil
	case cerr == nil:
		r.data, r.rec.FromCopy, r.rewrite = cdat, true, true
		switch {
		case missing:
			r.rec.LevelDat = fmt.Errorf("%w: level.dat is missing", blazedb.ErrCorrupt)
			if !exists {
				// A copy without level.dat in a new world: a crash
				// between the two files' first writes.
				r.rec.LevelDat = nil
			}
		case errors.Is(lerr, blazedb.ErrCorrupt):
			r.rec.LevelDat = lerr
		case lerr != nil:
			r.rec.LevelDat = fmt.Errorf("%w: level.dat differs from its checksummed copy %s: %v", blazedb.ErrCorrupt, levelCopyName, lerr)
		default:
			// The copy is written first: an intact level.dat older than it
			// is what a crash between the two writes leaves.
			r.rec.LevelDat = fmt.Errorf("%w: level.dat differs from its checksummed copy %s (a crash while the settings were saved, which writes the copy first; damage; or an edit by another tool while the world was closed)", blazedb.ErrCorrupt, levelCopyName)
		}
		return r, nil
	case lerr == nil:
		r.data, r.raw, r.rewrite = ldat, ld, true
		return r, nil
	case missing:
		r.data, r.rewrite = &leveldat.Data{}, true
		r.data.FillDefault()
		if exists {
			r.rec.LevelDat = fmt.Errorf("%w: level.dat is missing, and %v", blazedb.ErrCorrupt, cerr)
			r.rec.Defaults = true
			if name, err := vfs.ReadFile(fs, filepath.Join(dir, levelNameName)); err == nil && len(name) > 0 {
				r.data.LevelName = string(name)
			}
		} else {
			r.rec.Copy = nil // a new world
		}
		return r, nil
	case !errors.Is(lerr, blazedb.ErrCorrupt):
		return r, lerr // not damage: a version this build does not read
	default:
		r.rec.LevelDat = lerr
		return r, fmt.Errorf("%w, and %v", lerr, cerr)
	}
}

// encodeLevelDat returns d as Dragonfly writes level.dat.
func encodeLevelDat(d *leveldat.Data) ([]byte, error) {
	var ld leveldat.LevelDat
	if err := ld.Marshal(*d); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := ld.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeLevelDat atomically replaces dir/level.dat.blaze, then dir/level.dat
// and dir/levelname.txt, the last only when its text changes: the world's
// name rarely does, and replacing the file costs two fsyncs at every save
// of the settings. The copy goes first, so that it is never older than
// level.dat.
func writeLevelDat(fs vfs.FS, dir string, d *leveldat.Data) error {
	b, err := encodeLevelDat(d)
	if err != nil {
		return err
	}
	if err := writeLevelCopy(fs, dir, b); err != nil {
		return err
	}
	if err := vfs.ReplaceFile(fs, dir, levelDatName, b); err != nil {
		return err
	}
	name := []byte(d.LevelName)
	if cur, err := vfs.ReadFile(fs, filepath.Join(dir, levelNameName)); err == nil && bytes.Equal(cur, name) {
		return nil
	}
	return vfs.ReplaceFile(fs, dir, levelNameName, name)
}

// writeLevelCopy replaces dir/level.dat.blaze with a copy of the level.dat
// b, leaving level.dat as it is: for a copy that is missing or damaged.
func writeLevelCopy(fs vfs.FS, dir string, b []byte) error {
	return vfs.ReplaceFile(fs, dir, levelCopyName, appendLevelCopy(nil, b))
}

// WriteSettings creates dir/level.dat holding s (every other field at
// Dragonfly's default), and its copy: a new world whose settings come from
// elsewhere, such as an overlay whose settings start as its template's.
func WriteSettings(fs vfs.FS, dir string, s *world.Settings) error {
	d := &leveldat.Data{}
	d.FillDefault()
	s.Lock() // a World may be changing them
	d.PutSettings(s)
	s.Unlock()
	return writeLevelDat(fs, dir, d)
}

// readSettings reads the settings of the world in dir (readSettings) and
// logs what was wrong with level.dat or its copy.
func (conf Config) readSettings(dir string) (settingsRead, error) {
	exists := blazedb.Exists(filepath.Join(dir, engineDir), conf.engineOptions())
	sr, err := readSettings(conf.FS, dir, exists)
	if err != nil {
		return sr, err
	}
	rec, file := sr.rec, filepath.Join(dir, levelDatName)
	switch {
	case rec.Defaults:
		conf.Log.Error("level.dat is missing from a world that exists, and it has no intact copy: the settings are Dragonfly's defaults, with the name in levelname.txt", "file", file, "err", rec.LevelDat)
	case rec.FromCopy && errors.Is(rec.LevelDat, blazedb.ErrCorrupt):
		conf.Log.Error("level.dat is missing or damaged: the settings are taken from its checksummed copy", "file", file, "copy", levelCopyName, "err", rec.LevelDat)
	}
	if rec.Copy != nil && !errors.Is(rec.Copy, vfs.ErrNotExist) {
		conf.Log.Warn("the copy of level.dat is damaged; level.dat itself reads", "file", filepath.Join(dir, levelCopyName), "err", rec.Copy)
	}
	return sr, nil
}

// SettingsRecovery says what opening the world found of level.dat and its
// checksummed copy, level.dat.blaze (leveldat.go).
func (db *DB) SettingsRecovery() SettingsRecovery { return db.settingsRec }
