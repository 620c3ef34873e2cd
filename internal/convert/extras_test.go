package convert_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// levelDBKeys returns every key of the LevelDB world in dir with its value.
func levelDBKeys(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ldb, err := leveldb.OpenFile(filepath.Join(dir, "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ldb.Close()
	out := map[string][]byte{}
	it := ldb.NewIterator(nil, nil)
	defer it.Release()
	for it.Next() {
		out[string(it.Key())] = bytes.Clone(it.Value())
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}

// reencoded names the kind of a key whose value Dragonfly's provider writes
// itself from the column it read (so it may differ from the source's), or
// returns "" for a key it does not, whose value must come back exactly.
func reencoded(k string) string {
	switch {
	case strings.HasPrefix(k, "actorprefix"):
		return "actorprefix (entity NBT, UniqueID set to the entity's id)"
	case strings.HasPrefix(k, "digp"):
		return "digp (entity ids)"
	case strings.HasPrefix(k, "player_server_"):
		return "player_server_ (Bedrock's player NBT, spawn set by Dragonfly)"
	}
	tag := -1
	switch len(k) {
	case 9, 13:
		tag = int(k[len(k)-1])
	case 10, 14:
		tag = int(k[len(k)-2])
	}
	switch tag {
	case 0x2b:
		return "0x2b (biomes, with an empty height map)"
	case 0x2c:
		return "0x2c (version)"
	case 0x2f:
		return "0x2f (sub-chunks)"
	case 0x31:
		return "0x31 (block entities)"
	case 0x32:
		return "0x32 (legacy entities)"
	case 0x33:
		return "0x33 (scheduled updates)"
	case 0x36:
		return "0x36 (finalisation)"
	}
	return ""
}

// Issue 38 item 3: LevelDB -> Blaze -> LevelDB keeps every key of every
// real world, and the value of every key Dragonfly does not write itself.
func TestConvertKeepsEveryLevelDBKey(t *testing.T) {
	for _, path := range worldtest.Worlds(t) {
		t.Run(worldtest.Name(path), func(t *testing.T) {
			want := levelDBKeys(t, worldtest.UnpackTemp(t, path))
			src := worldtest.UnpackTemp(t, path)
			bz := filepath.Join(t.TempDir(), "blaze-world")
			r, err := convert.Convert(src, bz, convert.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.FailedRecords) != 0 || r.ColumnRecords == 0 || r.WorldRecords == 0 {
				t.Fatalf("to Blaze: %d column records, %d world records, failed %v", r.ColumnRecords, r.WorldRecords, r.FailedRecords)
			}
			carried := r.ColumnRecords + r.WorldRecords
			back := filepath.Join(t.TempDir(), "leveldb-world")
			if r, err = convert.Convert(bz, back, convert.Options{}); err != nil {
				t.Fatal(err)
			}
			if r.ColumnRecords+r.WorldRecords != carried {
				t.Fatalf("back: %d column records and %d world records written, %d carried", r.ColumnRecords, r.WorldRecords, carried)
			}
			got := levelDBKeys(t, back)
			var missing []string
			differ := map[string]int{}
			for k, v := range want {
				g, ok := got[k]
				switch {
				case !ok:
					missing = append(missing, fmt.Sprintf("%q", k))
				case bytes.Equal(g, v):
				case reencoded(k) == "":
					t.Errorf("value of %q differs after the round trip: %d bytes, was %d", k, len(g), len(v))
				default:
					differ[reencoded(k)]++
				}
			}
			slices.Sort(missing)
			if len(missing) > 0 {
				t.Fatalf("%d of %d keys lost: %v", len(missing), len(want), missing)
			}
			// A key the source did not have is one Dragonfly writes for
			// every column (biomes in 3D, finalisation); entities go back
			// where the source kept them, not under digp and actorprefix.
			for k := range got {
				if _, ok := want[k]; !ok && (reencoded(k) == "" || strings.HasPrefix(k, "digp") || strings.HasPrefix(k, "actorprefix")) {
					t.Errorf("key %q added by the round trip", k)
				}
			}
			t.Logf("%d keys kept (%d records carried); values Dragonfly re-encoded: %v", len(want), carried, differ)
		})
	}
}

// Issue 38 item 3: Bedrock's player data and the world's records come back
// from a round trip through Blaze, and the spawn a server on Blaze saved
// goes into Bedrock's player data, as Dragonfly's LevelDB provider puts it.
func TestConvertKeepsBedrockPlayerData(t *testing.T) {
	id := uuid.New()
	server := "player_server_" + id.String()
	extra := map[string][]byte{
		"~local_player":   []byte("single-player NBT"),
		"portals":         []byte("portal NBT"),
		"map_-4294967295": []byte("map NBT"),
		"actorprefix\x07\x00\x00\x00\x00\x00\x00\x00":  []byte("an entity no column lists"),
		string([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0x39}):   []byte("structure bounds"),
		string([]byte{50, 0, 0, 0, 50, 0, 0, 0, 0x36}): {2, 0, 0, 0}, // a position without a column
	}
	src := levelDBWorld(t, func(ldb *leveldb.DB) {
		for k, v := range extra {
			if err := ldb.Put([]byte(k), v, nil); err != nil {
				t.Fatal(err)
			}
		}
		pd, err := nbt.MarshalEncoding(map[string]any{"SpawnX": int32(1), "SpawnY": int32(2), "SpawnZ": int32(3), "Inventory": []any{map[string]any{"Name": "minecraft:diamond"}}}, nbt.LittleEndian)
		if err != nil {
			t.Fatal(err)
		}
		if err := ldb.Put([]byte(server), pd, nil); err != nil {
			t.Fatal(err)
		}
	}, id)
	bz := filepath.Join(t.TempDir(), "blaze")
	if _, err := convert.Convert(src, bz, convert.Options{}); err != nil {
		t.Fatal(err)
	}
	p, err := provider.Config{Log: slog.New(slog.DiscardHandler)}.Open(bz)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SavePlayerSpawnPosition(id, cube.Pos{7, 8, 9}); err != nil { // the player moved on Blaze
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	back := filepath.Join(t.TempDir(), "back")
	if _, err := convert.Convert(bz, back, convert.Options{}); err != nil {
		t.Fatal(err)
	}
	got := levelDBKeys(t, back)
	for k, v := range extra {
		if !bytes.Equal(got[k], v) {
			t.Fatalf("%q: %q, want %q", k, got[k], v)
		}
	}
	var d map[string]any
	if err := nbt.UnmarshalEncoding(got[server], &d, nbt.LittleEndian); err != nil {
		t.Fatal(err)
	}
	if d["SpawnX"] != int32(7) || d["SpawnY"] != int32(8) || d["SpawnZ"] != int32(9) || d["Inventory"] == nil {
		t.Fatalf("Bedrock's player data after the round trip: %v", d)
	}
}
