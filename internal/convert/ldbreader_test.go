package convert

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/dragonfly/server/world/mcdb"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/df-mc/goleveldb/leveldb/opt"
	"github.com/df-mc/goleveldb/leveldb/util"
	"github.com/google/uuid"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// Issue 42 item 4: the one pass over a LevelDB world (ldbpass.go,
// ldbreader.go) lists the columns and players the key listing it replaced
// listed, reads every column into what mcdb.LoadColumn returns for it (the
// same column, or the same error), and carries the same records besides
// the columns as the second pass it replaced (readExtrasByKeys): for the
// real worlds, and for one that holds every record mcdb reads in a way of
// its own (legacy formats, damaged records, keys that only look like a
// column's).
func TestPassReadsAsMCDB(t *testing.T) { checkPass(t, oddLevelDBWorld(t), true) }

// TestPassReadsAsMCDB on the real worlds (in the Makefile's NORACE: the
// race detector makes it ten times slower, and the pass's concurrency is
// the same on any world).
func TestPassReadsRealWorldsAsMCDB(t *testing.T) {
	for _, path := range worldtest.Worlds(t) {
		t.Run(worldtest.Name(path), func(t *testing.T) {
			checkPass(t, worldtest.UnpackTemp(t, path), true)
		})
	}
}

// checkPass compares the pass over the LevelDB world in dir with mcdb and
// the readers it replaced. With blaze, the columns are stored into Blaze
// worlds, as a conversion stores them, so that a column Blaze refuses
// fails as it fails a conversion; without, columns are only kept (faster,
// for fuzzing).
func checkPass(t *testing.T, dir string, blaze bool) {
	log := slog.New(slog.DiscardHandler)
	places, players := scanByKeys(t, filepath.Join(dir, "db"))
	refused := refusedByWalk(t, dir, places)
	mc, err := mcdb.Config{Log: log, LDBOptions: &opt.Options{ReadOnly: true}}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]*chunk.Column, len(places))
	wantErr := make([]error, len(places))
	cols := map[place]written{}
	// A column mcdb reads but Blaze refuses (an index beyond its palette,
	// say) fails the conversion as one mcdb cannot read.
	ref := &recorder{cols: map[place]*chunk.Column{}}
	if blaze {
		ref.db = openBlaze(t)
	}
	for i, pl := range places {
		if refused[i] != nil {
			wantErr[i] = refused[i]
			continue
		}
		if want[i], wantErr[i] = load(mc, pl); wantErr[i] == nil {
			if err := ref.StoreColumn(pl.Pos, pl.Dim, want[i]); err != nil {
				if !errors.Is(err, provider.ErrInvalidColumn) {
					t.Fatal(err)
				}
				want[i], wantErr[i] = nil, err
				continue
			}
			cols[pl] = writtenOf(want[i])
		}
	}
	if err := mc.Close(); err != nil {
		t.Fatal(err)
	}
	wantX := readExtrasByKeys(t, filepath.Join(dir, "db"), cols)

	ldb, err := leveldb.OpenFile(filepath.Join(dir, "db"), &opt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ldb.Close()
	rec := &recorder{cols: map[place]*chunk.Column{}}
	if blaze {
		rec.db = openBlaze(t)
	}
	summer := colcmp.NewSummer()
	cr := &columnReader{ldb: ldb, blocks: world.DefaultBlockRegistry, log: log}
	p, err := readLevelDB(cr, rec, summer, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.places, places) || !slices.Equal(p.players, players) {
		t.Fatalf("listed %v and players %v, want %v and %v", p.places, p.players, places, players)
	}
	failed, walked := 0, 0
	for i, pl := range places {
		got := p.cols[i]
		if refused[i] != nil {
			walked++
		}
		if fmt.Sprint(got.err) != fmt.Sprint(wantErr[i]) {
			t.Fatalf("column %v: error %v, mcdb's %v", pl, got.err, wantErr[i])
		}
		if wantErr[i] != nil {
			failed++
			continue
		}
		// mcdb gives an entity of the legacy record without a UniqueID
		// a random id, and so does the pass: those ids are not compared.
		gotCol, gotSum := rec.cols[pl], got.sum
		if a, b := randomIDs(want[i]), randomIDs(gotCol); a || b {
			gotSum = summer.Sum(gotCol)
		}
		if err := compare(want[i], gotCol); err != nil {
			t.Fatalf("column %v differs from mcdb's: %v", pl, err)
		}
		if gotSum != summer.Sum(want[i]) || got.w != cols[pl] {
			t.Fatalf("column %v: sum or entities differ", pl)
		}
	}
	if len(rec.cols) != len(places)-failed {
		t.Fatalf("%d columns stored, %d read", len(rec.cols), len(places)-failed)
	}
	sameExtras(t, p.x, wantX)
	t.Logf("%d columns (%d unreadable: %d as mcdb, %d refused by the walk), %d positions and %d world records carried",
		len(places), failed, failed-walked, walked, len(wantX.columns), len(wantX.world))
}

