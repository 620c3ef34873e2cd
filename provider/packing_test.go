package provider

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
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

// Issue 41 items 1 and 2: by default compaction packs the column records
// it copies (every part in one LZ4 level 9 frame, version 3, marked
// packed), which read as the same columns and take fewer bytes; the next
// compaction rewrites none of them; a column stored again afterwards is
// written as a store writes it, and packed by the compaction after.
func TestCompactionPacksColdColumns(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	for _, packing := range []Packing{PackingDefault} {
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
			if packed := column.Packed(rec); packed != (packing == PackingDefault) || packed != column.Whole(rec) || packed != (len(rec) < len(stored[i])) {
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

// Issue 41 item 2: a column loaded from a packed record (version 3, no
// frame of a part to reuse) and stored unchanged writes nothing; stored
// changed, it is written as a store writes it, every part compressed,
// byte for byte the record of a store with nothing to reuse, and the next
// store reuses that record's frames.
func TestStoreAfterPackedLoad(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{ExternalMaintenance: true}) // Maintain caches loads
	pos := world.ChunkPos{2, 3}
	col := worldtest.Synthetic(4, world.Overworld, world.DefaultBlockRegistry)
	if err := storeNow(db, pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	if err := db.Engine().Compact(); err != nil {
		t.Fatal(err)
	}
	k, _ := key(pos, world.Overworld)
	db.cols.remove(k)
	packed := bytes.Clone(rawRecord(t, db, pos))
	if !column.Whole(packed) {
		t.Fatal("compaction did not pack the column")
	}
	loaded, err := db.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Maintain(); err != nil {
		t.Fatal(err)
	}
	prev, _ := db.cols.peek(k)
	if prev == nil || !bytes.Equal(prev.rec, packed) {
		t.Fatal("the load cached no snapshot of the packed record")
	}
	enc, err := db.dict.codec.Encode(loaded, prev.prev(), db.conf.Compression)
	if err != nil {
		t.Fatal(err)
	}
	if &enc.Rec[0] != &prev.rec[0] {
		t.Fatal("an unchanged column loaded from a packed record built a new record")
	}
	if err := storeNow(db, pos, world.Overworld, loaded); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rawRecord(t, db, pos), packed) {
		t.Fatal("storing an unchanged column replaced its packed record")
	}

	loaded.Chunk.SetBlock(1, 70, 1, 0, worldtest.States(world.DefaultBlockRegistry)["minecraft:stone"])
	full, err := db.dict.codec.Encode(loaded, column.Prev{}, db.conf.Compression)
	if err != nil {
		t.Fatal(err)
	}
	if err := storeNow(db, pos, world.Overworld, loaded); err != nil {
		t.Fatal(err)
	}
	if rec := rawRecord(t, db, pos); column.Whole(rec) || !bytes.Equal(rec, full.Rec) {
		t.Fatal("a changed column loaded from a packed record was not written as a full store writes it")
	}
	db.cols.remove(k)
	got, err := db.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(loaded, got); err != nil {
		t.Fatal(err)
	}
}

// Issue 41 item 2: PackingArchive packs every column in one zstd frame
// whatever its codec; PackingOff with Recompress unpacks packed records
// into frames of Compression, as stores write them; both read the same.
func TestArchivePackingAndUnpacking(t *testing.T) {
	dir := t.TempDir()
	want := map[world.ChunkPos]*chunk.Column{}
	db := openDB(t, dir, Config{Packing: PackingArchive})
	for i := range 2 {
		pos := world.ChunkPos{int32(i), 1}
		want[pos] = worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
		if err := db.StoreColumn(pos, world.Overworld, want[pos]); err != nil {
			t.Fatal(err)
		}
	}
	check := func(db *DB, whole bool, codec blazedb.Compression) {
		t.Helper()
		if err := db.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := db.Engine().Compact(); err != nil {
			t.Fatal(err)
		}
		codecs, err := db.FrameCodecs()
		if err != nil {
			t.Fatal(err)
		}
		for pos, col := range want {
			if rec := rawRecord(t, db, pos); column.Whole(rec) != whole {
				t.Fatalf("column %v: whole %v, want %v (frames %v)", pos, column.Whole(rec), whole, codecs)
			}
			k, _ := key(pos, world.Overworld)
			db.cols.remove(k)
			got, err := db.LoadColumn(pos, world.Overworld)
			if err != nil {
				t.Fatal(err)
			}
			if err := worldtest.Compare(col, got); err != nil {
				t.Fatalf("column %v: %v", pos, err)
			}
		}
		for c := range codecs {
			if c != codec && c != blazedb.CompressionNone {
				t.Fatalf("frames %v, want %v", codecs, codec)
			}
		}
	}
	check(db, true, blazedb.CompressionZstd)
	db.Close()
	db = openDB(t, dir, Config{Packing: PackingOff, Recompress: true})
	check(db, false, blazedb.CompressionLZ4)
}

// Issue 41 item 2: Packing as text, for configuration files.
func TestPackingText(t *testing.T) {
	for _, p := range []Packing{PackingDefault, PackingCold, PackingArchive, PackingOff} {
		b, err := p.MarshalText()
		var q Packing
		if err != nil || q.UnmarshalText(b) != nil || q != p {
			t.Fatalf("%v: %q %v, read back %v", p, b, err, q)
		}
	}
	var q Packing
	if err := q.UnmarshalText([]byte("zip")); !errors.Is(err, blazedb.ErrInvalidOptions) {
		t.Fatalf("an unknown packing: %v", err)
	}
	if _, err := (Config{Packing: 9}).Open(t.TempDir()); !errors.Is(err, blazedb.ErrInvalidOptions) {
		t.Fatalf("Open with packing 9: %v", err)
	}
}
