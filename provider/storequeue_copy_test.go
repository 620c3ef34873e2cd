package provider

import (
	"slices"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// copyTestColumn is a synthetic column with what the store queue's copies
// must keep apart from the World's: a sub-chunk of its own air and no
// layers, NBT lists of Dragonfly's own types, an entity.
func copyTestColumn() *chunk.Column {
	col := worldtest.Synthetic(5, world.Nether, world.DefaultBlockRegistry)
	col.Chunk.Sub()[len(col.Chunk.Sub())-1] = chunk.NewSubChunk(777)
	col.BlockEntities[0].Data["Inventory"] = []map[string]any{{"Name": "minecraft:apple", "Count": uint8(1)}}
	col.Entities = append(col.Entities, chunk.Entity{ID: 77, Data: map[string]any{
		"identifier": "minecraft:item", "Pos": []float32{1, 2, 3}, "Tags": []string{"a"},
	}})
	return col
}

// mutateCopyTestColumn changes col as a World might after storing it:
// blocks of new states in several sub-chunks (palettes grow, storages are
// replaced), biomes, and values deep inside the NBT. round varies what it
// sets.
func mutateCopyTestColumn(col *chunk.Column, round int) {
	states := worldtest.States(world.DefaultBlockRegistry)
	rids := make([]uint32, 0, len(states))
	for _, rid := range states {
		rids = append(rids, rid)
	}
	slices.Sort(rids)
	r := col.Chunk.Range()
	for j := range 48 {
		y := int16(r[0] + (j*37+round*11)%(r.Height()-16))
		col.Chunk.SetBlock(uint8(j%16), y, uint8((j*7+round)%16), 0, rids[(j+round)%len(rids)])
		col.Chunk.SetBiome(uint8(j*5%16), y, uint8(j%16), uint32(20+round))
	}
	be := col.BlockEntities[0].Data
	be["CustomName"] = "changed"
	be["Items"].([]any)[0].(map[string]any)["Count"] = uint8(50 + round)
	be["Inventory"].([]map[string]any)[0]["Count"] = uint8(60 + round)
	e := col.Entities[len(col.Entities)-1].Data
	e["Pos"].([]float32)[0] = float32(100 + round)
	e["Tags"].([]string)[0] = "changed"
}

// Issue 42 (the tick's share): a queued store's snapshot, whose changed
// sub-chunks are copied in their flat form and whose NBT is copied only
// where it can change, is a true copy of the column stored. What the World
// then changes in its column (blocks, biomes, nested NBT) shows neither in
// a load of the queued store nor in what the worker writes, also when a
// second store shares the unchanged sub-chunks with the first's snapshot;
// a queued sub-chunk keeps its own air.
func TestQueuedSnapshotIsACopy(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	gate := make(chan struct{})
	db.store.gate = gate
	release := func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}
	t.Cleanup(release) // before db.Close, which waits for the worker
	pos := world.ChunkPos{2, -3}
	col, want := copyTestColumn(), copyTestColumn()
	load := func(what string, want *chunk.Column) *chunk.Column {
		t.Helper()
		got, err := db.LoadColumn(pos, world.Nether)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := worldtest.Compare(want, got); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return got
	}
	if err := db.StoreColumn(pos, world.Nether, col); err != nil {
		t.Fatal(err)
	}
	mutateCopyTestColumn(col, 1)
	got := load("a queued new column after the World changed it", want)
	if air := got.Chunk.Sub()[len(got.Chunk.Sub())-1].Block(0, 0, 0, 255); air != 777 {
		t.Fatalf("a queued sub-chunk of its own air reads %d", air)
	}

	// The second store is compared with the first's snapshot, still
	// queued: the sub-chunks the World did not change are shared with it.
	k, _ := key(pos, world.Nether)
	first := db.store.find(k)
	mutateCopyTestColumn(want, 1)
	if err := db.StoreColumn(pos, world.Nether, col); err != nil {
		t.Fatal(err)
	}
	second := db.store.find(k)
	if first.flat != nil {
		shared := 0
		for i, f := range second.flat {
			if len(f) > 0 && len(first.flat[i]) > 0 && &f[0] == &first.flat[i][0] {
				shared++
			}
		}
		if shared == 0 {
			t.Fatal("the second store shares no sub-chunk with the first's snapshot")
		}
	}
	mutateCopyTestColumn(col, 2)
	load("a queued changed column after the World changed it", want)

	release()
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	load("the written column", want)
}