// compare is colcmp.Compare, which panics on a column whose biome index
// lies beyond its palette, which Dragonfly reads (Blaze refuses to store
// it): the Sum of such a column (which checkPass compares as well) is what
// tells it.
func compare(a, b *chunk.Column) (err error) {
	defer func() {
		if recover() != nil {
			err = nil
		}
	}()
	return colcmp.Compare(a, b)
}

// randomIDs zeroes the ids of col's entities that have no int64 UniqueID,
// which mcdb chooses at random, and reports whether there were any.
func randomIDs(col *chunk.Column) bool {
	found := false
	for i, e := range col.Entities {
		if _, ok := e.Data["UniqueID"].(int64); !ok {
			col.Entities[i].ID, found = 0, true
		}
	}
	return found
}

func sameExtras(t *testing.T, got, want *extras) {
	t.Helper()
	sorted := func(recs []provider.ExtraRecord) []provider.ExtraRecord {
		recs = slices.Clone(recs)
		slices.SortFunc(recs, func(a, b provider.ExtraRecord) int { return bytes.Compare(a.Key, b.Key) })
		return recs
	}
	same := func(a, b []provider.ExtraRecord) bool {
		return slices.EqualFunc(sorted(a), sorted(b), func(a, b provider.ExtraRecord) bool {
			return a.Kind == b.Kind && bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value)
		})
	}
	if len(got.columns) != len(want.columns) {
		t.Fatalf("records carried for %d positions, want %d", len(got.columns), len(want.columns))
	}
	for pl, recs := range want.columns {
		if !same(got.columns[pl], recs) {
			t.Fatalf("records carried for %v differ: %d records, want %d", pl, len(got.columns[pl]), len(recs))
		}
	}
	if !same(got.world, want.world) {
		t.Fatalf("world records differ: %d, want %d", len(got.world), len(want.world))
	}
}

// recorder stores columns into a Blaze world as the conversion does (db;
// nil: none), and keeps those stored. Safe for concurrent use.
type recorder struct {
	db   *provider.DB
	mu   sync.Mutex
	cols map[place]*chunk.Column
}

