package provider

import (
	"container/list"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/blazeworld/blaze/provider/internal/nbt"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// columnCache keeps a snapshot of every column recently loaded or stored,
// so that a hot LoadColumn costs about one Chunk.Clone instead of a decode,
// and storing a column encodes only the sub-chunks that changed since. Its
// byte budget counts encoded records, a close estimate of the decoded size.
// It is safe for concurrent use.
type columnCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	lru    *list.List // of *snapshot, front = most recent
	items  map[blazedb.Key]*list.Element
	pinned map[blazedb.Key]int // never evicted while > 0

	hits, misses atomic.Int64
	// readyMade counts the ready copies Prefetch made, readyTaken those a
	// load handed out.
	readyMade, readyTaken atomic.Int64
}

// snapshot is a private, immutable copy of a column as last stored or
// loaded: its record (and where each sub-chunk lies in it), its sub-chunks,
// and deep copies of everything else. No caller ever holds any part of it;
// LoadColumn hands out copies.
type snapshot struct {
	key           blazedb.Key
	rng           cube.Range
	rec           []byte
	lay           column.Layout
	subs          []*chunk.SubChunk
	biomes        []byte // network biome encoding, uncompressed; never written
	br            chunk.BlockRegistry
	once          sync.Once
	chunk         *chunk.Chunk // built from subs and biomes (build); only ever cloned
	buildErr      error
	tick          int64
	blockEntities []chunk.BlockEntity
	entities      []chunk.Entity
	scheduled     []chunk.ScheduledBlockUpdate
	// ready is a deep copy of the column that no one has seen, made by
	// Prefetch, so that the first LoadColumn after it hands this out and
	// costs nothing; readyCost is what it adds to the cache's charge.
	// Both are guarded by the cache's lock; ready is taken at most once.
	ready     *chunk.Column
	readyCost int64
	// flat, in a store queue's snapshot on the raw path, holds its own
	// copies of the sub-chunks its store changed in their flat form
	// (column/flatsub.go), which costs the World's tick less to make than
	// SubChunk copies; subs[i] is nil where flat[i] is not. codec builds
	// them. The store worker encodes them as they are (column.EncodeParts),
	// and the cache's snapshot of the stored column keeps them until a
	// store changes them, also once a load has built its chunk from them
	// (build; the cache then charges them, built). A snapshot decoded from
	// a record has none.
	flat  [][]byte
	codec *column.Codec
	// flatCharge is what the flat copies hold, charged once a load has
	// built the chunk beside them (built); guarded by the cache's lock.
	flatCharge int64
}

// build assembles s.chunk, once, from the snapshot's own sub-chunks (those
// in flat form built anew, with the biomes, through the raw path:
// column.Codec.BuildParts) and its biome bytes; the sub-chunks are shared
// with s.subs, and neither is ever modified. A stored column's chunk is
// built on its first hot load rather than at the store: the World stores a
// loaded column again at every autosave, and most stores are never
// followed by a load.
func (s *snapshot) build() error {
	s.once.Do(func() {
		if s.chunk != nil {
			return
		}
		if s.flat != nil {
			c, err := s.codec.BuildParts(&column.Parts{Range: s.rng, Subs: s.subs, Flat: s.flat, Biomes: s.biomes}, s.br)
			if err != nil {
				s.buildErr = fmt.Errorf("%w: a snapshot's flat copies: %v", ErrColumnCorrupt, err)
				return
			}
			s.chunk = c
			return
		}
		c, err := chunk.NetworkDecode(s.br, s.biomes, 0, s.rng)
		if err != nil {
			s.buildErr = fmt.Errorf("%w: cached biomes: %v", ErrColumnCorrupt, err)
			return
		}
		copy(c.Sub(), s.subs)
		s.chunk = c
	})
	return s.buildErr
}

// column returns a deep copy that the caller owns.
func (s *snapshot) column() (*chunk.Column, error) {
	if err := s.build(); err != nil {
		return nil, err
	}
	return &chunk.Column{Chunk: s.chunk.Clone(), Tick: s.tick, BlockEntities: nbt.CloneBlockEntities(s.blockEntities),
		Entities: nbt.CloneEntities(s.entities), ScheduledBlocks: slices.Clone(s.scheduled)}, nil
}

func newColumnCache(budget int64) *columnCache {
	return &columnCache{budget: budget, lru: list.New(), items: map[blazedb.Key]*list.Element{}, pinned: map[blazedb.Key]int{}}
}

// prev returns the snapshot as the column codec's previous version of its
// column; none for a nil snapshot.
func (s *snapshot) prev() column.Prev {
	if s == nil {
		return column.Prev{}
	}
	return column.Prev{Rec: s.rec, Layout: s.lay, Subs: s.subs, Flat: s.flat, Biomes: s.biomes, BlockEntities: s.blockEntities, Entities: s.entities}
}

