package provider

import (
	"fmt"
	"maps"
	"sync"

	blazenbt "github.com/blazeworld/blaze/provider/internal/nbt"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// marshalEntry encodes a dictionary entry as it is persisted: little-endian NBT.
func marshalEntry(e *dictEntry) ([]byte, error) { return nbt.MarshalEncoding(e, nbt.LittleEndian) }

// sharedEntries caches, for the whole process, what persisted dictionary
// entries decode to (keyed by their bytes) and what they resolve to in
// each registry: the regions of a segmented world, and an arena's
// template and overlay, persist the same entries, and decoding and
// resolving every entry (through Dragonfly's block upgrader) was most of
// opening a region. It is safe for concurrent use. What it holds is never
// modified: an entry's States map is shared by every dictionary that
// loaded it, and only ever read.
var sharedEntries = entryCache{decoded: map[string]dictEntry{}, resolved: map[resolvedKey]uint32{}}

// maxSharedEntries bounds each of the cache's maps; beyond it, entries are
// decoded and resolved as if it did not exist.
const maxSharedEntries = 1 << 16

type entryCache struct {
	mu       sync.Mutex
	decoded  map[string]dictEntry
	resolved map[resolvedKey]uint32 // noRID: the registry cannot resolve it
}

type resolvedKey struct {
	br      chunk.BlockRegistry
	key     string
	version int32
}

// loadEntry decodes a persisted entry, from the cache when it holds the
// same bytes. The entry returned is the caller's; its States are shared.
func loadEntry(v []byte) (*dictEntry, error) {
	c := &sharedEntries
	c.mu.Lock()
	e, ok := c.decoded[string(v)]
	c.mu.Unlock()
	if !ok {
		var err error
		if e, err = decodeEntry(v); err != nil {
			return nil, err
		}
		e.key = stateKey(e.Name, e.States)
		c.mu.Lock()
		if len(c.decoded) < maxSharedEntries {
			c.decoded[string(v)] = e
		}
		c.mu.Unlock()
	}
	e.persisted = true
	return &e, nil
}

// decodeEntry decodes a persisted entry: the NBT compound marshalEntry
// writes, with the name, the states and the version and nothing else. It
// uses blazenbt.Decode, which is safe on any bytes (gophertunnel's decoder
// panics on some damaged lengths), and refuses state properties of a type
// no block state has: Dragonfly's registry takes uint8, int32 and string
// values (an entry holds a bool as a byte) and panics on any other.
func decodeEntry(v []byte) (dictEntry, error) {
	m, err := blazenbt.Decode(v)
	if err != nil {
		return dictEntry{}, err
	}
	var e dictEntry
	for k, x := range m {
		ok := false
		switch k {
		case "name":
			e.Name, ok = x.(string)
		case "states":
			e.States, ok = x.(map[string]any)
		case "version":
			e.Version, ok = x.(int32)
		default:
			return dictEntry{}, fmt.Errorf("block dictionary entry has a field %q", k)
		}
		if !ok {
			return dictEntry{}, fmt.Errorf("block dictionary entry's %q is a %T", k, x)
		}
	}
	if e.States == nil {
		e.States = map[string]any{}
	}
	for k, x := range e.States {
		switch x.(type) {
		case uint8, int32, string:
		default:
			return dictEntry{}, fmt.Errorf("block state property %q holds a %T, which no block state has", k, x)
		}
	}
	return e, nil
}

// resolve returns e's runtime id in br, or noRID, from the cache when
// shared (br may key a map) and it holds the answer.
func (c *entryCache) resolve(br chunk.BlockRegistry, shared bool, e *dictEntry) uint32 {
	k := resolvedKey{br, e.key, e.Version}
	if shared {
		c.mu.Lock()
		rid, ok := c.resolved[k]
		c.mu.Unlock()
		if ok {
			return rid
		}
	}
	// The upgrader may rewrite the states it is given: give it a copy.
	enc := chunk.BlockPaletteEncoding{Blocks: br}
	rid, err := enc.DecodeBlockState(map[string]any{"name": e.Name, "states": maps.Clone(e.States), "version": e.Version})
	if err != nil {
		rid = noRID
	}
	if shared {
		c.mu.Lock()
		if len(c.resolved) < maxSharedEntries {
			c.resolved[k] = rid
		}
		c.mu.Unlock()
	}
	return rid
}
