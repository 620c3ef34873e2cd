package provider

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/blazeworld/blaze/provider/internal/rawchunk"
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
//	      version: int32}, the shape Bedrock itself uses on disk;
//	      or lostEntry, 11 bytes "\x00blaze:lost", which no NBT
//	      compound starts with: the entry was damaged and no copy held
//	      it, so Repair wrote this in its place (below)
//
// and is written in the same atomic batch as the first column that uses it,
// so no column can survive a crash without its states. When a registry
// arrives, every entry is resolved through Dragonfly's block upgrader and
// the registry; entries it does not know resolve to nothing, and columns
// using them fail to load with ErrUnknownState (unknownState).
const dictPrefix = "dict/"

// lostEntry is the value Repair writes for an entry that was damaged and
// that neither the log nor dictionary.dat holds intact: the bytes are gone,
// but columns may use the id, so the id is kept, never given to another
// state, and those columns fail to load with an error wrapping both
// ErrUnknownState and ErrColumnCorrupt (and are never overwritten) until a
// dictionary.dat that holds the entry (from a backup) is put back, which
// the next open takes it from. Part of the on-disk format.
const lostEntry = "\x00blaze:lost"

// dictEntry is one block state of the dictionary.
type dictEntry struct {
	Name      string         `nbt:"name"`
	States    map[string]any `nbt:"states"`
	Version   int32          `nbt:"version"`
	persisted bool
	lost      bool   // its record holds lostEntry: no state, id kept
	key       string // stateKey(Name, States)
	raw       []byte // the value of its record, once encoded
}

// noRID marks a dictionary id the registry cannot resolve.
const noRID = column.NoRID

// dictionary is safe for concurrent use.
type dictionary struct {
	mu      sync.Mutex
	entries []*dictEntry     // by id; nil for ids never persisted
	byKey   map[string]int32 // stateKey -> id
	br      chunk.BlockRegistry
	ridToID []int32  // runtime id -> dictionary id, -1 when not yet assigned
	idToRID []uint32 // dictionary id -> runtime id, or noRID
	// codec encodes and decodes column records with this dictionary's
	// ids, through rawchunk unless its probe refused this Dragonfly or the
	// build forces the public path. Set once, before any use (tests
	// replace it).
	codec *column.Codec
	// brShared reports whether br may key sharedEntries' resolutions
	// (its dynamic type is comparable).
	brShared bool
	// chunks holds an empty chunk of br for each range decoded, the
	// template the codec's builder copies decoded chunks from. Never
	// modified.
	chunks map[cube.Range]*chunk.Chunk
	// copied is the number of entries dictionary.dat holds, if they are
	// exactly the persisted ones; else copyStale, or copyUnread when the
	// file has not been read.
	copied int
	// copiedGen is the lineage the copy on disk was written with (or
	// read with, matching) when copied counts its entries; 0 when unknown.
	copiedGen uint64
}

// Values of dictionary.copied.
const (
	copyStale  = -1
	copyUnread = -2
)

func newDictionary() *dictionary {
	raw, _ := rawchunk.Get() // Open reports a refusal
	d := &dictionary{byKey: map[string]int32{}}
	d.codec = column.New(d, raw)
	return d
}

// The dictionary as the column codec's Dictionary.

// Lock and Unlock take and release d.mu, around the codec's ID calls.
func (d *dictionary) Lock()   { d.mu.Lock() }
func (d *dictionary) Unlock() { d.mu.Unlock() }

// ID returns rid's dictionary id, assigning one if need be, and whether it
// is not yet persisted. The caller holds d.mu.
func (d *dictionary) ID(rid uint32) (int32, bool, error) {
	id, err := d.idFor(rid)
	if err != nil {
		return 0, false, err
	}
	return id, !d.entries[id].persisted, nil
}

// Registry returns the block registry, nil until one is set.
func (d *dictionary) Registry() chunk.BlockRegistry {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.br
}

