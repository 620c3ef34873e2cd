package provider

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/mcdb/leveldat"
)

// level.dat is kept in Dragonfly's own format (package leveldat), so tools
// that read a Bedrock world's level.dat read Blaze's too. It is replaced
// atomically (vfs.ReplaceFile) every time the settings are saved.
const (
	levelDatName  = "level.dat"
	levelNameName = "levelname.txt"
)

// checkLevelDat refuses a level.dat that Dragonfly's reader could not take
// safely: its header (a version and the length of the NBT that follows,
// each an int32 LE) is used to allocate before anything is checked, so a
// damaged length panics or allocates up to 2 GiB, and gophertunnel's NBT
// decoder panics on some damaged NBT. decodeNBT checks the NBT first, as
// the decoders agree on what they accept.
func checkLevelDat(b []byte) error {
	if len(b) < 8 {
		return fmt.Errorf("%w: level.dat of %d bytes has no header", blazedb.ErrCorrupt, len(b))
	}
	n := int64(int32(binary.LittleEndian.Uint32(b[4:])))
	if n < 0 || n > int64(len(b)-8) {
		return fmt.Errorf("%w: level.dat declares %d bytes of NBT and holds %d", blazedb.ErrCorrupt, n, len(b)-8)
	}
	if _, err := decodeNBT(b[8 : 8+n]); err != nil {
		return fmt.Errorf("%w: level.dat: %v", blazedb.ErrCorrupt, err)
	}
	return nil
}

// readLevelDat reads dir/level.dat, or fills defaults when there is none.
func readLevelDat(fs vfs.FS, dir string) (*leveldat.Data, error) {
	b, err := vfs.ReadFile(fs, filepath.Join(dir, levelDatName))
	if errors.Is(err, vfs.ErrNotExist) {
		d := &leveldat.Data{}
		d.FillDefault()
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	return parseLevelDat(b)
}

// parseLevelDat decodes the contents of a level.dat with Dragonfly's own
// reader, once checkLevelDat finds it safe to.
func parseLevelDat(b []byte) (*leveldat.Data, error) {
	if err := checkLevelDat(b); err != nil {
		return nil, err
	}
	ld, err := leveldat.Read(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if v := ld.Ver(); v != leveldat.Version && v >= 10 {
		return nil, fmt.Errorf("level.dat version %d is unsupported", v)
	}
	d := &leveldat.Data{}
	if err := ld.Unmarshal(d); err != nil {
		return nil, err
	}
	return d, nil
}

// writeLevelDat atomically replaces dir/level.dat and dir/levelname.txt,
// the second only when its text changes: the world's name rarely does, and
// replacing the file costs two fsyncs at every save of the settings.
func writeLevelDat(fs vfs.FS, dir string, d *leveldat.Data) error {
	var ld leveldat.LevelDat
	if err := ld.Marshal(*d); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := ld.Write(&buf); err != nil {
		return err
	}
	if err := vfs.ReplaceFile(fs, dir, levelDatName, buf.Bytes()); err != nil {
		return err
	}
	name := []byte(d.LevelName)
	if cur, err := vfs.ReadFile(fs, filepath.Join(dir, levelNameName)); err == nil && bytes.Equal(cur, name) {
		return nil
	}
	return vfs.ReplaceFile(fs, dir, levelNameName, name)
}

// WriteSettings creates dir/level.dat holding s (every other field at
// Dragonfly's default): a new world whose settings come from elsewhere, such
// as an overlay whose settings start as its template's.
func WriteSettings(fs vfs.FS, dir string, s *world.Settings) error {
	d := &leveldat.Data{}
	d.FillDefault()
	d.PutSettings(s)
	return writeLevelDat(fs, dir, d)
}
