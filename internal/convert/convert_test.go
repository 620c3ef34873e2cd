package convert_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/mcdb"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// hashTree returns the SHA-256 of every file under dir.
func hashTree(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = sha256.Sum256(b)
		}
		return nil
	})
	return out
}

func sameTree(t *testing.T, a, b map[string][32]byte, what string) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d files, then %d", what, len(a), len(b))
	}
	for k, v := range a {
		if b[k] != v {
			t.Fatalf("%s: %s changed", what, k)
		}
	}
}

// Every real world goes LevelDB -> Blaze -> LevelDB with every column equal
// to the original, and no source changes.
func TestConvertRealWorldsBothWays(t *testing.T) {
	for _, path := range worldtest.Worlds(t) {
		t.Run(worldtest.Name(path), func(t *testing.T) {
			src := worldtest.UnpackTemp(t, path)
			want, err := worldtest.ReadAll(worldtest.UnpackTemp(t, path), world.DefaultBlockRegistry)
			if err != nil {
				t.Fatal(err)
			}
			before := hashTree(t, src)
			bz := filepath.Join(t.TempDir(), "blaze-world")
			var bar bytes.Buffer
			r, err := convert.Convert(src, bz, convert.Options{Progress: &bar})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Failed) != 0 || r.Columns != len(want) || r.From != "leveldb" {
				t.Fatalf("report %+v, want %d columns", r, len(want))
			}
			if !bytes.Contains(bar.Bytes(), []byte("columns")) {
				t.Fatalf("no progress shown: %q", bar.String())
			}
			sameTree(t, before, hashTree(t, src), "LevelDB source")

			p, err := provider.Config{ReadOnly: true}.Open(bz)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range want {
				got, err := p.LoadColumn(c.Pos, c.Dim)
				if err != nil {
					t.Fatal(err)
				}
				if err := worldtest.Compare(c.Col, got); err != nil {
					t.Fatalf("blaze column %v: %v", c.Pos, err)
				}
			}
			if p.Settings().Name == "" {
				t.Fatal("level.dat settings lost")
			}
			p.Close()

			blazeBefore := hashTree(t, bz)
			back := filepath.Join(t.TempDir(), "leveldb-world")
			r, err = convert.Convert(bz, back, convert.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Failed) != 0 || r.Columns != len(want) || r.From != "blaze" {
				t.Fatalf("report back %+v", r)
			}
			sameTree(t, blazeBefore, hashTree(t, bz), "Blaze source")
			again, err := worldtest.ReadAll(back, world.DefaultBlockRegistry)
			if err != nil {
				t.Fatal(err)
			}
			if len(again) != len(want) {
				t.Fatalf("%d columns back, want %d", len(again), len(want))
			}
			byPos := map[string]worldtest.Column{}
			for _, c := range again {
				byPos[fmt.Sprint(c.Dim, c.Pos)] = c
			}
			for _, c := range want {
				if err := worldtest.Compare(convert.LevelDBView(c.Col), byPos[fmt.Sprint(c.Dim, c.Pos)].Col); err != nil {
					t.Fatalf("leveldb column %v: %v", c.Pos, err)
				}
			}
		})
	}
}

// All three dimensions and player spawns survive Blaze -> LevelDB -> Blaze.
func TestConvertDimensionsAndPlayers(t *testing.T) {
	src := filepath.Join(t.TempDir(), "w")
	p, err := provider.Config{}.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	dims := []world.Dimension{world.Overworld, world.Nether, world.End}
	for i, dim := range dims {
		p.StoreColumn(world.ChunkPos{int32(i), -int32(i)}, dim, worldtest.Synthetic(uint64(i), dim, world.DefaultBlockRegistry))
	}
	alice := uuid.New()
	p.SavePlayerSpawnPosition(alice, cube.Pos{1, 2, 3})
	p.Close()

	mid := filepath.Join(t.TempDir(), "ldb")
	if r, err := convert.Convert(src, mid, convert.Options{}); err != nil || r.Players != 1 || r.Columns != 3 {
		t.Fatalf("to LevelDB: %+v %v", r, err)
	}
	end := filepath.Join(t.TempDir(), "bz")
	if r, err := convert.Convert(mid, end, convert.Options{}); err != nil || r.Players != 1 || r.Columns != 3 {
		t.Fatalf("back to Blaze: %+v %v", r, err)
	}
	q, err := provider.Config{ReadOnly: true}.Open(end)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for i, dim := range dims {
		got, err := q.LoadColumn(world.ChunkPos{int32(i), -int32(i)}, dim)
		if err != nil {
			t.Fatal(err)
		}
		if err := worldtest.Compare(convert.LevelDBView(worldtest.Synthetic(uint64(i), dim, world.DefaultBlockRegistry)), got); err != nil {
			t.Fatalf("%v: %v", dim, err)
		}
	}
	if pos, ok, err := q.LoadPlayerSpawnPosition(alice); !ok || err != nil || pos != (cube.Pos{1, 2, 3}) {
		t.Fatalf("spawn %v %v %v", pos, ok, err)
	}
}