// Decoding returns the registry, the id to runtime id table (only ever
// replaced, by setRegistry, or appended to, by idFor, never changed in
// place, so that the caller reads it without the lock) and, if template,
// the empty chunk of rng under the registry.
func (d *dictionary) Decoding(rng cube.Range, template bool) (chunk.BlockRegistry, []uint32, *chunk.Chunk) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var tmpl *chunk.Chunk
	if d.br != nil && template {
		if tmpl = d.chunks[rng]; tmpl == nil {
			tmpl = chunk.New(d.br, rng)
			d.chunks[rng] = tmpl
		}
	}
	return d.br, d.idToRID, tmpl
}

// Unknown returns the error for a dictionary id the registry does not
// resolve (unknownState).
func (d *dictionary) Unknown(id uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.unknownState(id)
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

// load reads every dictionary entry from the engine. An entry whose record
// does not read, or reads and does not decode, is taken from the entries
// of dictionary.dat, which readCopy
// returns (nil when there is none; an error when it does not read), as is,
// when lost (recovery skipped damaged stretches of the log), an entry the
// copy holds that the engine does not, and an entry Repair marked lost
// (lostEntry) that the copy holds again; the copy is used only if every
// entry present in both is the same bytes in both, and read only when the
// engine lacks something. It returns the ids taken from the copy, which the
// engine does not hold intact. Entries that do not read and that no usable
// copy holds give an *entriesLostError listing them all.
func (d *dictionary) load(eng *blazedb.DB, readCopy func() (map[int32][]byte, error), lost bool) ([]int32, error) {
	d.copied = copyUnread
	// One engine read covers many entries (they are small and mostly
	// written together): a read each was most of opening a small world.
	err := eng.ReadNamed(dictPrefix, d.add)
	damaged := map[int32]error{}
	if errors.Is(err, blazedb.ErrCorrupt) {
		// Some record does not read, or reads and does not decode (which
		// is damage as well, and treated the same): read each on its own
		// to learn which.
		d.entries, d.byKey = nil, map[string]int32{}
		names, err := eng.Names()
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if !strings.HasPrefix(n, dictPrefix) {
				continue
			}
			id, err := dictID(n)
			if err != nil {
				return nil, err
			}
			v, err := eng.GetNamed(n)
			if err == nil {
				err = d.add(n, v)
			}
			if errors.Is(err, blazedb.ErrCorrupt) {
				damaged[id] = corruption(chunksFile, fmt.Sprintf("dictionary entry %d", id), err)
				continue
			}
			if err != nil {
				return nil, err
			}
		}
	} else if err != nil {
		return nil, err
	}
	var marked []int32 // lostEntry records: a usable copy may hold them now
	for id, e := range d.entries {
		if e != nil && e.lost {
			marked = append(marked, int32(id))
		}
	}
	if len(damaged) == 0 && !lost && len(marked) == 0 {
		return nil, nil
	}
	cp, cerr := readCopy()
	// The copy is used only if every entry present in both is the same
	// bytes in both.
	why := ""
	switch {
	case cerr != nil:
		why = fmt.Sprintf("does not read (%v)", cerr)
	case cp == nil:
		why = "is missing"
	}
	for id, e := range d.entries {
		if v, ok := cp[int32(id)]; ok && e != nil && !e.lost && !bytes.Equal(v, e.raw) && why == "" {
			why = fmt.Sprintf("is not this world's (entry %d differs)", id)
		}
	}
	usable := why == ""
	var need, unrestorable []int32
	for id := range damaged {
		if _, ok := cp[id]; ok && usable {
			need = append(need, id)
		} else {
			unrestorable = append(unrestorable, id)
		}
	}
	if len(unrestorable) > 0 {
		slices.Sort(unrestorable)
		if why == "" {
			why = "does not hold it"
		}
		return nil, &entriesLostError{ids: unrestorable, why: fmt.Sprintf("%s %s", dictCopyName, why), err: damaged[unrestorable[0]]}
	}
	if usable {
		for id := range cp {
			if lost && !d.holds(id) && damaged[id] == nil {
				// Lost with a damaged stretch of the log: columns using it
				// would report it; the copy restores it.
				need = append(need, id)
			}
		}
		for _, id := range marked {
			if _, ok := cp[id]; ok {
				need = append(need, id)
			}
		}
	}
	slices.Sort(need)
	for _, id := range need {
		if err := d.add(dictPrefix+strconv.FormatUint(uint64(id), 16), cp[id]); err != nil {
			return nil, fmt.Errorf("%s: %w", dictCopyName, err)
		}
	}
	d.copied = d.copyMatches(cp)
	return need, nil
}

