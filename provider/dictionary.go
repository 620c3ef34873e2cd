package provider

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// The block dictionary gives every block state a world uses a small id
// that never changes: column records store these ids, not the registry's
// runtime ids, which move whenever Dragonfly (or a plugin's set of blocks)
// changes. Each entry is a named record in the engine,
//
//	name  "dict/" + id in lower-case hexadecimal
//	value NBT (little-endian) compound {name: string, states: compound,
//	      version: int32}, the shape Bedrock itself uses on disk
//
// and is written in the same atomic batch as the first column that uses it,
// so no column can survive a crash without its states. When a registry
// arrives, every entry is resolved through Dragonfly's block upgrader and
// the registry; entries it does not know resolve to nothing, and columns
// using them fail to load with ErrUnknownState.
const dictPrefix = "dict/"

// dictEntry is one block state of the dictionary.
type dictEntry struct {
	Name      string         `nbt:"name"`
	States    map[string]any `nbt:"states"`
	Version   int32          `nbt:"version"`
	persisted bool
}

// noRID marks a dictionary id the registry cannot resolve.
const noRID = ^uint32(0)

// dictionary is safe for concurrent use.
type dictionary struct {
	mu      sync.Mutex
	entries []*dictEntry     // by id; nil for ids never persisted
	byKey   map[string]int32 // stateKey -> id
	br      chunk.BlockRegistry
	ridToID []int32  // runtime id -> dictionary id, -1 when not yet assigned
	idToRID []uint32 // dictionary id -> runtime id, or noRID
	// raw builds decoded sub-chunks directly; nil when its probe refused
	// this Dragonfly (rawstorage.go). Set once, before any use.
	raw *rawStorage
	// chunks holds an empty chunk of br for each range decoded, the
	// template rawStorage copies decoded chunks from. Never modified.
	chunks map[cube.Range]*chunk.Chunk
}

func newDictionary() *dictionary {
	return &dictionary{byKey: map[string]int32{}, raw: rawStorageOnce()}
}

// stateKey renders a state canonically: name, then properties sorted, each
// with its NBT type.
func stateKey(name string, props map[string]any) string {
	var b strings.Builder
	b.WriteString(name)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&b, "\x00%s=%T:%v", k, props[k], props[k])
	}
	return b.String()
}

// load reads every dictionary entry from the engine.
func (d *dictionary) load(eng *blazedb.DB) error {
	names, err := eng.Names()
	if err != nil {
		return err
	}
	for _, n := range names {
		if !strings.HasPrefix(n, dictPrefix) {
			continue
		}
		id, err := strconv.ParseUint(strings.TrimPrefix(n, dictPrefix), 16, 31)
		if err != nil {
			return fmt.Errorf("%w: dictionary record %q", ErrColumnCorrupt, n)
		}
		v, err := eng.GetNamed(n)
		if err != nil {
			return fmt.Errorf("read dictionary entry %d: %w", id, err)
		}
		e := &dictEntry{persisted: true}
		if err := nbt.UnmarshalEncoding(v, e, nbt.LittleEndian); err != nil {
			return fmt.Errorf("%w: dictionary entry %d: %v", ErrColumnCorrupt, id, err)
		}
		if e.States == nil {
			e.States = map[string]any{}
		}
		for int(id) >= len(d.entries) {
			d.entries = append(d.entries, nil)
		}
		d.entries[id] = e
		d.byKey[stateKey(e.Name, e.States)] = int32(id)
	}
	return nil
}

// setRegistry resolves every entry against br.
func (d *dictionary) setRegistry(br chunk.BlockRegistry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.br = br
	d.chunks = map[cube.Range]*chunk.Chunk{}
	d.ridToID = make([]int32, br.BlockCount())
	for i := range d.ridToID {
		d.ridToID[i] = -1
	}
	d.idToRID = make([]uint32, len(d.entries))
	for id, e := range d.entries {
		d.idToRID[id] = noRID
		if e != nil {
			d.resolve(int32(id), e)
		}
	}
}

// resolve maps entry id to the registry; d.mu must be held.
func (d *dictionary) resolve(id int32, e *dictEntry) {
	enc := chunk.BlockPaletteEncoding{Blocks: d.br}
	rid, err := enc.DecodeBlockState(map[string]any{"name": e.Name, "states": e.States, "version": e.Version})
	if err != nil {
		d.idToRID[id] = noRID
		return
	}
	d.idToRID[id] = rid
	if int(rid) < len(d.ridToID) && d.ridToID[rid] < 0 {
		d.ridToID[rid] = id
	}
}

// idFor returns the dictionary id of runtime id rid, adding the state if it
// is new. d.mu must be held.
func (d *dictionary) idFor(rid uint32) (int32, error) {
	if int(rid) < len(d.ridToID) {
		if id := d.ridToID[rid]; id >= 0 {
			return id, nil
		}
	}
	name, props, ok := d.br.RuntimeIDToState(rid)
	if !ok || int(rid) >= len(d.ridToID) {
		return 0, fmt.Errorf("runtime id %d is not in the block registry", rid)
	}
	key := stateKey(name, props)
	id, ok := d.byKey[key]
	if !ok {
		id = int32(len(d.entries))
		if props == nil {
			props = map[string]any{}
		}
		d.entries = append(d.entries, &dictEntry{Name: name, States: props, Version: chunk.CurrentBlockVersion})
		d.idToRID = append(d.idToRID, rid)
		d.byKey[key] = id
	}
	d.ridToID[rid] = id
	return id, nil
}

// unpersisted appends to b the dictionary entries among ids that are not
// yet known to be on disk, and returns their ids. d.mu must be held.
func (d *dictionary) unpersisted(b *blazedb.Batch, ids []int32) ([]int32, error) {
	var out []int32
	for _, id := range ids {
		e := d.entries[id]
		if e.persisted {
			continue
		}
		v, err := nbt.MarshalEncoding(e, nbt.LittleEndian)
		if err != nil {
			return nil, fmt.Errorf("encode dictionary entry %d: %w", id, err)
		}
		b.PutNamed(dictPrefix+strconv.FormatUint(uint64(id), 16), v)
		out = append(out, id)
	}
	return out, nil
}

func (d *dictionary) markPersisted(ids []int32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		d.entries[id].persisted = true
	}
}

// state describes dictionary id for error messages. d.mu must be held.
func (d *dictionary) state(id int32) string {
	if id < 0 || int(id) >= len(d.entries) || d.entries[id] == nil {
		return fmt.Sprintf("#%d (missing from the dictionary)", id)
	}
	e := d.entries[id]
	return fmt.Sprintf("%s%v (block version %d)", e.Name, e.States, e.Version)
}

func marshalEntry(e *dictEntry) ([]byte, error) { return nbt.MarshalEncoding(e, nbt.LittleEndian) }