// A segmented world converts whole: the columns of every region, the
// world's player spawns, and nothing of the source changes.
func TestConvertSegmentedWorld(t *testing.T) {
	src := filepath.Join(t.TempDir(), "seg")
	p, err := segment.Config{SegmentSize: 4}.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	var at []world.ChunkPos
	for i := range 10 {
		pos := world.ChunkPos{int32(i*3 - 12), int32(i)}
		at = append(at, pos)
		p.StoreColumn(pos, world.Overworld, worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry))
	}
	p.StoreColumn(world.ChunkPos{5, 5}, world.Nether, worldtest.Synthetic(99, world.Nether, world.DefaultBlockRegistry))
	alice := uuid.New()
	p.SavePlayerSpawnPosition(alice, cube.Pos{4, 5, 6})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if regions, _ := segment.Regions(src); len(regions) < 5 {
		t.Fatalf("only %d regions: the test needs columns in several", len(regions))
	}
	before := hashTree(t, src)
	dst := filepath.Join(t.TempDir(), "ldb")
	var bar bytes.Buffer
	r, err := convert.Convert(src, dst, convert.Options{Progress: &bar})
	if err != nil || r.Columns != 11 || r.Players != 1 || len(r.Failed) != 0 {
		t.Fatalf("convert: %+v %v", r, err)
	}
	// One progress bar for the whole world, not one a region: redirected,
	// a line at its start and one at its end; then the last phase, which
	// counts no columns, a line at its start and one at its end too
	// (issue 38 item 5).
	lines := strings.Split(strings.TrimSuffix(bar.String(), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "converting" || !strings.HasPrefix(lines[1], "converting: 11 columns done") ||
		!strings.HasPrefix(lines[3], lines[2]+": done in ") {
		t.Fatalf("progress drawn: %q", bar.String())
	}
	if after := hashTree(t, src); !maps.Equal(before, after) {
		t.Fatal("the source changed")
	}
	back := filepath.Join(t.TempDir(), "bz")
	if r, err := convert.Convert(dst, back, convert.Options{}); err != nil || r.Columns != 11 || r.Players != 1 {
		t.Fatalf("back to Blaze: %+v %v", r, err)
	}
	q, err := provider.Config{ReadOnly: true}.Open(back)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for i, pos := range at {
		got, err := q.LoadColumn(pos, world.Overworld)
		if err != nil {
			t.Fatal(err)
		}
		if err := worldtest.Compare(convert.LevelDBView(worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)), got); err != nil {
			t.Fatalf("%v: %v", pos, err)
		}
	}
	if pos, ok, err := q.LoadPlayerSpawnPosition(alice); !ok || err != nil || pos != (cube.Pos{4, 5, 6}) {
		t.Fatalf("spawn %v %v %v", pos, ok, err)
	}
}

// A player spawn that cannot be read is reported, not dropped in silence.
func TestConvertReportsUnreadablePlayerSpawns(t *testing.T) {
	src := filepath.Join(t.TempDir(), "w")
	p, err := provider.Config{}.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	p.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry))
	good, bad := uuid.New(), uuid.New()
	p.SavePlayerSpawnPosition(good, cube.Pos{1, 2, 3})
	p.Engine().PutNamed("player/"+bad.String(), []byte{9, 9}) // not a spawn record
	p.Close()
	r, err := convert.Convert(src, filepath.Join(t.TempDir(), "ldb"), convert.Options{})
	if err != nil || r.Players != 1 || len(r.FailedPlayers) != 1 || r.FailedPlayers[0].ID != bad.String() {
		t.Fatalf("convert: %+v %v", r, err)
	}
	if !errors.Is(r.FailedPlayers[0].Err, provider.ErrColumnCorrupt) {
		t.Fatalf("failure %v", r.FailedPlayers[0])
	}
}

// A damaged column is reported with its reason; the others convert.
func TestConvertReportsUnreadableColumns(t *testing.T) {
	src := filepath.Join(t.TempDir(), "w")
	p, err := provider.Config{Compression: blazedb.CompressionNone}.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	for i := int32(0); i < 3; i++ {
		p.StoreColumn(world.ChunkPos{i, 0}, world.Overworld, worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry))
	}
	p.Close()
	log := filepath.Join(src, "blaze", "chunks.dat")
	b, _ := os.ReadFile(log)
	b[len(b)/2] ^= 0xff
	os.WriteFile(log, b, 0o644)

	r, err := convert.Convert(src, filepath.Join(t.TempDir(), "out"), convert.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Failed) != 1 || r.Columns != 2 || !errors.Is(r.Failed[0].Err, blazedb.ErrCorrupt) {
		t.Fatalf("report %+v", r)
	}
}

