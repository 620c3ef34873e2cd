package provider

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider/internal/nbt"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/dragonfly/server/world/mcdb/leveldat"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

var dims = []world.Dimension{world.Overworld, world.Nether, world.End}

func TestAllDimensionsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	want := map[string]*chunk.Column{}
	for i, dim := range dims {
		for j := 0; j < 4; j++ {
			pos := world.ChunkPos{int32(j - 2), int32(i*7 - 3)}
			col := worldtest.Synthetic(uint64(i*10+j), dim, world.DefaultBlockRegistry)
			want[fmt.Sprint(dim, pos)] = worldtest.Synthetic(uint64(i*10+j), dim, world.DefaultBlockRegistry)
			if err := db.StoreColumn(pos, dim, col); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Close()
	db = openDB(t, dir, Config{})
	for i, dim := range dims {
		for j := 0; j < 4; j++ {
			pos := world.ChunkPos{int32(j - 2), int32(i*7 - 3)}
			got, err := db.LoadColumn(pos, dim)
			if err != nil {
				t.Fatal(err)
			}
			if err := worldtest.Compare(want[fmt.Sprint(dim, pos)], got); err != nil {
				t.Fatalf("%v %v: %v", dim, pos, err)
			}
		}
	}
	// Dimensions are separate: the same position in another dimension.
	if _, err := db.LoadColumn(world.ChunkPos{-2, -3}, world.End); err == nil {
		t.Fatal("overworld column visible in the End")
	}
	// Columns lists every one, dimension by dimension.
	places, err := db.Columns()
	if err != nil || len(places) != len(want) {
		t.Fatalf("Columns: %d places, %v", len(places), err)
	}
	for i, p := range places {
		if want[fmt.Sprint(p.Dim, p.Pos)] == nil || (i > 0 && dimID(p.Dim) < dimID(places[i-1].Dim)) {
			t.Fatalf("Columns: %v out of place at %d", p, i)
		}
	}
}

func dimID(d world.Dimension) int { id, _ := world.DimensionID(d); return id }

// LoadColumn hands out a column nobody else holds; StoreColumn keeps its
// own snapshot.
func TestColumnOwnership(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	pos := world.ChunkPos{1, 2}
	col := worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry)
	want := worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry)
	stone := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	// The World keeps mutating the column it stored.
	col.Chunk.SetBlock(0, 0, 0, 0, stone)
	col.BlockEntities[0].Data["CustomName"] = "changed after store"
	a, _ := db.LoadColumn(pos, world.Overworld)
	if err := worldtest.Compare(want, a); err != nil {
		t.Fatalf("store did not snapshot: %v", err)
	}
	// A loaded column is the caller's alone.
	a.Chunk.SetBlock(5, 5, 5, 0, stone)
	a.BlockEntities[0].Data["Items"].([]any)[0].(map[string]any)["Count"] = uint8(64)
	b, _ := db.LoadColumn(pos, world.Overworld)
	if a == b || a.Chunk == b.Chunk {
		t.Fatal("two loads returned the same column")
	}
	if err := worldtest.Compare(want, b); err != nil {
		t.Fatalf("mutating a loaded column changed the next load: %v", err)
	}
}

