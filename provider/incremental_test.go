package provider

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Storing after random changes re-encodes only what changed; the record
// must equal a full encode byte for byte, and hot and cold loads must
// return the column as stored.
func TestIncrementalStoreMatchesFullEncode(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	br := world.DefaultBlockRegistry
	st := worldtest.States(br)
	ids := make([]uint32, 0, len(st))
	for _, rid := range st {
		ids = append(ids, rid)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, dim := range dims {
		pos := world.ChunkPos{7, -7}
		col := worldtest.Synthetic(21, dim, br)
		r := dim.Range()
		for step := 0; step < 60; step++ {
			switch rng.IntN(6) {
			case 0, 1, 2:
				y := r[0] + rng.IntN(r.Height())
				col.Chunk.SetBlock(uint8(rng.IntN(16)), int16(y), uint8(rng.IntN(16)), uint8(rng.IntN(2)), ids[rng.IntN(len(ids))])
			case 3:
				col.Chunk.SetBiome(uint8(rng.IntN(16)), int16(r[0]+rng.IntN(r.Height())), uint8(rng.IntN(16)), uint32(rng.IntN(40)))
			case 4:
				col.BlockEntities = append(col.BlockEntities, chunk.BlockEntity{Pos: cube.Pos{rng.IntN(16), r[0] + 5, rng.IntN(16)},
					Data: map[string]any{"id": "Sign", "Text": "step", "n": int32(step)}})
			case 5:
				// No change at all.
			}
			if err := storeNow(db, pos, dim, col); err != nil {
				t.Fatal(err)
			}
			k, _ := key(pos, dim)
			snap, ok := db.cols.peek(k)
			if !ok {
				t.Fatal("no snapshot after store")
			}
			full, err := db.dict.codec.Encode(col, column.Prev{}, db.conf.Compression)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(snap.rec, full.Rec) {
				t.Fatalf("%v step %d: incremental record differs from a full encode", dim, step)
			}
			hot, err := db.LoadColumn(pos, dim)
			if err != nil {
				t.Fatal(err)
			}
			if err := worldtest.Compare(col, hot); err != nil {
				t.Fatalf("%v step %d: hot load: %v", dim, step, err)
			}
		}
		db.Close()
		db = openDB(t, dir, Config{})
		cold, err := db.LoadColumn(pos, dim)
		if err != nil {
			t.Fatal(err)
		}
		if err := worldtest.Compare(col, cold); err != nil {
			t.Fatalf("%v: cold load: %v", dim, err)
		}
	}
}

// The snapshot worker caches a cold-loaded column, and the cached copy is
// what was loaded.
func TestSnapshotWorkerCachesLoads(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	col := worldtest.Synthetic(4, world.Overworld, world.DefaultBlockRegistry)
	db.StoreColumn(world.ChunkPos{1, 1}, world.Overworld, col)
	db.Close()
	db = openDB(t, dir, Config{})
	if _, err := db.LoadColumn(world.ChunkPos{1, 1}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	k, _ := key(world.ChunkPos{1, 1}, world.Overworld)
	for i := 0; i < 1000; i++ {
		if _, ok := db.cols.peek(k); ok {
			break
		}
		db.Engine().Stats() // give the worker a moment
		if i == 999 {
			t.Fatal("load was never cached")
		}
		sleepMs(1)
	}
	hot, err := db.LoadColumn(world.ChunkPos{1, 1}, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(col, hot); err != nil {
		t.Fatal(err)
	}
}

// A uniform layer (one block state throughout, as Dragonfly's Compact
// leaves a sub-chunk of water or stone before every save) is reused by the
// next store, not encoded and cloned again: SubChunk.Equals calls such
// layers different even from themselves.
func TestUniformSubChunksReused(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	br := world.DefaultBlockRegistry
	st := worldtest.States(br)
	col := &chunk.Column{Chunk: chunk.New(br, world.Overworld.Range())}
	for x := uint8(0); x < 16; x++ {
		for y := int16(0); y < 16; y++ {
			for z := uint8(0); z < 16; z++ {
				col.Chunk.SetBlock(x, y, z, 0, st["minecraft:water"])
			}
		}
	}
	col.Chunk.SetBlock(0, 100, 0, 0, st["minecraft:stone"])
	col.Chunk.Compact()
	uniform := col.Chunk.SubIndex(0)
	if l := col.Chunk.Sub()[uniform].Layer(0); l.Palette().Len() != 1 || l.Equal(l) {
		t.Fatal("the test needs a layer SubChunk.Equals calls different from itself")
	}
	pos := world.ChunkPos{3, 3}
	k, _ := key(pos, world.Overworld)
	if err := storeNow(db, pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	first, _ := db.cols.peek(k)
	col.Chunk.SetBlock(1, 100, 1, 0, st["minecraft:stone"]) // change another sub-chunk
	if err := storeNow(db, pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	second, _ := db.cols.peek(k)
	if second == first {
		t.Fatal("the changed store kept the old snapshot")
	}
	if second.subs[uniform] != first.subs[uniform] {
		t.Fatal("the uniform sub-chunk was encoded and cloned again")
	}
	got, err := db.LoadColumn(pos, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(col, got); err != nil {
		t.Fatal(err)
	}
}

// An unchanged column, what every autosave stores, is recognised before a
// record is built: the encoder hands back the cached record itself.
func TestUnchangedColumnBuildsNoRecord(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	col := worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry)
	pos := world.ChunkPos{1, 1}
	if err := storeNow(db, pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	k, _ := key(pos, world.Overworld)
	prev, _ := db.cols.peek(k)
	enc, err := db.dict.codec.Encode(col, prev.prev(), db.conf.Compression)
	if err != nil {
		t.Fatal(err)
	}
	if &enc.Rec[0] != &prev.rec[0] {
		t.Fatal("an unchanged column built a new record")
	}
	col.Tick++ // the tail alone differs: a new record
	if enc, err = db.dict.codec.Encode(col, prev.prev(), db.conf.Compression); err != nil {
		t.Fatal(err)
	}
	if &enc.Rec[0] == &prev.rec[0] || bytes.Equal(enc.Rec, prev.rec) {
		t.Fatal("a changed tick was taken for an unchanged column")
	}
}
