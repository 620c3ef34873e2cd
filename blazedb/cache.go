package blazedb

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// cache is a sharded LRU of raw values with a strict byte budget. Every
// shard owns budget/shards bytes and evicts from its cold end until a new
// value fits; a value larger than a shard's budget is not cached.
//
// Invariant kept with DB: a cached value is the current value of its key.
// Writers update the index first and the cache second; a reader that missed
// inserts only through addIfCurrent, which re-checks the index under the
// shard lock, so a stale read can never overwrite a newer write.
//
// Cached slices are never modified after insertion, so they may be read
// outside the shard lock. It is safe for concurrent use.
//
// No library was used: the candidates are count-bounded
// (hashicorp/golang-lru) or admit values probabilistically (ristretto),
// and the budget here must be exact and the LRU order deterministic.
type cache struct {
	shards []cacheShard
	seed   maphash.Seed

	hits, misses, evictions atomic.Int64
}

const cacheShards = 16

// cacheOverhead is charged per entry for the map slot, list links and key.
const cacheOverhead = 96

type cacheShard struct {
	mu     sync.Mutex
	budget int64
	used   int64
	items  map[string]*centry
	head   centry // sentinel: head.next is the most recently used
	_      [40]byte
}

type centry struct {
	key        string
	val        []byte
	prev, next *centry
}

func newCache(budget int64) *cache {
	c := &cache{shards: make([]cacheShard, cacheShards), seed: maphash.MakeSeed()}
	for i := range c.shards {
		s := &c.shards[i]
		s.budget = budget / cacheShards
		s.items = map[string]*centry{}
		s.head.next, s.head.prev = &s.head, &s.head
	}
	return c
}

func (c *cache) shard(key []byte) *cacheShard {
	return &c.shards[maphash.Bytes(c.seed, key)%cacheShards]
}

func (s *cacheShard) unlink(e *centry) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (s *cacheShard) pushFront(e *centry) {
	e.prev, e.next = &s.head, s.head.next
	s.head.next.prev = e
	s.head.next = e
}

func charge(key string, val []byte) int64 { return int64(len(key) + len(val) + cacheOverhead) }

// get returns the cached value (read-only; copy before handing it out).
func (c *cache) get(key []byte) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	s := c.shard(key)
	s.mu.Lock()
	e, ok := s.items[string(key)]
	if ok {
		s.unlink(e)
		s.pushFront(e)
	}
	s.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	return e.val, true
}

// set stores val, which the cache now owns, as key's value.
func (c *cache) set(key []byte, val []byte) {
	if c == nil {
		return
	}
	s := c.shard(key)
	s.mu.Lock()
	c.setLocked(s, key, val)
	s.mu.Unlock()
}

// addIfCurrent stores val only if current() still holds, checked under the
// shard lock (see the invariant above).
func (c *cache) addIfCurrent(key []byte, val []byte, current func() bool) {
	if c == nil {
		return
	}
	s := c.shard(key)
	s.mu.Lock()
	if current() {
		c.setLocked(s, key, val)
	}
	s.mu.Unlock()
}

func (c *cache) setLocked(s *cacheShard, key []byte, val []byte) {
	if e, ok := s.items[string(key)]; ok {
		s.unlink(e)
		delete(s.items, e.key)
		s.used -= charge(e.key, e.val)
	}
	k := string(key)
	need := charge(k, val)
	if need > s.budget {
		return
	}
	for s.used+need > s.budget {
		old := s.head.prev
		s.unlink(old)
		delete(s.items, old.key)
		s.used -= charge(old.key, old.val)
		c.evictions.Add(1)
	}
	e := &centry{key: k, val: val}
	s.items[k] = e
	s.pushFront(e)
	s.used += need
}

func (c *cache) remove(key []byte) {
	if c == nil {
		return
	}
	s := c.shard(key)
	s.mu.Lock()
	if e, ok := s.items[string(key)]; ok {
		s.unlink(e)
		delete(s.items, e.key)
		s.used -= charge(e.key, e.val)
	}
	s.mu.Unlock()
}

// usage reports the bytes charged and the number of entries.
func (c *cache) usage() (bytes int64, entries int) {
	if c == nil {
		return 0, 0
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		bytes += s.used
		entries += len(s.items)
		s.mu.Unlock()
	}
	return bytes, entries
}