// entriesLostError: block dictionary entries that do not read from the
// engine, and that no usable copy holds. It wraps the first entry's error
// (blazedb.ErrCorrupt).
type entriesLostError struct {
	ids []int32
	why string // why the copy was no help
	err error
}

func (e *entriesLostError) Error() string {
	what := fmt.Sprintf("block dictionary entry %d does not read", e.ids[0])
	if len(e.ids) > 1 {
		what = fmt.Sprintf("block dictionary entries %v do not read", e.ids)
	}
	return fmt.Sprintf("%s, and %s: %v", what, e.why, e.err)
}

func (e *entriesLostError) Unwrap() error { return e.err }

// copyMatches returns len(cp) if cp holds exactly the persisted entries,
// else copyStale. d.mu must be held, or d not yet shared.
func (d *dictionary) copyMatches(cp map[int32][]byte) int {
	if entries := d.persistedEntries(); cp != nil && maps.EqualFunc(entries, cp, bytes.Equal) {
		return len(cp)
	}
	return copyStale
}

// add decodes the dictionary record n holding v.
func (d *dictionary) add(n string, v []byte) error {
	id, err := dictID(n)
	if err != nil {
		return err
	}
	for int(id) >= len(d.entries) {
		d.entries = append(d.entries, nil)
	}
	if string(v) == lostEntry {
		d.entries[id] = &dictEntry{persisted: true, lost: true, raw: v}
		return nil
	}
	e, err := loadEntry(v)
	if err != nil {
		return corruption(chunksFile, fmt.Sprintf("dictionary entry %d", id), fmt.Errorf("%w: block dictionary entry %d: %v", ErrColumnCorrupt, id, err))
	}
	e.raw = v
	d.entries[id] = e
	d.byKey[e.key] = id
	return nil
}

// dictID parses the id in a dictionary record's name.
func dictID(n string) (int32, error) {
	id, err := strconv.ParseUint(strings.TrimPrefix(n, dictPrefix), 16, 31)
	if err != nil {
		return 0, corruption(chunksFile, fmt.Sprintf("named record %q", n), fmt.Errorf("%w: dictionary record %q", ErrColumnCorrupt, n))
	}
	return int32(id), nil
}

// holds reports whether entry id is loaded.
func (d *dictionary) holds(id int32) bool {
	return int(id) < len(d.entries) && d.entries[id] != nil
}

// persistedEntries returns the value of every entry on disk, by id.
func (d *dictionary) persistedEntries() map[int32][]byte {
	out := map[int32][]byte{}
	for id, e := range d.entries {
		if e != nil && e.persisted && !e.lost {
			out[int32(id)] = e.raw
		}
	}
	return out
}

