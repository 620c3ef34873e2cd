package worldcheck

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/google/uuid"
)

var quiet = slog.New(slog.DiscardHandler)

// world writes a world of n columns in each dimension and one player spawn
// to dir, then one more overworld column, and returns where that last
// column's record lies in chunks.dat.
func writeWorld(t *testing.T, dir string, n int) (victim world.ChunkPos, start, end int64) {
	t.Helper()
	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, dim := range []world.Dimension{world.Overworld, world.Nether, world.End} {
		for i := range n {
			col := worldtest.Synthetic(uint64(i), dim, world.DefaultBlockRegistry)
			if err := db.StoreColumn(world.ChunkPos{int32(i), -int32(i)}, dim, col); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.SavePlayerSpawnPosition(uuid.New(), cube.Pos{1, 70, -3}); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "blaze", "chunks.dat")
	size := func() int64 {
		if err := db.Sync(); err != nil { // the provider's: it writes queued stores too
			t.Fatal(err)
		}
		st, err := os.Stat(log)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	start = size()
	// A column with the states of one already stored: its store appends
	// its own record and no dictionary entry.
	victim = world.ChunkPos{100, 100}
	if err := db.StoreColumn(victim, world.Overworld, worldtest.Synthetic(0, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	end = size()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return victim, start, end
}

func TestCheckCleanWorld(t *testing.T) {
	dir := t.TempDir()
	writeWorld(t, dir, 4)
	before := snapshotDir(t, dir)
	var bar bytes.Buffer
	r, err := Check(dir, Options{Progress: &bar})
	if err != nil {
		t.Fatal(err)
	}
	if r.Damaged() || r.Columns != 3*4+1 || r.Players != 1 || len(r.Databases) != 1 || !r.Databases[0].Recovery.IndexLoaded {
		t.Fatalf("report %+v", r)
	}
	// Issue 38 item 5: the engine's check of the log has progress of its
	// own before the columns', in plain lines when not on a terminal.
	want := fmt.Sprintf("checking the log of %[1]s\nchecking the log of %[1]s: done in ", dir)
	if !strings.HasPrefix(bar.String(), want) || !strings.Contains(bar.String(), "\nchecking: 13 columns\n") ||
		strings.Contains(bar.String(), "\r") {
		t.Fatalf("progress drawn: %q", bar.String())
	}
	if after := snapshotDir(t, dir); !equalDirs(before, after) {
		t.Fatal("check changed the world's files")
	}
	if r.Databases[0].DictionaryCopyStale {
		t.Fatal("a world just closed has no current dictionary copy")
	}
	// Without its copy the world is not damaged, but check says so.
	os.Remove(filepath.Join(dir, "dictionary.dat"))
	if r, err = Check(dir, Options{}); err != nil || r.Damaged() || !r.Databases[0].DictionaryCopyStale {
		t.Fatalf("without dictionary.dat: %+v, %v", r, err)
	}
}

// A damaged record is reported by the engine's check and as the one column
// that cannot be read; every other column is still read.
func TestCheckFindsDamagedColumn(t *testing.T) {
	dir := t.TempDir()
	victim, start, end := writeWorld(t, dir, 4)
	log := filepath.Join(dir, "blaze", "chunks.dat")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[(start+end)/2] ^= 0xff
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Damaged() || !errors.Is(r.Databases[0].Engine, blazedb.ErrCorrupt) {
		t.Fatalf("engine check: %v", r.Databases[0].Engine)
	}
	if len(r.Failed) != 1 || r.Columns != 3*4 || !errors.Is(r.Failed[0].Err, blazedb.ErrCorrupt) {
		t.Fatalf("failures %v, %d columns read", r.Failed, r.Columns)
	}
	if want := "column " + victim.String(); !bytes.HasPrefix([]byte(r.Failed[0].What), []byte(want)) {
		t.Fatalf("failure names %q, want %q", r.Failed[0].What, want)
	}
}

// A segmented world is checked region by region: every column is read,
// and damage in one region is found there.
func TestCheckSegmentedWorld(t *testing.T) {
	dir := t.TempDir()
	p, err := segment.Config{Log: quiet, SegmentSize: 4}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		col := worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
		if err := p.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.SavePlayerSpawnPosition(uuid.New(), cube.Pos{0, 64, 0}); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	var bar bytes.Buffer
	r, err := Check(dir, Options{Progress: &bar})
	if err != nil {
		t.Fatal(err)
	}
	if r.Damaged() || r.Columns != 12 || r.Players != 1 || len(r.Databases) != 4 {
		t.Fatalf("report %+v", r)
	}
	// One progress bar for the whole world, not one a region, counted
	// from its first line to its last; between them, each database's
	// engine check (issue 38 item 5).
	lines := strings.Split(strings.TrimSuffix(bar.String(), "\n"), "\n")
	if len(lines) != 2+2*4 || lines[0] != "checking" || !strings.HasPrefix(lines[len(lines)-1], "checking: 12 columns done in ") ||
		lines[1] != "checking the log of "+dir || !strings.HasPrefix(lines[8], "checking the log of "+filepath.Join(dir, "regions", "0", "r.2.0")+": done in ") {
		t.Fatalf("progress drawn: %q", bar.String())
	}
	log := filepath.Join(dir, "regions", "0", "r.1.0", "blaze", "chunks.dat")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	os.WriteFile(log, b, 0o644)
	r, err = Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Damaged() || len(r.Failed) != 1 || r.Columns != 11 {
		t.Fatalf("after damage to region 1: %+v", r)
	}
	for _, d := range r.Databases {
		if d.Damaged() != (d.Dir == filepath.Dir(filepath.Dir(log))) {
			t.Fatalf("database %s: damaged %v", d.Dir, d.Damaged())
		}
	}
}

func TestCheckRefusesWhatIsNotABlazeWorld(t *testing.T) {
	if _, err := Check(filepath.Join(t.TempDir(), "missing"), Options{}); err == nil {
		t.Fatal("a missing directory checked")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "db"), 0o755)
	if _, err := Check(dir, Options{}); !errors.Is(err, provider.ErrLevelDBWorld) {
		t.Fatalf("a LevelDB world: %v", err)
	}
}

func snapshotDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func equalDirs(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// A damaged dictionary record is damage; the world's copy of the
// dictionary (dictionary.dat) still reads every column, and repair writes
// the entry back.
func TestCheckDamagedDictionary(t *testing.T) {
	dir := t.TempDir()
	writeWorld(t, dir, 2)
	damageDictionary(t, dir)
	r, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Damaged() || len(r.Databases) != 1 || len(r.Databases[0].DictionaryRestored) == 0 || len(r.Failed) != 0 {
		t.Fatalf("report %+v", r)
	}
	if _, err := (provider.Config{Log: quiet}).Repair(dir); err != nil {
		t.Fatal(err)
	}
	if r, err = Check(dir, Options{}); err != nil || r.Damaged() {
		t.Fatalf("after repair: %+v, %v", r, err)
	}
}

// Without the copy a damaged dictionary record keeps the world from
// opening: check reports it rather than stop.
func TestCheckDamagedDictionaryWithoutCopy(t *testing.T) {
	dir := t.TempDir()
	writeWorld(t, dir, 2)
	damageDictionary(t, dir)
	os.Remove(filepath.Join(dir, "dictionary.dat"))
	if _, err := (provider.Config{Log: quiet, ReadOnly: true}).Open(dir); !errors.Is(err, blazedb.ErrCorrupt) {
		t.Fatalf("the test needs a world that does not open: %v", err)
	}
	r, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Damaged() || len(r.Databases) != 1 || !errors.Is(r.Databases[0].Engine, blazedb.ErrCorrupt) {
		t.Fatalf("report %+v", r)
	}
	// Repair keeps what it cannot restore as lost entries (dictionary
	// entries are written once); the world opens again, and the columns
	// whose block states went with them fail loudly instead of loading
	// wrong.
	if _, err := (provider.Config{Log: quiet}).Repair(dir); err != nil {
		t.Fatal(err)
	}
	r, err = Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Databases[0].Damaged() || len(r.Failed) == 0 {
		t.Fatalf("after repair: %+v", r)
	}
	for _, f := range r.Failed {
		if !errors.Is(f.Err, provider.ErrUnknownState) && !errors.Is(f.Err, provider.ErrColumnCorrupt) {
			t.Fatalf("%v", f)
		}
	}
}

// damageDictionary flips a byte among the dictionary entries that the
// first store wrote, at the start of the log.
func damageDictionary(t *testing.T, dir string) {
	t.Helper()
	log := filepath.Join(dir, "blaze", "chunks.dat")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// Among the first column's dictionary entries, which its batch holds
	// after the world's edition (provider's dictcopy_test draws it), behind
	// the 68-byte header copy that starts the log since format version 3.
	b[200+68] ^= 0xff
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Issue 37 (one corruption marker): a record that reads intact and does
// not decode, here a block dictionary record whose name holds no id,
// keeps the world from opening with an error that is now
// blazedb.ErrCorrupt too (a provider.CorruptionError naming it). Check
// reports it as damage rather than stop, as it does for a record whose
// checksum fails: it used to stop with the error.
func TestCheckReportsRecordThatDoesNotDecode(t *testing.T) {
	dir := t.TempDir()
	writeWorld(t, dir, 1)
	worldtest.PutRecords(t, filepath.Join(dir, "blaze"), nil, map[string][]byte{"dict/zz": []byte("x")}, nil)
	r, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ce provider.CorruptionError
	if !r.Damaged() || len(r.Databases) != 1 || !errors.As(r.Databases[0].Engine, &ce) || ce.Record != `named record "dict/zz"` {
		t.Fatalf("report %+v", r)
	}
}
