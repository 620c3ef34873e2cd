package provider

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/google/uuid"
)

// putRecords writes records straight into the engine of the world in dir
// (worldtest.PutRecords).
func putRecords(t *testing.T, dir string, named map[string][]byte, cols map[blazedb.Key][]byte) {
	t.Helper()
	worldtest.PutRecords(t, filepath.Join(dir, engineDir), nil, named, cols)
}

// wantCorruption checks that err is damage (blazedb.ErrCorrupt), whether
// it is ErrColumnCorrupt as it was before, and that a CorruptionError, in
// both errors.As forms, names file and record.
func wantCorruption(t *testing.T, what string, err error, columnCorrupt bool, file, record string) CorruptionError {
	t.Helper()
	if !errors.Is(err, blazedb.ErrCorrupt) {
		t.Fatalf("%s: %v is not blazedb.ErrCorrupt", what, err)
	}
	if errors.Is(err, ErrColumnCorrupt) != columnCorrupt {
		t.Fatalf("%s: errors.Is(%v, ErrColumnCorrupt) is %v", what, err, !columnCorrupt)
	}
	var ce CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: %v is no CorruptionError", what, err)
	}
	var cp *CorruptionError
	if !errors.As(err, &cp) || *cp != ce {
		t.Fatalf("%s: errors.As with a *CorruptionError gives %+v", what, cp)
	}
	if ce.File != file || ce.Record != record {
		t.Fatalf("%s: names file %q record %q, want %q %q", what, ce.File, ce.Record, file, record)
	}
	return ce
}

// Issue 37 (one corruption marker): every kind of damage the provider
// reports satisfies errors.Is(err, blazedb.ErrCorrupt), keeps
// ErrColumnCorrupt where it held, and says where through a
// CorruptionError: column records, player spawns, dictionary entries,
// dictionary.dat, level.dat and level.dat.blaze, and damage the engine's
// checksums find.
func TestCorruptionErrorEveryKind(t *testing.T) {
	dir := t.TempDir()
	dictWorld(t, dir, 3)
	player := uuid.New()
	putRecords(t, dir, map[string][]byte{
		playerPrefix + player.String(): {playerVersion, 1, 2},
		playerPrefix + "not-a-uuid":    {playerVersion},
		extraNamePrefix + "x":          {},
	}, map[blazedb.Key][]byte{{X: 1}: []byte("BZC\x02\x00garbage")})

	db := openDB(t, dir, Config{})
	_, err := db.LoadColumn(world.ChunkPos{1, 0}, world.Overworld)
	ce := wantCorruption(t, "column record", err, true, "chunks.dat", "column (1, 0) in Overworld")
	if ce.Pos != (world.ChunkPos{1, 0}) || ce.Dim != world.Overworld || !strings.HasPrefix(err.Error(), "load column (1, 0) (Overworld): ") {
		t.Fatalf("column record: %+v, %q", ce, err)
	}
	_, _, err = db.LoadPlayerSpawnPosition(player)
	wantCorruption(t, "player spawn", err, true, "chunks.dat", "player spawn "+player.String())
	spawns, err := db.PlayerSpawns()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range spawns {
		if s.Name == "not-a-uuid" {
			wantCorruption(t, "player record name", s.Err, true, "chunks.dat", `named record "player/not-a-uuid"`)
		}
	}
	wantCorruption(t, "world record", db.WorldExtras(func(ExtraRecord) error { return nil }), true, "chunks.dat", `named record "`+extraNamePrefix+`x"`)
	db.Close()

	_, err = parseDictCopy([]byte("not a dictionary copy at all"))
	wantCorruption(t, "dictionary.dat", err, true, "dictionary.dat", "")

	// level.dat damaged: the copy serves, and the recovery says where.
	flipByte(t, filepath.Join(dir, levelDatName), 12)
	db = openDB(t, dir, Config{ReadOnly: true})
	wantCorruption(t, "level.dat", db.SettingsRecovery().LevelDat, false, "level.dat", "")
	db.Close()
	// Its copy damaged too: the open fails, naming level.dat.
	flipByte(t, filepath.Join(dir, levelCopyName), 12)
	_, err = Config{Log: quiet, ReadOnly: true}.Open(dir)
	wantCorruption(t, "level.dat and its copy", err, false, "level.dat", "")
	sr, _ := readSettings(Config{}.withDefaults().FS, dir, true)
	wantCorruption(t, "level.dat.blaze", sr.rec.Copy, false, "level.dat.blaze", "")

	// Damage the engine's checksum finds: the CorruptionError names the
	// column, the engine's *blazedb.CorruptionError the offset.
	dir = t.TempDir()
	dictWorld(t, dir, 1)
	b, err := os.ReadFile(filepath.Join(dir, engineDir, "chunks.dat"))
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, filepath.Join(dir, engineDir, "chunks.dat"), int64(len(b)-64))
	db = openDB(t, dir, Config{ReadOnly: true, ColumnCacheBytes: -1, CacheBytes: -1})
	_, err = db.LoadColumn(world.ChunkPos{0, 0}, world.Overworld)
	wantCorruption(t, "damaged column record", err, false, "chunks.dat", "column (0, 0) in Overworld")
	// One a caller builds around a cause that is no damage is damage too.
	if err := error(CorruptionError{File: "level.dat", Err: errors.New("x")}); !errors.Is(err, blazedb.ErrCorrupt) {
		t.Fatal("a CorruptionError is not blazedb.ErrCorrupt")
	}
	var be *blazedb.CorruptionError
	if !errors.As(err, &be) || be.File != "chunks.dat" {
		t.Fatalf("damaged column record: %v has no engine CorruptionError", err)
	}
}

