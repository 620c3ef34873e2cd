package provider

import (
	"container/list"
	"reflect"
	"slices"
	"sync"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// columnCache keeps decoded columns that were recently loaded or stored,
// so that a hot LoadColumn costs a deep copy instead of a decode. Every
// column in it is a private copy that no caller has seen: LoadColumn hands
// out clones, StoreColumn puts in a clone. It also keeps each column's
// encoded record, so storing an unchanged column costs one encode and one
// comparison. Its byte budget counts the encoded records, a close estimate
// of the decoded size. It is safe for concurrent use.
type columnCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	lru    *list.List // of *cached, front = most recent
	items  map[blazedb.Key]*list.Element
}

type cached struct {
	key blazedb.Key
	col *chunk.Column
	rec []byte
}

func newColumnCache(budget int64) *columnCache {
	return &columnCache{budget: budget, lru: list.New(), items: map[blazedb.Key]*list.Element{}}
}

func (c *columnCache) cost(e *cached) int64 { return int64(len(e.rec))*2 + 512 }

// get returns the cached entry; the caller must clone e.col before handing
// it out and must not modify e.
func (c *columnCache) get(k blazedb.Key) (*cached, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*cached), true
}

// put stores a private column and its record.
func (c *columnCache) put(k blazedb.Key, col *chunk.Column, rec []byte) {
	if c == nil {
		return
	}
	e := &cached{key: k, col: col, rec: rec}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(k)
	if c.cost(e) > c.budget {
		return
	}
	for c.used+c.cost(e) > c.budget {
		c.removeLocked(c.lru.Back().Value.(*cached).key)
	}
	c.items[k] = c.lru.PushFront(e)
	c.used += c.cost(e)
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
		c.used -= c.cost(el.Value.(*cached))
		c.lru.Remove(el)
		delete(c.items, k)
	}
}

// cloneColumn returns a deep copy of col that shares nothing with it.
func cloneColumn(col *chunk.Column) *chunk.Column {
	out := &chunk.Column{Chunk: col.Chunk.Clone(), Tick: col.Tick, ScheduledBlocks: slices.Clone(col.ScheduledBlocks)}
	if col.Entities != nil {
		out.Entities = make([]chunk.Entity, len(col.Entities))
		for i, e := range col.Entities {
			out.Entities[i] = chunk.Entity{ID: e.ID, Data: cloneMap(e.Data)}
		}
	}
	if col.BlockEntities != nil {
		out.BlockEntities = make([]chunk.BlockEntity, len(col.BlockEntities))
		for i, be := range col.BlockEntities {
			out.BlockEntities[i] = chunk.BlockEntity{Pos: be.Pos, Data: cloneMap(be.Data)}
		}
	}
	return out
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

// cloneValue deep-copies the values NBT decoding produces; anything else
// that is mutable is copied through reflection.
func cloneValue(v any) any {
	switch t := v.(type) {
	case nil, bool, uint8, int8, int16, int32, int64, float32, float64, string:
		return v
	case map[string]any:
		return cloneMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = cloneValue(e)
		}
		return out
	case []byte:
		return slices.Clone(t)
	case []int32:
		return slices.Clone(t)
	case []int64:
		return slices.Clone(t)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice:
		if rv.IsNil() {
			return v
		}
		out := reflect.MakeSlice(rv.Type(), rv.Len(), rv.Len())
		for i := 0; i < rv.Len(); i++ {
			out.Index(i).Set(reflect.ValueOf(cloneValue(rv.Index(i).Interface())).Convert(rv.Type().Elem()))
		}
		return out.Interface()
	case reflect.Array:
		out := reflect.New(rv.Type()).Elem()
		for i := 0; i < rv.Len(); i++ {
			out.Index(i).Set(reflect.ValueOf(cloneValue(rv.Index(i).Interface())).Convert(rv.Type().Elem()))
		}
		return out.Interface()
	case reflect.Map:
		if rv.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(rv.Type(), rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), reflect.ValueOf(cloneValue(iter.Value().Interface())).Convert(rv.Type().Elem()))
		}
		return out.Interface()
	}
	return v
}
