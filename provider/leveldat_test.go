package provider

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/mcdb/leveldat"
)

// copyTree copies the directory from into to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := fsutil.CopyTree(from, to, nil); err != nil {
		t.Fatal(err)
	}
}

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

// settingsWorld makes a world named "Example 2" in dir holding one column,
// and returns its level.dat.
func settingsWorld(t *testing.T, dir string) []byte {
	t.Helper()
	db := openDB(t, dir, Config{})
	s := db.Settings()
	s.Name = "Example 2"
	s.Spawn = cube.Pos{12, 70, -5}
	s.Time = 12345
	db.SaveSettings(s)
	if err := db.StoreColumn(world.ChunkPos{1, 2}, world.Overworld, worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, levelDatName))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameSettings fails unless s holds what settingsWorld saved.
func sameSettings(t *testing.T, what string, s *world.Settings) {
	t.Helper()
	if s.Name != "Example 2" || s.Spawn != (cube.Pos{12, 70, -5}) || s.Time != 12345 {
		t.Fatalf("%s: settings %q spawn %v time %d, want those saved", what, s.Name, s.Spawn, s.Time)
	}
}

// Issue 35 item 3: one flipped byte anywhere in level.dat, a truncation or
// its deletion used to make the world unopenable, change a setting
// silently, or reset the settings and rename the world. With the
// checksummed copy the world opens with the settings saved, the damage is
// reported, and a read-write open writes level.dat back.
func TestLevelDatDamageRecoveredFromCopy(t *testing.T) {
	base := t.TempDir()
	orig := settingsWorld(t, base)
	type trial struct {
		name   string
		damage func(b []byte) []byte // nil deletes level.dat
	}
	var trials []trial
	for off := range orig {
		if off%16 != 0 && off > 16 {
			continue // one byte in 16 past the header keeps the test short
		}
		trials = append(trials, trial{fmt.Sprintf("flip %d", off), func(b []byte) []byte { b[off] ^= 0x10; return b }})
	}
	for _, n := range []int{0, 4, 8, len(orig) / 2, len(orig) - 1} {
		trials = append(trials, trial{fmt.Sprintf("truncate to %d", n), func(b []byte) []byte { return b[:n] }})
	}
	trials = append(trials, trial{"zero 20 bytes", func(b []byte) []byte { clear(b[len(b)/3 : len(b)/3+20]); return b }})
	trials = append(trials, trial{"delete", nil})
	t.Logf("%d trials on a level.dat of %d bytes", len(trials), len(orig))
	for _, tr := range trials {
		dir := t.TempDir()
		copyTree(t, base, dir)
		name := filepath.Join(dir, levelDatName)
		if tr.damage == nil {
			os.Remove(name)
		} else {
			os.WriteFile(name, tr.damage(slices.Clone(orig)), 0o644)
		}
		db, err := Config{Log: quiet, ReadOnly: true}.Open(dir)
		if err != nil {
			t.Fatalf("%s: read-only open: %v", tr.name, err)
		}
		sameSettings(t, tr.name+", read-only", db.Settings())
		if rec := db.SettingsRecovery(); !rec.Damaged() || !rec.FromCopy || !errors.Is(rec.LevelDat, blazedb.ErrCorrupt) {
			t.Fatalf("%s: the damage was not reported: %+v", tr.name, rec)
		}
		db.Close()
		db = openDB(t, dir, Config{})
		sameSettings(t, tr.name+", read-write", db.Settings())
		db.Close()
		db = openDB(t, dir, Config{ReadOnly: true})
		if rec := db.SettingsRecovery(); rec.Damaged() {
			t.Fatalf("%s: damage still reported after a read-write open: %+v", tr.name, rec)
		}
		sameSettings(t, tr.name+", reopened", db.Settings())
		db.Close()
	}
}

// Issue 35 item 3: a missing level.dat in a world that exists is reported
// loudly, even with no copy to restore from: the settings are then
// Dragonfly's defaults, but the world keeps its name (levelname.txt).
func TestLevelDatMissingReportedLoudly(t *testing.T) {
	dir := t.TempDir()
	settingsWorld(t, dir)
	os.Remove(filepath.Join(dir, levelDatName))
	os.Remove(filepath.Join(dir, levelCopyName))
	var logs bytes.Buffer
	db, err := Config{Log: slog.New(slog.NewTextHandler(&logs, nil)), ReadOnly: true}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if rec := db.SettingsRecovery(); !rec.Defaults || !rec.Damaged() {
		t.Fatalf("recovery %+v", rec)
	}
	if db.Settings().Name != "Example 2" {
		t.Fatalf("the world was renamed %q", db.Settings().Name)
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "level.dat is missing") {
		t.Fatalf("not reported loudly: %s", logs.String())
	}
	// A new world has neither, quietly.
	fresh := openDB(t, t.TempDir(), Config{})
	defer fresh.Close()
	if rec := fresh.SettingsRecovery(); rec != (SettingsRecovery{}) {
		t.Fatalf("a new world: %+v", rec)
	}
}