func TestConvertRefuses(t *testing.T) {
	src := worldtest.UnpackTemp(t, worldtest.Worlds(t)[0])
	dst := t.TempDir()
	os.WriteFile(filepath.Join(dst, "keep.txt"), []byte("mine"), 0o644)
	if _, err := convert.Convert(src, dst, convert.Options{}); !errors.Is(err, convert.ErrDestinationNotEmpty) {
		t.Fatalf("non-empty destination: %v", err)
	}
	if _, err := convert.Convert(t.TempDir(), filepath.Join(t.TempDir(), "x"), convert.Options{}); !errors.Is(err, convert.ErrUnknownSource) {
		t.Fatalf("unknown source: %v", err)
	}
}

// Issue 35 item 15: a destination inside the source (it was written
// there), given directly, through a link or as the source itself, and a
// source holding both a LevelDB and a Blaze world (check read the one,
// convert the other) are refused with a clear error, and the source is
// left as it was; a subtest a case.
func TestConvertRefusesAmbiguousInputs(t *testing.T) {
	t.Run("destination inside the source", func(t *testing.T) {
		src := worldtest.UnpackTemp(t, worldtest.Worlds(t)[0])
		before := hashTree(t, src)
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(src, link); err != nil {
			t.Log("no symbolic links here:", err)
			link = src
		}
		for _, dst := range []string{filepath.Join(src, "out"), filepath.Join(src, "db", "out"), src, filepath.Join(link, "out"), filepath.Join(src, "..", filepath.Base(src), "out")} {
			_, err := convert.Convert(src, dst, convert.Options{})
			if !errors.Is(err, convert.ErrDestinationInSource) {
				t.Fatalf("destination %s in the source: %v", dst, err)
			}
		}
		sameTree(t, before, hashTree(t, src), "the source of the refused conversions")
	})
	// Issue 35 item 9: the directory a conversion builds in, which a
	// later conversion to the same destination deletes as its leftover,
	// is never the source or a directory holding it: before, converting
	// X.convert-tmp to X deleted the source world.
	t.Run("source where the build directory goes", func(t *testing.T) {
		parent := t.TempDir()
		dst := filepath.Join(parent, "out")
		for _, src := range []string{dst + convert.BuildSuffix, filepath.Join(dst+convert.BuildSuffix, "world")} {
			if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(worldtest.UnpackTemp(t, worldtest.Worlds(t)[0]), src); err != nil {
				t.Fatal(err)
			}
			before := hashTree(t, src)
			if _, err := convert.Convert(src, dst, convert.Options{}); !errors.Is(err, convert.ErrSourceInBuildDir) {
				t.Errorf("source %s, which the build directory holds: %v", src, err)
			}
			if _, err := os.Stat(src); err != nil {
				t.Fatalf("the source %s was deleted: %v", src, err)
			}
			sameTree(t, before, hashTree(t, src), "the source of the refused conversion")
			if err := os.RemoveAll(dst + convert.BuildSuffix); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("source holding both kinds", func(t *testing.T) {
		src := worldtest.UnpackTemp(t, worldtest.Worlds(t)[0])
		if err := os.Mkdir(filepath.Join(src, "blaze"), 0o755); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "out")
		if _, err := convert.Convert(src, dst, convert.Options{}); !errors.Is(err, convert.ErrAmbiguousWorld) || !strings.Contains(err.Error(), "db/ and blaze/") {
			t.Fatalf("a source holding both kinds of world: %v", err)
		}
		if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
			t.Fatal("the refused conversion made its destination")
		}
	})
}

// Dragonfly's LevelDB reader turns some damaged sub-chunks into columns
// that cannot be what the world held, without an error: a layer written
// as the marker of a repeated biome storage becomes a nil layer, and it
// does not check that indices lie inside their palette. It panics on some
// damaged NBT. Each such column is listed as unreadable and the rest
// convert; before, the nil layer and the NBT made the conversion panic.
func TestConvertReportsMalformedLevelDBColumns(t *testing.T) {
	stone, err := nbt.MarshalEncoding(map[string]any{"name": "minecraft:stone", "states": map[string]any{}, "version": int32(18090528)}, nbt.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	beyond := []byte{9, 1, 0, 4 << 1}                             // 4 bits an index: 512 words
	beyond = append(beyond, bytes.Repeat([]byte{0xff}, 512*4)...) // every index 15
	beyond = binary.LittleEndian.AppendUint32(beyond, 2)          // a palette of 2
	beyond = append(append(beyond, stone...), stone...)
	for _, c := range []struct {
		name string
		key  []byte // after the column's position: what the value is
		val  []byte
		want error
	}{
		{"nil layer", []byte{0x2f, 0}, []byte{9, 1, 0, 0x7f << 1}, provider.ErrInvalidColumn},
		{"index beyond palette", []byte{0x2f, 0}, beyond, provider.ErrInvalidColumn},
		// A compound holding a list of ints 0x30303030 long.
		{"block entity NBT", []byte{0x31}, []byte{10, 0, 0, 9, 1, 0, 'a', 3, '0', '0', '0', '0', 0}, convert.ErrUnreadable},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := levelDBWorld(t, func(ldb *leveldb.DB) {
				// mcdb's key of column (1, 0) (the overworld has no
				// dimension id in its keys).
				k := binary.LittleEndian.AppendUint32(nil, 1)
				k = binary.LittleEndian.AppendUint32(k, 0)
				if err := ldb.Put(append(k, c.key...), c.val, nil); err != nil {
					t.Fatal(err)
				}
			})
			r, err := convert.Convert(src, filepath.Join(t.TempDir(), "out"), convert.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Failed) != 1 || r.Failed[0].Pos != (world.ChunkPos{1, 0}) || r.Columns != 2 || !errors.Is(r.Failed[0].Err, c.want) {
				t.Fatalf("report %+v", r)
			}
		})
	}
}

