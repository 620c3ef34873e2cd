package provider

import (
	"bytes"
	"testing"

	"github.com/df-mc/dragonfly/server/world/mcdb/leveldat"
)

// FuzzReadLevelDat: level.dat, read with Dragonfly's own decoder, is
// refused or read, never a panic or an allocation its size does not
// justify.
func FuzzReadLevelDat(f *testing.F) {
	d := &leveldat.Data{}
	d.FillDefault()
	var ld leveldat.LevelDat
	if err := ld.Marshal(*d); err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ld.Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := parseLevelDat(b); err == nil {
			d.Settings() // what Open does with it
		}
	})
}