// Issue 35 item 3: a damaged or missing copy is reported (a missing one is
// not damage: worlds made before it existed have none) and written again
// by a read-write open from level.dat, whose bytes stay as they are.
func TestLevelDatCopyRewritten(t *testing.T) {
	dir := t.TempDir()
	orig := settingsWorld(t, dir)
	cp := filepath.Join(dir, levelCopyName)
	for name, damage := range map[string]func(){
		"missing": func() { os.Remove(cp) },
		"damaged": func() { flipByte(t, cp, 30) },
	} {
		damage()
		db := openDB(t, dir, Config{ReadOnly: true})
		rec := db.SettingsRecovery()
		db.Close()
		if rec.Copy == nil || rec.LevelDat != nil || rec.FromCopy || rec.Damaged() != (name == "damaged") {
			t.Fatalf("%s: %+v", name, rec)
		}
		// Written again by the open, not only by Close: the copy is
		// there while the world is served.
		db = openDB(t, dir, Config{})
		b, err := os.ReadFile(cp)
		db.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ld, err := parseLevelCopy(b); err != nil || !bytes.Equal(ld, orig) {
			t.Fatalf("%s: the copy written holds another level.dat: %v", name, err)
		}
		if now, _ := os.ReadFile(filepath.Join(dir, levelDatName)); len(now) == 0 {
			t.Fatalf("%s: level.dat lost", name)
		}
		orig, _ = os.ReadFile(filepath.Join(dir, levelDatName)) // Close rewrites it
	}
}

// parseLevelCopy reads what appendLevelCopy writes and refuses, wrapping
// blazedb.ErrCorrupt, a damaged checksum, another signature or version,
// and a length that disagrees with the file.
func TestParseLevelCopy(t *testing.T) {
	ld := []byte("level.dat bytes")
	if got, err := parseLevelCopy(appendLevelCopy(nil, ld)); err != nil || !bytes.Equal(got, ld) {
		t.Fatalf("a valid copy: %q, %v", got, err)
	}
	resum := func(b []byte) []byte {
		b = b[:len(b)-4]
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	}
	good := appendLevelCopy(nil, ld)
	for name, b := range map[string][]byte{
		"checksum":  func() []byte { b := slices.Clone(good); b[9] ^= 1; return b }(),
		"signature": func() []byte { b := slices.Clone(good); b[0] = 'X'; return resum(b) }(),
		"version":   func() []byte { b := slices.Clone(good); b[3] = levelCopyVersion + 1; return resum(b) }(),
		"length":    func() []byte { b := slices.Clone(good); b[4]++; return resum(b) }(),
		"short":     good[:5],
	} {
		if _, err := parseLevelCopy(b); !errors.Is(err, blazedb.ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzParseLevelCopy: bad bytes give an error wrapping blazedb.ErrCorrupt,
// never a panic, and what parses is written again byte for byte. Each input
// is tried as it is and with a valid checksum appended, so that the fuzzer
// reaches the fields.
func FuzzParseLevelCopy(f *testing.F) {
	d := &leveldat.Data{}
	d.FillDefault()
	for _, ld := range [][]byte{nil, levelDatBytes(f, d)} {
		b := appendLevelCopy(nil, ld)
		f.Add(b[:len(b)-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := binary.LittleEndian.AppendUint32(nil, crc32.Checksum(body, castagnoli))
		for _, b := range [][]byte{body, append(slices.Clip(body), sum...)} {
			ld, err := parseLevelCopy(b)
			if err != nil {
				if !errors.Is(err, blazedb.ErrCorrupt) {
					t.Fatalf("error not wrapping ErrCorrupt: %v", err)
				}
				continue
			}
			if again := appendLevelCopy(nil, ld); !bytes.Equal(again, b) {
				t.Fatal("a copy that parses is not written back the same")
			}
		}
	})
}

// Issue 35 items 3 and 14: the copy is written before level.dat, so a
// crash between the two leaves an intact level.dat older than its copy.
// The copy's settings win, and the report names that cause with the
// others; before, it named only damage and an edit by another tool.
func TestLevelDatOlderThanCopyNamesCrash(t *testing.T) {
	dir := t.TempDir()
	old := settingsWorld(t, dir)
	db := openDB(t, dir, Config{})
	s := db.Settings()
	s.Name = "Example 3"
	db.SaveSettings(s)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, levelDatName), old, 0o644); err != nil { // as a crash left it
		t.Fatal(err)
	}
	db = openDB(t, dir, Config{ReadOnly: true})
	defer db.Close()
	rec := db.SettingsRecovery()
	if db.Settings().Name != "Example 3" || !rec.FromCopy || rec.LevelDat == nil || !strings.Contains(rec.LevelDat.Error(), "crash") {
		t.Fatalf("settings %q, recovery %+v", db.Settings().Name, rec)
	}
}