// setFlat gives s the sub-chunks an encode left in their flat form (nil:
// none), which codec builds.
func (s *snapshot) setFlat(flat [][]byte, codec *column.Codec) {
	if flat != nil {
		s.flat, s.codec = flat, codec
	}
}

// cost charges a snapshot its record and, for the decoded column, the
// record's raw size (a close estimate of what the column holds), and its
// flat copies once its chunk is built beside them.
func (c *columnCache) cost(s *snapshot) int64 {
	return int64(len(s.rec)+s.lay.RawSize) + 512 + s.readyCost + s.flatCharge
}

// built charges s, the cached snapshot of its key, for its flat copies
// once a load has built its chunk: the copies stay (the store worker
// encodes the next store against them), and the built sub-chunks hold as
// much again, so without it the cache held up to twice what it charged.
// The charge is the copies' lengths; a copy shares one allocation with the
// others the same store made, which may hold more.
func (c *columnCache) built(s *snapshot) {
	if c == nil || s.flat == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[s.key]; !ok || el.Value.(*snapshot) != s || s.flatCharge != 0 {
		return
	}
	for _, f := range s.flat {
		s.flatCharge += int64(len(f))
	}
	c.used += s.flatCharge
	c.evictLocked(0)
}

// take returns the snapshot of k, which the caller must not modify, and
// its ready copy if it has one, which the caller then owns alone; it
// counts a hit or a miss (for loads).
func (c *columnCache) take(k blazedb.Key) (*snapshot, *chunk.Column, bool) {
	return c.find(k, true)
}

// peek returns the snapshot of k without counting a hit or a miss or
// taking its ready copy (for stores and prefetches).
func (c *columnCache) peek(k blazedb.Key) (*snapshot, bool) {
	s, _, ok := c.find(k, false)
	return s, ok
}

func (c *columnCache) find(k blazedb.Key, load bool) (*snapshot, *chunk.Column, bool) {
	if c == nil {
		return nil, nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if load && ok {
		c.hits.Add(1)
	} else if load {
		c.misses.Add(1)
	}
	if !ok {
		return nil, nil, false
	}
	c.lru.MoveToFront(el)
	s := el.Value.(*snapshot)
	var ready *chunk.Column
	if load && s.ready != nil {
		ready, s.ready = s.ready, nil
		c.used -= s.readyCost
		s.readyCost = 0
		c.readyTaken.Add(1)
	}
	return s, ready, true
}

// pin keeps k from being evicted (counted: pins nest).
func (c *columnCache) pin(k blazedb.Key, delta int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.pinned[k] + delta; n > 0 {
		c.pinned[k] = n
	} else {
		delete(c.pinned, k)
	}
}

// put stores s, replacing any snapshot of the same key.
func (c *columnCache) put(s *snapshot) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(s)
}

// putIfAbsent stores s unless the key has a snapshot, after current()
// confirms it, under the cache lock.
func (c *columnCache) putIfAbsent(s *snapshot, current func() bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[s.key]; !ok && current() {
		c.putLocked(s)
	}
}

func (c *columnCache) putLocked(s *snapshot) {
	c.removeLocked(s.key)
	if c.cost(s) > c.budget && c.pinned[s.key] == 0 {
		return
	}
	c.evictLocked(c.cost(s))
	c.items[s.key] = c.lru.PushFront(s)
	c.used += c.cost(s)
}

// evictLocked removes least recently used columns that are not pinned
// until extra more bytes fit the budget; pinned ones may hold the cache
// over it.
func (c *columnCache) evictLocked(extra int64) {
	for c.used+extra > c.budget {
		el := c.lru.Back()
		for el != nil && c.pinned[el.Value.(*snapshot).key] > 0 {
			el = el.Prev()
		}
		if el == nil {
			break
		}
		c.removeLocked(el.Value.(*snapshot).key)
	}
}

// giveReady makes ready the ready copy of s, if s is still the cached
// snapshot of its key and has none; it reports whether it did.
func (c *columnCache) giveReady(s *snapshot, ready *chunk.Column) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[s.key]; !ok || el.Value.(*snapshot) != s || s.ready != nil {
		return false
	}
	cost := int64(s.lay.RawSize)
	c.lru.MoveToFront(c.items[s.key]) // not evicted to make room for itself
	c.evictLocked(cost)
	if el, ok := c.items[s.key]; !ok || el.Value.(*snapshot) != s {
		return false
	}
	s.ready, s.readyCost = ready, cost
	c.used += cost
	return true
}

// hasReady reports whether s holds a ready copy.
func (c *columnCache) hasReady(s *snapshot) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.ready != nil
}

func (c *columnCache) remove(k blazedb.Key) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(k)
}

func (c *columnCache) removeLocked(k blazedb.Key) {
	if el, ok := c.items[k]; ok {
		c.used -= c.cost(el.Value.(*snapshot))
		c.lru.Remove(el)
		delete(c.items, k)
	}
}