// A player spawn Dragonfly's LevelDB reader panics on (a coordinate that
// is not an int32) is listed as unreadable; the conversion goes on.
func TestConvertReportsUnreadableLevelDBSpawn(t *testing.T) {
	id := uuid.New()
	src := levelDBWorld(t, func(ldb *leveldb.DB) {
		pd, err := ldb.Get([]byte("player_"+id.String()), nil)
		if err != nil {
			t.Fatal(err)
		}
		var d map[string]any
		if err := nbt.UnmarshalEncoding(pd, &d, nbt.LittleEndian); err != nil {
			t.Fatal(err)
		}
		sd, err := nbt.MarshalEncoding(map[string]any{"SpawnX": int64(1), "SpawnY": int32(2), "SpawnZ": int32(3)}, nbt.LittleEndian)
		if err != nil {
			t.Fatal(err)
		}
		if err := ldb.Put([]byte(d["ServerId"].(string)), sd, nil); err != nil {
			t.Fatal(err)
		}
	}, id)
	r, err := convert.Convert(src, filepath.Join(t.TempDir(), "out"), convert.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Columns != 3 || r.Players != 0 || len(r.FailedPlayers) != 1 || !errors.Is(r.FailedPlayers[0].Err, convert.ErrUnreadable) {
		t.Fatalf("report %+v", r)
	}
}

// A LevelDB world whose level.dat declares more than it holds is refused
// with ErrCorrupt; Dragonfly's reader would allocate what it declares, or
// panic on a negative length.
func TestConvertRefusesDamagedLevelDat(t *testing.T) {
	src := levelDBWorld(t, nil)
	name := filepath.Join(src, "level.dat")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[4:], 0x80000000)
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if _, err := convert.Convert(src, dst, convert.Options{}); !errors.Is(err, blazedb.ErrCorrupt) {
		t.Fatalf("convert: %v", err)
	}
	// Into an empty directory: it is there, empty, after the failure, and
	// the build directory is gone.
	empty := t.TempDir()
	if _, err := convert.Convert(src, empty, convert.Options{}); !errors.Is(err, blazedb.ErrCorrupt) {
		t.Fatalf("convert: %v", err)
	}
	for d, want := range map[string]bool{dst: false, dst + convert.BuildSuffix: false, empty: true, empty + convert.BuildSuffix: false} {
		if _, err := os.Lstat(d); (err == nil) != want {
			t.Fatalf("after a failed conversion, %s: %v", d, err)
		}
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Fatalf("the empty destination holds %v after a failed conversion", entries)
	}
}

// levelDBWorld makes a LevelDB world of three overworld columns at x 0 to
// 2 and a spawn for each of players, then lets damage change its database.
func levelDBWorld(t *testing.T, damage func(*leveldb.DB), players ...uuid.UUID) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "w")
	db, err := mcdb.Config{}.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	for i := int32(0); i < 3; i++ {
		if err := db.StoreColumn(world.ChunkPos{i, 0}, world.Overworld, worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range players {
		if err := db.SavePlayerSpawnPosition(id, cube.Pos{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if damage != nil {
		ldb, err := leveldb.OpenFile(filepath.Join(src, "db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		damage(ldb)
		if err := ldb.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return src
}
