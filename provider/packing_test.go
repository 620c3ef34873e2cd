package provider

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/df-mc/dragonfly/server/world"
)

// rawRecord returns the engine's record of the column at pos.
func rawRecord(t *testing.T, db *DB, pos world.ChunkPos) []byte {
	t.Helper()
	k, err := key(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := db.eng.GetShared(k)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// Issue 41 item 1: by default compaction packs the column records it
// copies (LZ4 level 9 frames, the record marked packed), which read as the
// same columns and take fewer bytes; the next compaction rewrites none of
// them; a column stored again afterwards is written as a store writes it,
// and packed by the compaction after. PackingOff leaves records as stored.
func TestCompactionPacksColdColumns(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	for _, packing := range []Packing{PackingDefault, PackingOff} {
		logged.Reset()
		db := openDB(t, t.TempDir(), Config{Log: log, Packing: packing, ColumnCacheBytes: -1}) // every load decodes the record
		const n = 2
		for i := range n {
			if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Sync(); err != nil {
			t.Fatal(err)
		}
		var stored [][]byte
		for i := range n {
			stored = append(stored, bytes.Clone(rawRecord(t, db, world.ChunkPos{int32(i), 0})))
		}
		compact := func() string {
			t.Helper()
			logged.Reset()
			if err := db.Engine().Compact(); err != nil {
				t.Fatal(err)
			}
			_, line, _ := strings.Cut(logged.String(), "recompressed=")
			return strings.Fields(line + " ")[0]
		}
		if got, want := compact(), map[Packing]string{PackingDefault: "2", PackingOff: "0"}[packing]; got != want {
			t.Fatalf("%v: the first compaction rewrote %q records, want %q", packing, got, want)
		}
		for i := range n {
			rec := rawRecord(t, db, world.ChunkPos{int32(i), 0})
			if packed := column.Packed(rec); packed != (packing == PackingDefault) || packed != (len(rec) < len(stored[i])) {
				t.Fatalf("%v: record %d packed %v, %d bytes, %d as stored", packing, i, packed, len(rec), len(stored[i]))
			}
			got, err := db.LoadColumn(world.ChunkPos{int32(i), 0}, world.Overworld)
			if err != nil {
				t.Fatal(err)
			}
			if err := worldtest.Compare(worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry), got); err != nil {
				t.Fatalf("%v: column %d after compaction: %v", packing, i, err)
			}
		}
		if packing == PackingOff {
			continue
		}
		if got := compact(); got != "0" {
			t.Fatalf("the second compaction rewrote %s records", got)
		}
		// A column stored again is written as a store writes it.
		col := worldtest.Synthetic(9, world.Overworld, world.DefaultBlockRegistry)
		if err := db.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
		if err := db.Sync(); err != nil {
			t.Fatal(err)
		}
		if column.Packed(rawRecord(t, db, world.ChunkPos{0, 0})) {
			t.Fatal("a store wrote a packed record")
		}
		if got := compact(); got != "1" {
			t.Fatalf("the third compaction rewrote %s records, want the one stored since", got)
		}
	}
}