func (r *recorder) StoreColumn(pos world.ChunkPos, dim world.Dimension, col *chunk.Column) error {
	if r.db != nil {
		if err := r.db.StoreColumn(pos, dim, col); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cols[place{Pos: pos, Dim: dim}] = col
	return nil
}

// openBlaze opens a new Blaze world as a conversion opens its destination.
func openBlaze(t *testing.T) *provider.DB {
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler), Durability: blazedb.DurabilityFast, ExternalMaintenance: true}.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// scanByKeys is how the conversion listed the columns and players of a
// LevelDB database before the one pass: the reference it is checked
// against.
func scanByKeys(t *testing.T, dir string) ([]place, []uuid.UUID) {
	ldb, err := leveldb.OpenFile(dir, &opt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ldb.Close()
	var places []place
	var players []uuid.UUID
	seen := map[place]bool{}
	it := ldb.NewIterator(nil, nil)
	defer it.Release()
	for it.Next() {
		k := it.Key()
		if name := string(k); strings.HasPrefix(name, "player_") && !strings.HasPrefix(name, "player_server_") {
			if id, err := uuid.Parse(strings.TrimPrefix(name, "player_")); err == nil {
				players = append(players, id)
			}
			continue
		}
		if n := len(k); (n != 9 && n != 13) || (k[n-1] != ',' && k[n-1] != 'v') {
			continue
		}
		pl := place{Pos: world.ChunkPos{int32(binary.LittleEndian.Uint32(k)), int32(binary.LittleEndian.Uint32(k[4:]))}, Dim: world.Overworld}
		if len(k) == 13 {
			d, ok := world.DimensionByID(int(int32(binary.LittleEndian.Uint32(k[8:]))))
			if !ok {
				continue
			}
			pl.Dim = d
		}
		if !seen[pl] {
			seen[pl] = true
			places = append(places, pl)
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return places, players
}

// readExtrasByKeys is how the conversion chose the records it carries
// before the one pass, reading the database again once the columns were
// read (cols: how each was read): the reference the pass is checked
// against.
func readExtrasByKeys(t *testing.T, dir string, cols map[place]written) *extras {
	ldb, err := leveldb.OpenFile(dir, &opt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ldb.Close()
	digp := map[place]bool{}
	ids := map[int64]bool{}
	it := ldb.NewIterator(util.BytesPrefix([]byte(digpPrefix)), nil)
	for it.Next() {
		if c := classify(it.Key()); c.chunk && c.tag == -1 {
			digp[c.pl] = true
		}
	}
	it.Release()
	x := &extras{columns: map[place][]provider.ExtraRecord{}}
	actors := map[int64]provider.ExtraRecord{}
	it = ldb.NewIterator(nil, nil)
	defer it.Release()
	for it.Next() {
		k, v := bytes.Clone(it.Key()), bytes.Clone(it.Value())
		c := classify(k)
		switch {
		case c.actor:
			actors[c.id] = provider.ExtraRecord{Key: k, Value: v}
			continue
		case !c.chunk:
			x.world = append(x.world, provider.ExtraRecord{Key: k, Value: v})
			continue
		}
		w, read := cols[c.pl]
		r := provider.ExtraRecord{Key: k, Value: v}
		switch {
		case !read:
		case c.tag == tagLegacyEntities && !digp[c.pl] && w.entities:
			r = provider.ExtraRecord{Kind: provider.ExtraLegacyEntities, Key: k}
		case dragonflyWrites(c, w):
			if c.tag == -1 {
				for i := 0; i+8 <= len(v); i += 8 {
					ids[int64(binary.LittleEndian.Uint64(v[i:]))] = true
				}
			}
			continue
		}
		x.columns[c.pl] = append(x.columns[c.pl], r)
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	for id, r := range actors {
		if !ids[id] {
			x.world = append(x.world, r)
		}
	}
	return x
}

// chunkKey is mcdb's key of a record of the column at (x, z) in the
// dimension of id dim: tag and the rest after the position.
func chunkKey(x, z int32, dim int32, rest ...byte) []byte {
	k := binary.LittleEndian.AppendUint32(nil, uint32(x))
	k = binary.LittleEndian.AppendUint32(k, uint32(z))
	if dim != 0 {
		k = binary.LittleEndian.AppendUint32(k, uint32(dim))
	}
	return append(k, rest...)
}

// mcdbWorld writes a LevelDB world in dir with mcdb: a synthetic column
// at each of places, of seed seed, seed+1, ...
func mcdbWorld(tb testing.TB, dir string, seed uint64, places []place) {
	tb.Helper()
	db, err := mcdb.Config{Log: slog.New(slog.DiscardHandler)}.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for i, pl := range places {
		if err := db.StoreColumn(pl.Pos, pl.Dim, worldtest.Synthetic(seed+uint64(i), pl.Dim, world.DefaultBlockRegistry)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
}

// oddLevelDBWorld is a LevelDB world of synthetic columns in the three
// dimensions, written by mcdb, and records that mcdb reads in ways of
// their own, written beside them.
func oddLevelDBWorld(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "w")
	mcdbWorld(t, dir, 1, []place{
		{Pos: world.ChunkPos{0, 0}, Dim: world.Overworld}, {Pos: world.ChunkPos{1, 0}, Dim: world.Overworld},
		{Pos: world.ChunkPos{-1, -1}, Dim: world.Overworld}, {Pos: world.ChunkPos{0, 0}, Dim: world.Nether},
		{Pos: world.ChunkPos{3, 1}, Dim: world.Nether}, {Pos: world.ChunkPos{0, 0}, Dim: world.End},
		{Pos: world.ChunkPos{2, 0}, Dim: world.Overworld}, {Pos: world.ChunkPos{8, 5}, Dim: world.Overworld},
	})
	ldb, err := leveldb.OpenFile(filepath.Join(dir, "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ldb.Close()
	put := func(k, v []byte) {
		if err := ldb.Put(k, v, nil); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := ldb.Get(chunkKey(0, 0, 0, tagSubChunk, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(m map[string]any) []byte {
		b, err := nbt.MarshalEncoding(m, nbt.LittleEndian)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// A column of an old world: the old version key, no biomes, one
	// sub-chunk, its entities in the legacy record.
	put(chunkKey(5, 5, 0, tagVersionOld), []byte{19})
	put(chunkKey(5, 5, 0, tagSubChunk, 2), sub)
	put(chunkKey(5, 5, 0, tagLegacyEntities), append(enc(map[string]any{"identifier": "minecraft:pig", "UniqueID": int64(77)}),
		enc(map[string]any{"identifier": "minecraft:cow", "UniqueID": int64(78)})...))
	// Damaged: a version of two bytes, biomes shorter than a height map,
	// block entities whose NBT makes the decoder panic, entity ids not a
	// multiple of 8 bytes long.
	put(chunkKey(6, 5, 0, tagVersion), []byte{40, 0})
	put(chunkKey(7, 5, 0, tagVersion), []byte{40})
	put(chunkKey(7, 5, 0, tagBiomes), make([]byte, 100))
	put(chunkKey(2, 0, 0, tagBlockEntities), []byte{10, 0, 0, 9, 1, 0, 'a', 3, '0', '0', '0', '0', 0})
	put(chunkKey(9, 5, 0, tagVersion), []byte{40})
	put(append([]byte(digpPrefix), chunkKey(9, 5, 0)...), make([]byte, 12))
	// Entities named under digp that are missing: mcdb reads none.
	ids, err := ldb.Get(append([]byte(digpPrefix), chunkKey(8, 5, 0)...), nil)
	if err != nil || len(ids) == 0 {
		t.Fatalf("column (8, 5) has no entities: %v", err)
	}
	if err := ldb.Delete(append([]byte(actorPrefix), ids[:8]...), nil); err != nil {
		t.Fatal(err)
	}
	// A scheduled update of a block that does not exist.
	put(chunkKey(1, 0, 0, tagScheduled), enc(map[string]any{"currentTick": int32(5), "tickList": []any{
		map[string]any{"x": int32(1), "y": int32(2), "z": int32(3), "time": int64(9), "blockState": map[string]any{"name": "minecraft:no_such_block", "states": map[string]any{}, "version": int32(1)}},
	}}))
	// Keys beside the columns': a sub-chunk beyond the nether's range,
	// overworld keys whose tags read as a nether id, 2D data, an overworld
	// version key with dimension id 0, a column far beyond any world's
	// edge, world records and an entity no column names.
	put(chunkKey(3, 1, 1, tagSubChunk, 16), sub)
	put(chunkKey(0, 0, 0, 1), []byte{1})
	put(chunkKey(0, 0, 0, 1, 0), []byte{2})
	put(chunkKey(0, 0, 0, 0x2d), make([]byte, 768))
	put(append(chunkKey(11, 5, 0), 0, 0, 0, 0, tagVersion), []byte{40})
	put(chunkKey(1<<25, 0, 0, tagVersion), []byte{40})
	put([]byte("~local_player"), enc(map[string]any{"a": int32(1)}))
	put([]byte("scoreboard"), []byte{1, 2, 3})
	put(binary.LittleEndian.AppendUint64([]byte(actorPrefix), 12345), enc(map[string]any{"UniqueID": int64(12345)}))
	return dir
}
