package provider

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

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

// readLevelDat reads dir/level.dat, or fills defaults when there is none.
func readLevelDat(fs vfs.FS, dir string) (*leveldat.Data, error) {
	d := &leveldat.Data{}
	b, err := vfs.ReadFile(fs, filepath.Join(dir, levelDatName))
	if errors.Is(err, vfs.ErrNotExist) {
		d.FillDefault()
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	ld, err := leveldat.Read(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if v := ld.Ver(); v != leveldat.Version && v >= 10 {
		return nil, fmt.Errorf("level.dat version %d is unsupported", v)
	}
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
