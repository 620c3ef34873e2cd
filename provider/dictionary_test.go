package provider

import (
	"errors"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// FuzzLoadEntry: a persisted block dictionary entry that decodes is
// resolved against Dragonfly's registry (through its block upgrader) as a
// world's opening would, and neither step panics on any bytes; a record's
// value is an entry, the lost-entry mark (issue 35 item 4), or refused
// with ErrColumnCorrupt.
func FuzzLoadEntry(f *testing.F) {
	for _, e := range []*dictEntry{
		{Name: "minecraft:stone", States: map[string]any{}, Version: 18090528},
		{Name: "minecraft:oak_log", States: map[string]any{"pillar_axis": "y"}, Version: 18090528},
		{Name: "minecraft:water", States: map[string]any{"liquid_depth": int32(0)}},
		{Name: "plugin:unknown", States: map[string]any{"a": []any{int32(1)}, "b": map[string]any{"c": byte(2)}}},
	} {
		b, err := marshalEntry(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(lostEntry))
	br := world.DefaultBlockRegistry
	br.Finalize()
	f.Fuzz(func(t *testing.T, b []byte) {
		// A dictionary record's value: an entry, or the lost-entry mark.
		d := newDictionary()
		if err := d.add(dictPrefix+"0", b); err == nil {
			if e := d.entries[0]; e == nil || e.lost != (string(b) == lostEntry) {
				t.Fatalf("record %q read as %+v", b, e)
			}
		} else if !errors.Is(err, ErrColumnCorrupt) {
			t.Fatalf("error not wrapping ErrColumnCorrupt: %v", err)
		}
		e, err := loadEntry(b)
		if err != nil {
			return
		}
		sharedEntries.resolve(br, true, e)
	})
}

// testDictionary returns a dictionary on Dragonfly's default registry.
func testDictionary() (world.BlockRegistry, *dictionary) {
	br := world.DefaultBlockRegistry
	br.Finalize()
	d := newDictionary()
	d.setRegistry(br)
	return br, d
}

// Columns written under one registry load with the right blocks under
// another whose runtime ids have all moved.
func TestRuntimeIDsMove(t *testing.T) {
	br, d := testDictionary()
	col := worldtest.Synthetic(11, world.Overworld, br)
	enc, err := d.codec.Encode(col, column.Prev{}, blazedb.CompressionLZ4)
	if err != nil {
		t.Fatal(err)
	}
	rec := enc.Rec
	for _, e := range d.entries {
		e.persisted = true
	}
	moved := worldtest.PermutedRegistry(5, "")
	d.setRegistry(moved)
	got, err := d.codec.DecodeColumn(rec, world.Overworld.Range())
	if err != nil {
		t.Fatal(err)
	}
	if err := moved.CheckMoved(col, got); err != nil {
		t.Fatal(err)
	}
}

// A scheduled update of a state the registry does not know fails the load
// with ErrUnknownState naming it, as a block of that state does: dropping
// the update would lose it at the next save.
func TestScheduledUpdateOfUnknownState(t *testing.T) {
	br, d := testDictionary()
	states := worldtest.States(br)
	c := chunk.New(br, world.Overworld.Range())
	c.SetBlock(1, 1, 1, 0, states["minecraft:stone"])
	col := &chunk.Column{Chunk: c, ScheduledBlocks: []chunk.ScheduledBlockUpdate{
		{Pos: [3]int{1, 2, 1}, Block: states["minecraft:water"], Tick: 7},
	}}
	enc, err := d.codec.Encode(col, column.Prev{}, blazedb.CompressionLZ4)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range d.entries {
		e.persisted = true
	}
	d.setRegistry(worldtest.PermutedRegistry(5, "minecraft:water"))
	_, err = d.codec.DecodeColumn(enc.Rec, world.Overworld.Range())
	if !errors.Is(err, ErrUnknownState) || !containsAll(err.Error(), "scheduled update 0", "minecraft:water") {
		t.Fatalf("decode: %v, want ErrUnknownState naming the update and minecraft:water", err)
	}
}

// Issue 42 item 4: a batch of columns names each dictionary entry it is the
// first to use once for every column and sub-chunk that uses it;
// unpersisted writes each entry once (a bulk store's first batch encoded
// the same entries thousands of times).
func TestUnpersistedOnce(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	br := world.DefaultBlockRegistry
	stone, _ := br.StateToRuntimeID("minecraft:stone", map[string]any{})
	dirt, _ := br.StateToRuntimeID("minecraft:dirt", map[string]any{})
	db.dict.mu.Lock()
	defer db.dict.mu.Unlock()
	a, freshA, errA := db.dict.ID(stone)
	b, freshB, errB := db.dict.ID(dirt)
	if errA != nil || errB != nil || !freshA || !freshB {
		t.Fatalf("new entries: %v %v %v %v", freshA, freshB, errA, errB)
	}
	var batch blazedb.Batch
	ids, err := db.dict.unpersisted(&batch, []int32{b, a, b, b, a})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || batch.Len() != 2 {
		t.Fatalf("entries written: ids %v, %d batch operations, want 2 each", ids, batch.Len())
	}
}