// A store that changes blocks but not NBT keeps the previous snapshot's
// copies of the block entities and entities; those stay the provider's
// own, whatever the World does to its maps after the store, and a store
// that changes NBT takes new copies.
func TestStoreWithSameNBTSharesPrivateCopies(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	pos := world.ChunkPos{3, 4}
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	col := worldtest.Synthetic(5, world.Overworld, world.DefaultBlockRegistry)
	want := worldtest.Synthetic(5, world.Overworld, world.DefaultBlockRegistry)
	if err := storeNow(db, pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	k, _ := key(pos, world.Overworld)
	first, _ := db.cols.peek(k)
	col.Chunk.SetBlock(1, 2, 3, 0, obsidian)
	want.Chunk.SetBlock(1, 2, 3, 0, obsidian)
	if err := storeNow(db, pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	second, _ := db.cols.peek(k)
	if second == first || len(second.blockEntities) == 0 || &second.blockEntities[0] != &first.blockEntities[0] {
		t.Fatal("a store with unchanged NBT did not share the previous snapshot's copies")
	}
	// The World edits its maps in place after the store.
	col.BlockEntities[0].Data["CustomName"] = "after the store"
	col.Entities[0].Data["Pos"].([]any)[0] = float32(99)
	got, err := db.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(want, got); err != nil {
		t.Fatalf("the World's edits after a store reached the snapshot: %v", err)
	}
	// Stored again, the edits are the column's.
	if err := storeNow(db, pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	want.BlockEntities[0].Data["CustomName"] = "after the store"
	want.Entities[0].Data["Pos"].([]any)[0] = float32(99)
	if got, err = db.LoadColumn(pos, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(want, got); err != nil {
		t.Fatalf("a store that changed NBT kept the old copies: %v", err)
	}
}

// A prefetched column's ready copy is handed out once, is the caller's
// alone, and never outlives a store of the column.
func TestPrefetchedColumnReadyOnce(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	pos := world.ChunkPos{4, 5}
	want := worldtest.Synthetic(7, world.Overworld, world.DefaultBlockRegistry)
	if err := db.StoreColumn(pos, world.Overworld, worldtest.Synthetic(7, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openDB(t, dir, Config{})
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	k, _ := key(pos, world.Overworld)

	if read, err := db.Prefetch(pos, world.Overworld); err != nil || !read {
		t.Fatalf("prefetch: %v, %v", read, err)
	}
	s, _ := db.cols.peek(k)
	if s.ready == nil || s.readyCost == 0 {
		t.Fatal("prefetch kept no ready copy")
	}
	charged := db.cols.used
	a, err := db.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if s.ready != nil || db.cols.used != charged-int64(s.lay.RawSize) {
		t.Fatalf("the ready copy was not taken out of the cache and its charge (%d -> %d)", charged, db.cols.used)
	}
	if err := worldtest.Compare(want, a); err != nil {
		t.Fatal(err)
	}
	// The caller owns it: mutating it changes nothing the provider keeps.
	a.Chunk.SetBlock(1, 1, 1, 0, obsidian)
	a.BlockEntities[0].Data["CustomName"] = "mine"
	b, err := db.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if b.Chunk == a.Chunk {
		t.Fatal("the ready copy was handed out twice")
	}
	if err := worldtest.Compare(want, b); err != nil {
		t.Fatalf("mutating the ready copy changed the cache: %v", err)
	}
	// Prefetching a cached column gives it a ready copy again, once.
	if did, _ := db.Prefetch(pos, world.Overworld); !did {
		t.Fatal("prefetch of a cached column made no ready copy")
	}
	if did, _ := db.Prefetch(pos, world.Overworld); did {
		t.Fatal("prefetch made a second ready copy")
	}
	if c, _ := db.LoadColumn(pos, world.Overworld); s.ready != nil || worldtest.Compare(want, c) != nil {
		t.Fatal("the second ready copy was not handed out, or is wrong")
	}

	// A store after a prefetch: the next load is the stored column, not
	// the prefetched copy.
	pos2 := world.ChunkPos{6, 5}
	if err := db.StoreColumn(pos2, world.Overworld, worldtest.Synthetic(8, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openDB(t, dir, Config{})
	if _, err := db.Prefetch(pos2, world.Overworld); err != nil {
		t.Fatal(err)
	}
	changed := worldtest.Synthetic(8, world.Overworld, world.DefaultBlockRegistry)
	changed.Chunk.SetBlock(2, 2, 2, 0, obsidian)
	if err := db.StoreColumn(pos2, world.Overworld, changed); err != nil {
		t.Fatal(err)
	}
	c, err := db.LoadColumn(pos2, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(changed, c); err != nil {
		t.Fatalf("a load after a store returned the prefetched copy: %v", err)
	}
}

// Dragonfly stores every modified column again on each autosave; an
// unchanged one must append nothing, cached or not.
func TestUnchangedStoreAppendsNothing(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	pos := world.ChunkPos{0, 0}
	col := worldtest.Synthetic(5, world.Overworld, world.DefaultBlockRegistry)
	storeNow(db, pos, world.Overworld, col)
	size := db.Engine().Stats().LogBytes
	for i := 0; i < 5; i++ {
		if err := storeNow(db, pos, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
	}
	loaded, _ := db.LoadColumn(pos, world.Overworld)
	storeNow(db, pos, world.Overworld, loaded)
	if got := db.Engine().Stats().LogBytes; got != size {
		t.Fatalf("unchanged stores appended %d bytes", got-size)
	}
	db.Close()
	// After a reopen nothing is cached: the engine's elision catches it.
	db = openDB(t, dir, Config{ColumnCacheBytes: -1})
	size = db.Engine().Stats().LogBytes
	storeNow(db, pos, world.Overworld, col)
	if got := db.Engine().Stats().LogBytes; got != size {
		t.Fatalf("unchanged store after reopen appended %d bytes", got-size)
	}
	col.Chunk.SetBlock(1, 1, 1, 0, worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"])
	storeNow(db, pos, world.Overworld, col)
	if db.Engine().Stats().LogBytes == size {
		t.Fatal("a changed column was not stored")
	}
}

func TestSettingsSharedAndSavedAtomically(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	s := db.Settings()
	if s != db.Settings() {
		t.Fatal("Settings returned two pointers")
	}
	s.Name = "Arena of Blaze"
	s.Spawn = cube.Pos{10, 70, -4}
	s.Time = 12345
	db.SaveSettings(s)
	// level.dat is Dragonfly's own format: leveldat reads it.
	ld, err := leveldat.ReadFile(filepath.Join(dir, "level.dat"))
	if err != nil {
		t.Fatal(err)
	}
	var d leveldat.Data
	if err := ld.Unmarshal(&d); err != nil || d.LevelName != "Arena of Blaze" {
		t.Fatalf("level.dat: %q %v", d.LevelName, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "level.dat.tmp")); err == nil {
		t.Fatal("temporary file left behind")
	}
	db.Close()
	db = openDB(t, dir, Config{})
	if got := db.Settings(); got.Name != "Arena of Blaze" || got.Spawn != s.Spawn || got.Time != 12345 {
		t.Fatalf("settings after reopen: %+v", got)
	}
}

// SaveSettings has no error to return: a failure to write level.dat is
// returned by Close, even when a later save succeeded.
func TestFailedSaveSettingsReportedByClose(t *testing.T) {
	var armed atomic.Bool
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		if op == vfstest.OpRename && armed.Load() && filepath.Base(name) == levelDatName {
			return errors.New("injected: rename fails")
		}
		return nil
	})
	db := openDB(t, t.TempDir(), Config{FS: fs})
	armed.Store(true)
	db.SaveSettings(db.Settings())
	armed.Store(false)
	db.SaveSettings(db.Settings())
	if err := db.Close(); err == nil || !strings.Contains(err.Error(), "injected: rename fails") {
		t.Fatalf("Close after a failed SaveSettings: %v", err)
	}
}

// levelname.txt follows the world's name, and is replaced only when the
// name changes: saving the same settings again replaces level.dat alone.
func TestLevelNameReplacedOnlyWhenChanged(t *testing.T) {
	var renames []string
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		if op == vfstest.OpRename {
			renames = append(renames, filepath.Base(name))
		}
		return nil
	})
	dir := t.TempDir()
	db := openDB(t, dir, Config{FS: fs})
	defer db.Close()
	s := db.Settings()
	s.Name = "Lobby"
	renames = nil
	db.SaveSettings(s)
	if b, _ := os.ReadFile(filepath.Join(dir, "levelname.txt")); string(b) != "Lobby" || !slices.Contains(renames, "levelname.txt") {
		t.Fatalf("levelname.txt %q after renaming the world (renames %v)", b, renames)
	}
	s.Time = 999
	renames = nil
	db.SaveSettings(s)
	if !slices.Contains(renames, "level.dat") || slices.Contains(renames, "levelname.txt") {
		t.Fatalf("saving with the same name replaced %v", renames)
	}
}

// With NoLevelDat a database never touches level.dat or levelname.txt:
// none is made, an existing one (even unreadable) is neither read nor
// rewritten, and its settings live in memory only.
func TestNoLevelDat(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{NoLevelDat: true})
	s := db.Settings()
	if s == nil || s != db.Settings() {
		t.Fatal("no shared settings")
	}
	s.Name = "region"
	db.SaveSettings(s)
	if err := db.StoreColumn(world.ChunkPos{1, 1}, world.Overworld, worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"level.dat", "levelname.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Fatalf("%s written", name)
		}
	}
	junk := []byte("not a level.dat")
	if err := os.WriteFile(filepath.Join(dir, "level.dat"), junk, 0o644); err != nil {
		t.Fatal(err)
	}
	db = openDB(t, dir, Config{NoLevelDat: true})
	if _, err := db.LoadColumn(world.ChunkPos{1, 1}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	db.SaveSettings(db.Settings())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "level.dat")); !bytes.Equal(b, junk) {
		t.Fatal("level.dat rewritten")
	}
	// Without the option the same file is read, and refused.
	if _, err := (Config{Log: quiet}).Open(dir); err == nil {
		t.Fatal("an unreadable level.dat opened")
	}
}

func TestPlayerSpawns(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{Durability: blazedb.DurabilitySafe})
	id := uuid.New()
	if _, ok, err := db.LoadPlayerSpawnPosition(id); ok || err != nil {
		t.Fatalf("unknown player: %v %v", ok, err)
	}
	if err := db.SavePlayerSpawnPosition(id, cube.Pos{-100, -60, 2000000}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openDB(t, dir, Config{})
	pos, ok, err := db.LoadPlayerSpawnPosition(id)
	if !ok || err != nil || pos != (cube.Pos{-100, -60, 2000000}) {
		t.Fatalf("spawn %v %v %v", pos, ok, err)
	}
}

// A block state the registry does not know fails the load loudly, names
// the state, and the column is never overwritten while the DB is open.
func TestUnknownStateFailsLoudlyAndIsKept(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	pos, other := world.ChunkPos{3, 3}, world.ChunkPos{4, 4}
	col := worldtest.Synthetic(8, world.Overworld, world.DefaultBlockRegistry)
	db.StoreColumn(pos, world.Overworld, col)
	db.StoreColumn(other, world.Overworld, worldtest.Synthetic(9, world.Overworld, world.DefaultBlockRegistry))
	// The store queue (issue 42) gives the column's blocks their ids when
	// it writes them: Sync writes them now.
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	// Rename the dictionary entry of obsidian... rather: of gold ore, which
	// the column uses, to a block this registry has never heard of.
	gold := worldtest.States(world.DefaultBlockRegistry)["minecraft:gold_ore"]
	db.dict.mu.Lock()
	id := db.dict.ridToID[gold]
	db.dict.mu.Unlock()
	db.Close()
	eng, err := blazedb.Open(filepath.Join(dir, engineDir), blazedb.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	v := []byte(nil)
	{
		var e dictEntry
		e.Name, e.States, e.Version = "plugin:ruby_ore", map[string]any{}, chunk.CurrentBlockVersion
		b, err := marshalEntry(&e)
		if err != nil {
			t.Fatal(err)
		}
		v = b
	}
	if err := eng.PutNamed(fmt.Sprintf("%s%x", dictPrefix, id), v); err != nil {
		t.Fatal(err)
	}
	before, _ := eng.Get(blazedb.Key{X: 3, Z: 3})
	eng.Close()

	db = openDB(t, dir, Config{})
	_, err = db.LoadColumn(pos, world.Overworld)
	if !errors.Is(err, ErrUnknownState) || errors.Is(err, ErrColumnCorrupt) || !containsAll(err.Error(), "plugin:ruby_ore", "(3, 3)") {
		t.Fatalf("load: %v, want an unknown state, not damage", err)
	}
	if _, err := db.LoadColumn(other, world.Overworld); err != nil && !errors.Is(err, ErrUnknownState) {
		t.Fatalf("other column: %v", err)
	}
	err = db.StoreColumn(pos, world.Overworld, worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry))
	if !errors.Is(err, ErrUnknownState) {
		t.Fatalf("store over an unloadable column: %v", err)
	}
	after, _ := db.Engine().Get(blazedb.Key{X: 3, Z: 3})
	if string(before) != string(after) {
		t.Fatal("the column was overwritten")
	}
}

// A registry set while the DB is open applies to every later load, cached
// columns included (they were decoded with the old runtime ids), and a
// column that failed to load under the old one may be stored again once
// it can be read, and not before.
func TestSetBlockRegistryWhileOpen(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	pos, dim := world.ChunkPos{1, 2}, world.Overworld
	col := worldtest.Synthetic(8, dim, world.DefaultBlockRegistry)
	if err := db.StoreColumn(pos, dim, col); err != nil {
		t.Fatal(err)
	}
	if _, err := db.LoadColumn(pos, dim); err != nil { // now cached
		t.Fatal(err)
	}
	moved := worldtest.PermutedRegistry(5, "")
	db.SetBlockRegistry(moved)
	got, err := db.LoadColumn(pos, dim)
	if err != nil {
		t.Fatal(err)
	}
	if err := moved.CheckMoved(col, got); err != nil {
		t.Fatalf("a cached column under the new registry: %v", err)
	}
	db.Close()

	// Opened with a registry that lacks gold ore, which the column holds:
	// the load fails and the column is refused for writing until a
	// registry that knows it is set.
	db = openDB(t, dir, Config{Blocks: worldtest.PermutedRegistry(7, "minecraft:gold_ore")})
	if _, err := db.LoadColumn(pos, dim); !errors.Is(err, ErrUnknownState) {
		t.Fatalf("load without gold ore: %v", err)
	}
	if err := db.StoreColumn(pos, dim, col); !errors.Is(err, ErrUnknownState) {
		t.Fatalf("store over the unloadable column: %v", err)
	}
	// Another registry that lacks it too: still refused, and so is the
	// store that a caller holding a stand-in for the column might make.
	other := worldtest.PermutedRegistry(8, "minecraft:gold_ore")
	db.SetBlockRegistry(other)
	stand := &chunk.Column{Chunk: chunk.New(other, dim.Range())} // what a World makes of a failed load
	if err := db.StoreColumn(pos, dim, stand); !errors.Is(err, ErrUnknownState) {
		t.Fatalf("store over the unloadable column under another registry without gold ore: %v", err)
	}
	db.SetBlockRegistry(world.DefaultBlockRegistry)
	if err := db.StoreColumn(pos, dim, col); err != nil {
		t.Fatalf("store once the registry knows the state: %v", err)
	}
	got, err = db.LoadColumn(pos, dim)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(got, col); err != nil {
		t.Fatal(err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !contains(s, sub) {
			return false
		}
	}
	return true
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}

// A damaged record gives an error wrapping blazedb.ErrCorrupt; one bad
// column never hides the others.
func TestCorruptColumnReported(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{Compression: blazedb.CompressionNone})
	for i := int32(0); i < 3; i++ {
		db.StoreColumn(world.ChunkPos{i, 0}, world.Overworld, worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry))
	}
	db.Close()
	log := filepath.Join(dir, engineDir, "chunks.dat")
	st, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, log, st.Size()/2) // inside the middle column
	db = openDB(t, dir, Config{})
	bad := 0
	for i := int32(0); i < 3; i++ {
		_, err := db.LoadColumn(world.ChunkPos{i, 0}, world.Overworld)
		if err != nil {
			if !errors.Is(err, blazedb.ErrCorrupt) || !contains(err.Error(), "offset") {
				t.Fatalf("column %d: %v", i, err)
			}
			bad++
		}
	}
	if bad != 1 {
		t.Fatalf("%d columns failed, want 1", bad)
	}
}

func TestRefusesLevelDBWorld(t *testing.T) {
	dir := worldtest.UnpackTemp(t, worldtest.Worlds(t)[0])
	_, err := Config{Log: quiet}.Open(dir)
	if !errors.Is(err, ErrLevelDBWorld) {
		t.Fatalf("open of a LevelDB world: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, engineDir)); err == nil {
		t.Fatal("created files in a LevelDB world")
	}
}

// Issue 38 item 2: a LevelDB world's database folder itself (WORLD/db,
// holding CURRENT and MANIFEST-*) was taken for an empty directory, and an
// empty Blaze world was made inside it. It is refused, read-only too, with
// an error that names the world's folder and `blaze convert`, and nothing
// in it is touched.
func TestRefusesLevelDBDatabaseFolder(t *testing.T) {
	wdir := worldtest.UnpackTemp(t, worldtest.Worlds(t)[0])
	dir := filepath.Join(wdir, "db")
	before, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, conf := range []Config{{Log: quiet}, {Log: quiet, ReadOnly: true}} {
		_, err := conf.Open(dir)
		if !errors.Is(err, ErrLevelDBWorld) {
			t.Fatalf("open of a LevelDB database folder (read-only %v): %v", conf.ReadOnly, err)
		}
		if msg := err.Error(); !contains(msg, "blaze convert "+wdir) || !contains(msg, "MANIFEST-") {
			t.Fatalf("the error names neither the world's folder nor what to do: %v", err)
		}
	}
	after, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("the database folder held %d files and holds %d", len(before), len(after))
	}
	if _, err := os.Stat(filepath.Join(dir, engineDir)); err == nil {
		t.Fatal("created a Blaze world in a LevelDB database folder")
	}
}

// An arena overlay's directory holds a CURRENT of its own but no MANIFEST:
// it is no LevelDB database folder.
func TestCurrentAloneIsNoLevelDBFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	openDB(t, dir, Config{})
}

// A real Dragonfly World stores through Blaze and finds its blocks after a
// restart.
func TestDragonflyWorld(t *testing.T) {
	dir := t.TempDir()
	open := func() *world.World {
		db := openDB(t, dir, Config{})
		return world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	}
	w := open()
	<-w.Do(func(tx *world.Tx) {
		tx.SetBlock(cube.Pos{1, 64, 1}, block.Stone{}, nil)
		tx.SetBlock(cube.Pos{-40, -60, 100}, block.Obsidian{}, nil)
		tx.SetBlock(cube.Pos{300, 200, -300}, block.Glowstone{}, nil)
	}).Done()
	w.Close() // saves every chunk and closes the provider
	w = open()
	defer w.Close()
	<-w.Do(func(tx *world.Tx) {
		if _, ok := tx.Block(cube.Pos{1, 64, 1}).(block.Stone); !ok {
			t.Errorf("stone lost: %T", tx.Block(cube.Pos{1, 64, 1}))
		}
		if _, ok := tx.Block(cube.Pos{-40, -60, 100}).(block.Obsidian); !ok {
			t.Errorf("obsidian lost")
		}
		if _, ok := tx.Block(cube.Pos{300, 200, -300}).(block.Glowstone); !ok {
			t.Errorf("glowstone lost")
		}
	}).Done()
}

// Three dimensions call at once while compaction, prefetching and pinning
// run beside them, in a column cache small enough to evict; callers mutate
// the columns they stored and loaded. Every load must return the column as
// its dimension last stored it, and so must the world reopened. Run with
// -race: any sharing between a caller and Blaze shows up as a race.
func TestConcurrentDimensions(t *testing.T) {
	dir := t.TempDir()
	// A few synthetic columns' worth of the 15: about half the loads miss
	// (with 1 MiB, some runs had none but the first loads).
	db := openDB(t, dir, Config{ColumnCacheBytes: 512 << 10})
	db.quiet.Store(0) // the snapshot worker runs beside the loads
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	const positions, rounds = 5, 40
	posOf := func(d, i int) world.ChunkPos { return world.ChunkPos{int32(i % positions), int32(d)} }

	var wg sync.WaitGroup
	stop := make(chan struct{})
	background := func(f func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
					f(i)
				}
			}
		}()
	}
	background(func(int) {
		if err := db.Engine().Compact(); err != nil {
			t.Error(err)
		}
	})
	background(func(i int) {
		dim := dims[i%len(dims)]
		if _, err := db.Prefetch(posOf(dimID(dim), i/len(dims)), dim); err != nil {
			t.Error(err)
		}
		time.Sleep(200 * time.Microsecond) // as a prefetcher's workers, not flat out
	})
	background(func(i int) {
		pos := posOf(0, i)
		if err := db.Pin(pos, world.Overworld); err != nil {
			t.Error(err)
		}
		time.Sleep(time.Millisecond)
		db.Unpin(pos, world.Overworld)
	})

	// want holds each column as its dimension's worker last stored it.
	want := make([]map[world.ChunkPos]*chunk.Column, len(dims))
	var workers sync.WaitGroup
	for d, dim := range dims {
		want[d] = map[world.ChunkPos]*chunk.Column{}
		workers.Add(1)
		go func() {
			defer workers.Done()
			for i := 0; i < rounds; i++ {
				pos := posOf(d, i)
				col, err := db.LoadColumn(pos, dim)
				switch prev := want[d][pos]; {
				case prev == nil && errors.Is(err, leveldb.ErrNotFound):
					col = worldtest.Synthetic(uint64(i), dim, world.DefaultBlockRegistry)
				case err != nil:
					t.Errorf("round %d: %v", i, err)
					return
				default:
					if err := worldtest.Compare(col, prev); err != nil {
						t.Errorf("round %d: load of %v (%v) is not what was stored: %v", i, pos, dim, err)
						return
					}
				}
				col.Chunk.SetBlock(uint8(i%16), int16(dim.Range()[0]+i), 0, 0, obsidian)
				if err := db.StoreColumn(pos, dim, col); err != nil {
					t.Error(err)
					return
				}
				want[d][pos] = &chunk.Column{Chunk: col.Chunk.Clone(), Tick: col.Tick, BlockEntities: nbt.CloneBlockEntities(col.BlockEntities),
					Entities: nbt.CloneEntities(col.Entities), ScheduledBlocks: slices.Clone(col.ScheduledBlocks)}
				col.Chunk.SetBlock(uint8(i%16), int16(dim.Range()[0]+i), 1, 0, obsidian) // after the store
				if len(col.BlockEntities) > 0 {
					col.BlockEntities[0].Data["x"] = int32(i)
				}
			}
		}()
	}
	workers.Wait()
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}
	// Each column's first load misses, having nothing stored; more misses
	// are loads of evicted columns.
	if hits, misses := db.CacheStats(); misses <= positions*int64(len(dims)) {
		t.Errorf("%d hits, %d misses: the test no longer evicts", hits, misses)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDB(t, dir, Config{})
	for d, dim := range dims {
		for pos, w := range want[d] {
			col, err := db.LoadColumn(pos, dim)
			if err != nil {
				t.Fatal(err)
			}
			if err := worldtest.Compare(col, w); err != nil {
				t.Errorf("after reopening, %v (%v): %v", pos, dim, err)
			}
		}
	}
}