// firstEntry returns the smallest id of the world's dictionary, and its
// record's name.
func firstEntry(t *testing.T, dir string) (int32, string) {
	t.Helper()
	ids := slices.Sorted(func(yield func(int32) bool) {
		for id := range engineDictionary(t, dir) {
			if !yield(id) {
				return
			}
		}
	})
	return ids[0], dictPrefix + strconv.FormatUint(uint64(ids[0]), 16)
}

// Issue 37 (one corruption marker; a branch that now fires for a record
// that decodes badly): a dictionary entry whose record reads intact and
// does not decode is damage like one whose checksum fails. The world used
// to refuse to open; now the entry is taken from dictionary.dat, and
// without a copy Repair keeps it as a lost entry, where it used to fail.
func TestDictionaryEntryThatDoesNotDecode(t *testing.T) {
	dir := t.TempDir()
	cols := dictWorld(t, dir, 3)
	id, name := firstEntry(t, dir)
	putRecords(t, dir, map[string][]byte{name: []byte("not NBT")}, nil)

	db := openDB(t, dir, Config{ReadOnly: true})
	if got := db.DictionaryRestored(); !slices.Contains(got, id) {
		t.Fatalf("restored %v, want entry %d among them", got, id)
	}
	loadAll(t, db, cols, 0)
	db.Close()

	// Without the copy the world does not open, and says where.
	if err := os.Remove(filepath.Join(dir, dictCopyName)); err != nil {
		t.Fatal(err)
	}
	_, err := Config{Log: quiet, ReadOnly: true}.Open(dir)
	wantCorruption(t, "undecodable entry", err, true, "chunks.dat", "dictionary entry "+strconv.Itoa(int(id)))
	rep, err := Config{Log: quiet}.Repair(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.DictionaryLost, []int32{id}) {
		t.Fatalf("repair: lost %v, want [%d]", rep.DictionaryLost, id)
	}
	db = openDB(t, dir, Config{})
	if _, err := db.LoadColumn(world.ChunkPos{0, 0}, world.Overworld); !errors.Is(err, ErrUnknownState) || !errors.Is(err, ErrColumnCorrupt) {
		t.Fatalf("a column using the lost entry: %v", err)
	}
}

// Issue 37 (one corruption marker; Repair's branch for a world that does
// not open): a record that reads intact and does not decode is not the
// engine's to mend, so Repair reports it rather than claim a repair that
// leaves the world unopenable, now that such errors wrap
// blazedb.ErrCorrupt too.
func TestRepairReportsWhatTheEngineCannotMend(t *testing.T) {
	dir := t.TempDir()
	dictWorld(t, dir, 1)
	putRecords(t, dir, map[string][]byte{dictPrefix + "zz": []byte("x")}, nil)
	_, err := Config{Log: quiet}.Repair(dir)
	if !errors.Is(err, ErrColumnCorrupt) || !strings.Contains(err.Error(), `"dict/zz"`) {
		t.Fatalf("repair: %v", err)
	}
}
