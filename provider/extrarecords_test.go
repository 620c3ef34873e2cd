package provider

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

func sampleExtras() []ExtraRecord {
	return []ExtraRecord{
		{Key: []byte{1, 0, 0, 0, 2, 0, 0, 0, 0x39}, Value: []byte("structure bounds")},
		{Key: []byte{1, 0, 0, 0, 2, 0, 0, 0, 0x32}, Kind: ExtraLegacyEntities},
		{Key: []byte("digp\x01\x00\x00\x00\x02\x00\x00\x00"), Value: []byte{}},
	}
}

// Issue 38 item 3: a column's extra records come back exactly, sorted by
// key, and every malformed form is refused.
func TestExtrasEncoding(t *testing.T) {
	recs := sampleExtras()
	b, err := EncodeExtras(recs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeExtras(b)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(recs)
	slices.SortFunc(want, func(a, b ExtraRecord) int { return bytes.Compare(a.Key, b.Key) })
	if len(got) != len(want) {
		t.Fatalf("%d records back, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || !bytes.Equal(got[i].Key, want[i].Key) || !bytes.Equal(got[i].Value, want[i].Value) {
			t.Fatalf("record %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for i := range len(b) {
		if _, err := DecodeExtras(b[:i]); !errors.Is(err, ErrColumnCorrupt) {
			t.Fatalf("cut to %d bytes: %v", i, err)
		}
	}
	if _, err := DecodeExtras(append(slices.Clone(b), 0)); !errors.Is(err, ErrColumnCorrupt) {
		t.Fatalf("a byte after the last record: %v", err)
	}
	for _, bad := range [][]ExtraRecord{
		{{Key: nil}},
		{{Key: []byte("a")}, {Key: []byte("a")}},
		{{Key: []byte("a"), Kind: 2}},
		{{Key: []byte("a"), Kind: ExtraLegacyEntities, Value: []byte{1}}},
		{{Key: make([]byte, MaxExtraKeyLen+1)}},
	} {
		if _, err := EncodeExtras(bad); err == nil {
			t.Fatalf("encoded %+v", bad)
		}
	}
}

func FuzzDecodeExtras(f *testing.F) {
	b, _ := EncodeExtras(sampleExtras())
	f.Add(b)
	f.Add([]byte("XR\x01\x01\x00\x01a\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := DecodeExtras(b)
		if err != nil {
			if !errors.Is(err, ErrColumnCorrupt) {
				t.Fatalf("error not wrapping ErrColumnCorrupt: %v", err)
			}
			return
		}
		again, err := EncodeExtras(recs)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("decoded %x does not encode back: %x, %v", b, again, err)
		}
	})
}

// Issue 38 item 3: extra records live beside the column without being one:
// storing the column leaves them, a position holding only extra records
// holds no column, and the world's records come back as written.
func TestExtrasBesideColumns(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	pos, empty := world.ChunkPos{1, 2}, world.ChunkPos{7, -9}
	for _, dim := range []world.Dimension{world.Overworld, world.Nether, world.End} {
		for _, p := range []world.ChunkPos{pos, empty} {
			if err := db.SetColumnExtras(p, dim, sampleExtras()); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.StoreColumn(pos, dim, worldtest.Synthetic(3, dim, world.DefaultBlockRegistry)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetWorldExtra(ExtraRecord{Key: []byte("~local_player"), Value: []byte("nbt")}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetWorldExtra(ExtraRecord{Key: []byte("scoreboard"), Value: []byte{}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openDB(t, dir, Config{})
	places, err := db.Columns()
	if err != nil || len(places) != 3 {
		t.Fatalf("columns %v, %v: want the 3 stored", places, err)
	}
	if _, err := db.LoadColumn(empty, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("a position with only extra records: %v", err)
	}
	extra, err := db.ExtraColumns()
	if err != nil || len(extra) != 6 {
		t.Fatalf("extra columns %v, %v: want 6", extra, err)
	}
	cols, recs, worldRecs, err := db.ExtraCounts()
	if err != nil || cols != 6 || recs != 18 || worldRecs != 2 {
		t.Fatalf("counts %d %d %d %v", cols, recs, worldRecs, err)
	}
	got := map[string]string{}
	db.WorldExtras(func(r ExtraRecord) error { got[string(r.Key)] = string(r.Value); return nil })
	if len(got) != 2 || got["~local_player"] != "nbt" || got["scoreboard"] != "" {
		t.Fatalf("world records %q", got)
	}
	if err := db.SetColumnExtras(pos, world.Nether, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.SetWorldExtra(ExtraRecord{Key: []byte("scoreboard")}); err != nil {
		t.Fatal(err)
	}
	if r, err := db.ColumnExtras(pos, world.Nether); err != nil || r != nil {
		t.Fatalf("removed extra records: %v %v", r, err)
	}
	if _, err := db.LoadColumn(pos, world.Nether); err != nil {
		t.Fatalf("removing the extra records took the column: %v", err)
	}
	if _, _, n, _ := db.ExtraCounts(); n != 1 {
		t.Fatalf("%d world records after removing one of 2", n)
	}
}