func sleepMs(n int) { time.Sleep(time.Duration(n) * time.Millisecond) }

// Databases holding the same dictionary entries (a segmented world's
// regions, an arena's template and overlay) decode and resolve each once
// per process: later ones share the first's decoded states, and all load
// the same columns. The later two open at once, under the race detector.
func TestDictionaryEntriesSharedAcrossDatabases(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	col := worldtest.Synthetic(11, world.Overworld, world.DefaultBlockRegistry)
	db := openDB(t, dirs[0], Config{})
	if err := db.StoreColumn(world.ChunkPos{1, 2}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, dir := range dirs[1:] {
		if err := fsutil.CopyTree(dirs[0], dir, nil); err != nil {
			t.Fatal(err)
		}
	}
	dbs := []*DB{openDB(t, dirs[0], Config{}), nil, nil}
	var wg sync.WaitGroup
	for i := 1; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Config{Log: quiet}.Open(dirs[i])
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(func() { c.Close() })
			dbs[i] = c
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	first := dbs[0].dict
	for _, db := range dbs {
		got, err := db.LoadColumn(world.ChunkPos{1, 2}, world.Overworld)
		if err != nil {
			t.Fatal(err)
		}
		if err := worldtest.Compare(col, got); err != nil {
			t.Fatal(err)
		}
		if len(db.dict.entries) == 0 || len(db.dict.entries) != len(first.entries) {
			t.Fatalf("%d and %d entries", len(db.dict.entries), len(first.entries))
		}
		for id, e := range db.dict.entries {
			if db != dbs[0] && (e == first.entries[id] || reflect.ValueOf(e.States).Pointer() != reflect.ValueOf(first.entries[id].States).Pointer()) {
				t.Fatalf("entry %d: not decoded once and shared (each dictionary keeps its own entry, sharing its states)", id)
			}
			if db.dict.idToRID[id] != first.idToRID[id] {
				t.Fatalf("entry %d resolves differently", id)
			}
		}
	}
}

// Exists tells a world from a directory where Open would make one.
func TestExists(t *testing.T) {
	dir := t.TempDir()
	if (Config{}).Exists(dir) || (Config{}).Exists(filepath.Join(dir, "missing")) {
		t.Fatal("an empty or missing directory holds a world")
	}
	os.MkdirAll(filepath.Join(dir, engineDir), 0o755)
	if (Config{}).Exists(dir) {
		t.Fatal("an empty engine directory holds a world")
	}
	openDB(t, dir, Config{}).Close()
	if !(Config{}).Exists(dir) {
		t.Fatal("a world made by Open does not exist")
	}
}

// PlayerSpawns lists every stored spawn, and each it cannot read with the
// reason.
func TestPlayerSpawnsListed(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	defer db.Close()
	a, b := uuid.New(), uuid.New()
	db.SavePlayerSpawnPosition(a, cube.Pos{1, 2, 3})
	db.SavePlayerSpawnPosition(b, cube.Pos{-4, 5, -6})
	db.Engine().PutNamed(playerPrefix+"not-a-uuid", []byte{playerVersion, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	upper := strings.ToUpper(uuid.New().String())
	db.Engine().PutNamed(playerPrefix+upper, []byte{playerVersion, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	c := uuid.New()
	db.Engine().PutNamed(playerPrefix+c.String(), []byte{playerVersion, 1})
	d, e := uuid.New(), uuid.New()
	db.Engine().PutNamed(playerPrefix+d.String(), []byte{playerVersion + 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	db.Engine().PutNamed(playerPrefix+e.String(), nil)
	spawns, err := db.PlayerSpawns()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]PlayerSpawn{}
	for _, p := range spawns {
		got[p.Name] = p
	}
	if len(got) != 7 || got[a.String()].Pos != (cube.Pos{1, 2, 3}) || got[b.String()].ID != b || got[b.String()].Err != nil ||
		!errors.Is(got["not-a-uuid"].Err, ErrColumnCorrupt) || !errors.Is(got[upper].Err, ErrColumnCorrupt) ||
		!errors.Is(got[c.String()].Err, ErrColumnCorrupt) || !errors.Is(got[e.String()].Err, ErrColumnCorrupt) {
		t.Fatalf("%+v", spawns)
	}
	// A newer version says so rather than calling the record short.
	if err := got[d.String()].Err; !errors.Is(err, ErrColumnCorrupt) || !strings.Contains(err.Error(), "version 2 is newer") {
		t.Fatalf("newer record: %v", err)
	}
}

// A column Blaze cannot store as given (here a nil layer, which
// Dragonfly's decoders make from a layer written as a repeated biome
// storage's marker) is refused with ErrInvalidColumn, writing nothing;
// encoding it used to panic.
func TestStoreInvalidColumn(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	rng := world.Overworld.Range()
	data := []byte{chunk.SubChunkVersion, 1, byte(rng[0] >> 4), 0x7f<<1 | 1}
	data = append(data, 1, 2) // the biomes: one storage of biome 1, then repeats
	data = append(data, bytes.Repeat([]byte{0x7f<<1 | 1}, (rng[1]-rng[0]+1)>>4-1)...)
	c, err := chunk.NetworkDecode(world.DefaultBlockRegistry, data, 1, rng)
	if err != nil {
		t.Fatal(err)
	}
	if c.Sub()[0].Layers()[0] != nil {
		t.Fatal("the test needs a chunk with a nil layer")
	}
	before := db.Engine().Stats().LogBytes
	err = db.StoreColumn(world.ChunkPos{1, 2}, world.Overworld, &chunk.Column{Chunk: c})
	if !errors.Is(err, ErrInvalidColumn) {
		t.Fatalf("store: %v", err)
	}
	if got := db.Engine().Stats().LogBytes; got != before {
		t.Fatalf("a refused column appended %d bytes", got-before)
	}
	if _, err := db.LoadColumn(world.ChunkPos{1, 2}, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("load after the refused store: %v", err)
	}
}

// A column that cannot be read is not left pinned by the Pin that failed
// on it: its caller has no pin to undo.
func TestFailedPinPinsNothing(t *testing.T) {
	mem := vfstest.NewMem()
	var failReads atomic.Bool
	fs := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
		if op == vfstest.OpRead && failReads.Load() && filepath.Base(name) == "chunks.dat" {
			return errors.New("injected: read fails")
		}
		return nil
	})
	db := openDB(t, "/w", Config{FS: fs})
	pos := world.ChunkPos{1, 1}
	if err := db.StoreColumn(pos, world.Overworld, worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openDB(t, "/w", Config{FS: fs})
	failReads.Store(true)
	if err := db.Pin(pos, world.Overworld); err == nil {
		t.Fatal("Pin of an unreadable column succeeded")
	}
	cols, _ := db.columns()
	k, _ := key(pos, world.Overworld)
	cols.mu.Lock()
	n := cols.pinned[k]
	cols.mu.Unlock()
	if n != 0 {
		t.Fatalf("a failed Pin left the column pinned %d times", n)
	}
}

// Every call that can fail on a closed DB reports ErrClosed, which is
// blazedb.ErrClosed too: one check covers each Blaze handle.
func TestClosedReportsErrClosed(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	pos := world.ChunkPos{1, 2}
	col := worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)
	if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, loadErr := db.LoadColumn(pos, world.Overworld)
	_, _, spawnErr := db.LoadPlayerSpawnPosition(uuid.New())
	_, spawnsErr := db.PlayerSpawns()
	_, prefetchErr := db.Prefetch(pos, world.Overworld)
	_, columnsErr := db.Columns()
	for name, err := range map[string]error{
		"LoadColumn":              loadErr,
		"StoreColumn":             db.StoreColumn(pos, world.Overworld, col),
		"LoadPlayerSpawnPosition": spawnErr,
		"SavePlayerSpawnPosition": db.SavePlayerSpawnPosition(uuid.New(), cube.Pos{}),
		"PlayerSpawns":            spawnsErr,
		"Prefetch":                prefetchErr,
		"Pin":                     db.Pin(pos, world.Overworld),
		"Columns":                 columnsErr,
		"Maintain":                db.Maintain(),
		"Sync":                    db.Sync(),
		"Backup":                  db.Backup(filepath.Join(t.TempDir(), "b")),
	} {
		if !errors.Is(err, ErrClosed) || !errors.Is(err, blazedb.ErrClosed) {
			t.Errorf("%s on a closed DB: %v, want ErrClosed", name, err)
		}
	}
}