// needsCopy reports whether dictionary.dat in dir must be written again:
// there are persisted entries, and it lacks some or holds others, or was
// written beside another generation of the log than gen. When it
// was not read yet, it is read now (outside the lock), once, and compared
// byte for byte with what writeCopy would write beside an engine at
// generation gen.
func (d *dictionary) needsCopy(fs vfs.FS, dir string, gen uint64) bool {
	d.mu.Lock()
	var want []byte
	wantN := d.persisted()
	if d.copied == copyUnread && wantN > 0 {
		want = appendDictCopy(nil, gen, d.persistedEntries())
	}
	d.mu.Unlock()
	var have []byte
	if want != nil {
		// A copy that cannot be read, for whatever reason, is one to write
		// again: its absence is the usual reason, and a disk that fails
		// the read reports itself through writeCopy's error if it persists.
		have, _ = vfs.ReadFile(fs, filepath.Join(dir, dictCopyName))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if want != nil && d.copied == copyUnread {
		d.copied = copyStale
		if bytes.Equal(have, want) {
			d.copied, d.copiedGen = wantN, gen
		}
	}
	n := d.persisted()
	// A copy written beside an earlier generation is this world's still
	// (sameLineage), but one written now takes the current one.
	return n > 0 && (n != d.copied || d.copiedGen != gen)
}

// persisted counts the entries on disk. d.mu must be held.
func (d *dictionary) persisted() int {
	n := 0
	for _, e := range d.entries {
		if e != nil && e.persisted && !e.lost {
			n++
		}
	}
	return n
}

// writeCopy replaces dictionary.dat with every persisted entry, beside an
// engine at generation gen.
func (d *dictionary) writeCopy(fs vfs.FS, dir string, gen uint64) error {
	d.mu.Lock()
	entries := d.persistedEntries()
	d.mu.Unlock()
	return d.writeCopyOf(fs, dir, gen, entries)
}

// writeCopyOf replaces dictionary.dat with entries, persisted ones, beside
// an engine at generation gen.
func (d *dictionary) writeCopyOf(fs vfs.FS, dir string, gen uint64, entries map[int32][]byte) error {
	if err := vfs.ReplaceFile(fs, dir, dictCopyName, appendDictCopy(nil, gen, entries)); err != nil {
		return fmt.Errorf("write %s: %w", dictCopyName, err)
	}
	d.mu.Lock()
	d.copied, d.copiedGen = len(entries), gen
	d.mu.Unlock()
	return nil
}

// setRegistry resolves every entry against br.
func (d *dictionary) setRegistry(br chunk.BlockRegistry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.br = br
	d.brShared = reflect.TypeOf(br).Comparable()
	d.chunks = map[cube.Range]*chunk.Chunk{}
	d.ridToID = make([]int32, br.BlockCount())
	for i := range d.ridToID {
		d.ridToID[i] = -1
	}
	d.idToRID = make([]uint32, len(d.entries))
	for id, e := range d.entries {
		d.idToRID[id] = noRID
		if e != nil && !e.lost {
			d.resolve(int32(id), e)
		}
	}
}

// resolve maps entry id to the registry; d.mu must be held.
func (d *dictionary) resolve(id int32, e *dictEntry) {
	rid := sharedEntries.resolve(d.br, d.brShared, e)
	d.idToRID[id] = rid
	if rid == noRID {
		return
	}
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
		d.entries = append(d.entries, &dictEntry{Name: name, States: props, Version: chunk.CurrentBlockVersion, key: key})
		d.idToRID = append(d.idToRID, rid)
		d.byKey[key] = id
	}
	d.ridToID[rid] = id
	return id, nil
}

// unpersisted appends to b the dictionary entries among ids that are not
// yet known to be on disk, each once, and returns their ids. ids may name
// an entry many times (each column of a batch, and each sub-chunk of a
// column, that uses it). d.mu must be held.
func (d *dictionary) unpersisted(b *blazedb.Batch, ids []int32) ([]int32, error) {
	var out []int32
	for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		e := d.entries[id]
		if e.persisted {
			continue
		}
		v, err := nbt.MarshalEncoding(e, nbt.LittleEndian)
		if err != nil {
			return nil, fmt.Errorf("encode dictionary entry %d: %w", id, err)
		}
		b.PutNamed(dictPrefix+strconv.FormatUint(uint64(id), 16), v)
		e.raw = v
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

// unknownState is the error for a column using dictionary id, which the
// registry does not resolve. It wraps ErrUnknownState, and names the
// state. An id the dictionary lacks (its entry lost with damaged log
// records that neither recovery nor dictionary.dat could restore) is
// damage too, so that error wraps ErrColumnCorrupt as well: the column is
// still quarantined, since its blocks are intact and the entry may yet be
// restored from a backup. d.mu must be held.
func (d *dictionary) unknownState(id uint64) error {
	if id >= uint64(len(d.entries)) || d.entries[id] == nil {
		return fmt.Errorf("%w: %w: dictionary id %d is missing from the dictionary", ErrUnknownState, ErrColumnCorrupt, id)
	}
	e := d.entries[id]
	if e.lost {
		return fmt.Errorf("%w: %w: block dictionary entry %d was lost to damage (its id is kept: put back a dictionary.dat that holds it, from a backup)", ErrUnknownState, ErrColumnCorrupt, id)
	}
	return fmt.Errorf("%w: %s%v (block version %d)", ErrUnknownState, e.Name, e.States, e.Version)
}
