package blazedb

import (
	"fmt"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

func TestCacheBudgetIsStrict(t *testing.T) {
	c := newCache(64 << 10)
	for i := 0; i < 1000; i++ {
		c.set([]byte(fmt.Sprint("key", i)), make([]byte, 100+i%500))
		if used, _ := c.usage(); used > 64<<10 {
			t.Fatalf("cache uses %d bytes of a %d budget", used, 64<<10)
		}
	}
	if c.evictions.Load() == 0 {
		t.Fatal("no evictions counted")
	}
	// A value larger than a shard's budget is not cached at all.
	c.set([]byte("huge"), make([]byte, 64<<10))
	if _, ok := c.get([]byte("huge")); ok {
		t.Fatal("oversized value cached")
	}
}

// Replacing and removing values gives back what they were charged: a
// cache that leaked charges would hold less and less within its budget.
func TestCacheChargesWhatItHolds(t *testing.T) {
	c := newCache(1 << 20)
	for round := range 3 {
		for i := range 50 {
			c.set([]byte(fmt.Sprint("key", i)), make([]byte, 100*(round+1)))
		}
	}
	want := int64(0)
	for i := range 50 {
		want += charge(fmt.Sprint("key", i), make([]byte, 300))
	}
	if used, n := c.usage(); used != want || n != 50 {
		t.Fatalf("%d entries charged %d bytes, want 50 charged %d", n, used, want)
	}
	for i := range 50 {
		c.remove([]byte(fmt.Sprint("key", i)))
	}
	if used, n := c.usage(); used != 0 || n != 0 {
		t.Fatalf("an empty cache charges %d bytes for %d entries", used, n)
	}
}

func TestCacheLRUOrder(t *testing.T) {
	c := newCache(cacheShards * (3 * (100 + 4 + cacheOverhead)))
	// Find three keys in one shard.
	var keys [][]byte
	s0 := c.shard([]byte("k0"))
	for i := 0; len(keys) < 4; i++ {
		k := []byte(fmt.Sprint("k", i))
		if c.shard(k) == s0 {
			keys = append(keys, k)
		}
	}
	for _, k := range keys[:3] {
		c.set(k, make([]byte, 100))
	}
	c.get(keys[0]) // keys[1] is now the least recently used
	c.set(keys[3], make([]byte, 100))
	if _, ok := c.get(keys[1]); ok {
		t.Fatal("evicted the wrong entry")
	}
	for _, k := range [][]byte{keys[0], keys[2], keys[3]} {
		if _, ok := c.get(k); !ok {
			t.Fatalf("%s evicted", k)
		}
	}
}

func TestCacheCountsHitsAndMisses(t *testing.T) {
	db := open(t, vfstest.NewMem(), "/db", Options{})
	db.Put(Key{X: 1}, []byte("v"))
	db.Get(Key{X: 1})
	db.Get(Key{X: 2})
	st := db.Stats()
	if st.CacheHits != 1 || st.NotFound != 1 || st.CacheEntries != 1 {
		t.Fatalf("stats %+v", st)
	}
	// A disk read fills the cache.
	db.cache = newCache(1 << 20)
	db.Get(Key{X: 1})
	db.Get(Key{X: 1})
	if db.cache.hits.Load() != 1 || db.cache.misses.Load() != 1 {
		t.Fatalf("hits %d misses %d", db.cache.hits.Load(), db.cache.misses.Load())
	}
}

// Stamp changes with every write, delete and move of a key's record, and
// only then.
func TestStamp(t *testing.T) {
	db := open(t, vfstest.NewMem(), "/db", Options{})
	k := Key{X: 4}
	if _, ok := db.Stamp(k); ok {
		t.Fatal("stamp of a missing key")
	}
	db.Put(k, []byte("one"))
	s1, ok := db.Stamp(k)
	db.Put(k, []byte("one")) // unchanged: elided
	if s2, _ := db.Stamp(k); !ok || s2 != s1 {
		t.Fatal("an elided put changed the stamp")
	}
	db.Put(Key{X: 5}, []byte("other"))
	if s2, _ := db.Stamp(k); s2 != s1 {
		t.Fatal("another key's write changed the stamp")
	}
	db.Put(k, []byte("two"))
	s3, _ := db.Stamp(k)
	if s3 == s1 {
		t.Fatal("a write kept the stamp")
	}
	db.Compact()
	if s4, _ := db.Stamp(k); s4 == s3 {
		t.Fatal("compaction moved the record but kept the stamp")
	}
	db.Delete(k)
	db.Put(k, []byte("two"))
	if s5, _ := db.Stamp(k); s5 == s3 {
		t.Fatal("delete and put again kept the stamp")
	}
}
