package provider

import (
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// snapshotOf returns a snapshot of key x that the cache charges cost bytes.
func snapshotOf(x int32, cost int) *snapshot {
	return &snapshot{key: blazedb.Key{X: x}, rec: make([]byte, cost-512)}
}

// checkCharge fails unless the cache charges exactly what it holds and,
// with nothing pinned, stays within its budget.
func checkCharge(t *testing.T, c *columnCache) {
	t.Helper()
	var sum int64
	for _, el := range c.items {
		sum += c.cost(el.Value.(*snapshot))
	}
	if c.used != sum || c.lru.Len() != len(c.items) {
		t.Fatalf("charged %d for %d bytes of %d snapshots (%d in the LRU list)", c.used, sum, len(c.items), c.lru.Len())
	}
	if len(c.pinned) == 0 && c.used > c.budget {
		t.Fatalf("%d bytes held, budget %d", c.used, c.budget)
	}
}

// The column cache holds what fits its budget, least recently used out
// first, never what is pinned; a snapshot larger than the whole budget is
// not kept unless pinned; and a ready copy that evicts its own snapshot is
// refused rather than charged for a snapshot no longer held.
func TestColumnCacheBudget(t *testing.T) {
	c := newColumnCache(10_000)
	for x := range int32(5) {
		c.put(snapshotOf(x, 3000))
		checkCharge(t, c)
	}
	if len(c.items) != 3 {
		t.Fatalf("%d snapshots of 3,000 bytes in 10,000", len(c.items))
	}
	if _, ok := c.peek(blazedb.Key{X: 1}); ok {
		t.Fatal("the least recently used snapshot was kept")
	}

	c.put(snapshotOf(9, 20_000))
	checkCharge(t, c)
	if _, ok := c.peek(blazedb.Key{X: 9}); ok || len(c.items) != 3 {
		t.Fatalf("a snapshot over the whole budget was cached, or evicted others (%d left)", len(c.items))
	}

	c.pin(blazedb.Key{X: 2}, 1)
	for x := int32(10); x < 15; x++ {
		c.put(snapshotOf(x, 3000))
	}
	if _, ok := c.peek(blazedb.Key{X: 2}); !ok {
		t.Fatal("a pinned snapshot was evicted")
	}
	c.pin(blazedb.Key{X: 9}, 1)
	c.put(snapshotOf(9, 20_000))
	if _, ok := c.peek(blazedb.Key{X: 9}); !ok {
		t.Fatal("a pinned snapshot over the budget was not cached")
	}
	c.pin(blazedb.Key{X: 9}, -1)
	c.pin(blazedb.Key{X: 2}, -1)
	c.put(snapshotOf(20, 3000)) // evicts back within the budget
	checkCharge(t, c)

	// A snapshot that fits, whose ready copy does not fit beside it: making
	// room for the copy evicts every snapshot, its own included.
	c = newColumnCache(10_000)
	s := snapshotOf(1, 1000)
	s.lay.RawSize = 5000 // charged 6,000, its ready copy 5,000 more
	c.put(s)
	if _, ok := c.peek(s.key); !ok {
		t.Fatal("a snapshot within the budget was not cached")
	}
	if c.giveReady(s, &chunk.Column{}) {
		t.Fatal("a ready copy was given to a snapshot its room evicted")
	}
	checkCharge(t, c)
}

// A stored column's cached snapshot keeps the tick's flat copies, and a
// load builds its chunk beside them: from then on the cache charges the
// copies too, so that it holds what it charges (it held up to twice).
func TestCacheChargesBuiltFlatCopies(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	pos := world.ChunkPos{1, 2}
	col := worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry)
	store := func() {
		t.Helper()
		if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
		if err := db.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	used := func(c *columnCache) int64 {
		c.mu.Lock()
		defer c.mu.Unlock()
		checkCharge(t, c)
		return c.used
	}
	store()
	cols, _ := db.columns()
	k, _ := key(pos, world.Overworld)
	s, ok := cols.peek(k)
	if !ok {
		t.Fatal("the stored column is not cached")
	}
	if s.flat == nil {
		t.Skip("this build keeps no flat copies (blaze_safe)")
	}
	var flat int64
	for _, f := range s.flat {
		flat += int64(len(f))
	}
	before := used(cols)
	for range 2 { // the second load charges nothing more
		if _, err := db.LoadColumn(pos, world.Overworld); err != nil {
			t.Fatal(err)
		}
		if got := used(cols); flat == 0 || got != before+flat {
			t.Fatalf("charged %d after the load, want %d + %d of flat copies", got, before, flat)
		}
	}
	// A new store replaces the snapshot, and its charge with it.
	worldtest.ChangeOneBlock(col, 5)
	store()
	used(cols)
}
