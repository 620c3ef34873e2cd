package provider

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/world/mcdb/leveldat"
)

// levelDatBytes returns d as Dragonfly writes it to level.dat.
func levelDatBytes(tb testing.TB, d *leveldat.Data) []byte {
	tb.Helper()
	var ld leveldat.LevelDat
	if err := ld.Marshal(*d); err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ld.Write(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzReadLevelDat: level.dat, read with Dragonfly's own decoder, is
// refused or read, never a panic or an allocation its size does not
// justify.
func FuzzReadLevelDat(f *testing.F) {
	d := &leveldat.Data{}
	d.FillDefault()
	f.Add(levelDatBytes(f, d))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := parseLevelDat(b); err == nil {
			d.Settings() // what Open does with it
		}
	})
}

// parseLevelDat reads a level.dat Dragonfly writes, and refuses with
// blazedb.ErrCorrupt one whose NBT is cut short or whose header declares
// more than the file holds, and one of a format version Dragonfly does not
// read, as its own provider does.
func TestParseLevelDat(t *testing.T) {
	d := &leveldat.Data{}
	d.FillDefault()
	d.LevelName = "Blaze"
	valid := levelDatBytes(t, d)
	if got, err := parseLevelDat(valid); err != nil || got.LevelName != "Blaze" {
		t.Fatalf("a valid level.dat: %v", err)
	}
	// withNBT gives a level.dat holding nbt, its header saying so.
	withNBT := func(nbt []byte) []byte {
		b := slices.Concat(valid[:8], nbt)
		binary.LittleEndian.PutUint32(b[4:], uint32(len(nbt)))
		return b
	}
	nbt := valid[8:]
	for name, b := range map[string][]byte{
		"NBT cut short":    withNBT(nbt[:len(nbt)/2]),
		"header says more": valid[:len(valid)-1],
		"no header":        valid[:7],
	} {
		if _, err := parseLevelDat(b); !errors.Is(err, blazedb.ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	newer := slices.Clone(valid)
	binary.LittleEndian.PutUint32(newer, 11)
	if _, err := parseLevelDat(newer); err == nil {
		t.Error("a level.dat of format version 11 was read")
	}
}
