package blazedb

import (
	"fmt"
	"maps"
	"sort"

	"github.com/blazeworld/blaze/blazedb/internal/morton"
)

// entry locates the live record of a key in chunks.dat.
type entry struct {
	off  int64  // offset of the record (or of the entry inside a batch)
	size uint32 // the record's length in the file
	vsum uint32 // CRC-32C of the raw value, for unchanged-write elision
}

// chunkItem is one chunk key of a dimension, ordered by the Morton code of
// its coordinates. 24 bytes.
type chunkItem struct {
	code uint64
	e    entry
}

// index maps every live key to its entry. Chunk keys are kept per dimension
// ordered by Morton code (dimIndex), so an area is visited in spatial order
// and compaction writes neighbours next to each other; named keys are a map.
// An index is not safe for concurrent use; DB guards it with DB.mu. A clone
// is cheap (see dimIndex) and read-only.
type index struct {
	dims  map[int32]*dimIndex
	named map[string]entry
	count int   // live keys
	live  int64 // bytes of live records, each body's two copies once
	// bodies are the bodies of the log (alias.go) by their first copy's
	// offset, with how many keys point there; nil when there are none.
	bodies map[int64]bodyRef
	// hist is the history (history.go): the DB's index has one; an index
	// built only to compare (Check) has none.
	hist *history
}

func newIndex() *index {
	return &index{dims: map[int32]*dimIndex{}, named: map[string]entry{}}
}

func (ix *index) get(k rkey) (entry, bool) {
	if k.named {
		e, ok := ix.named[k.name]
		return e, ok
	}
	t := ix.dims[k.chunk.Dim]
	if t == nil {
		return entry{}, false
	}
	return t.get(k.chunk.code())
}

// put sets k's entry and returns the previous one.
func (ix *index) put(k rkey, e entry) (entry, bool) {
	var old entry
	var had bool
	if k.named {
		old, had = ix.named[k.name]
		ix.named[k.name] = e
	} else {
		t := ix.dims[k.chunk.Dim]
		if t == nil {
			t = newDimIndex()
			ix.dims[k.chunk.Dim] = t
		}
		old, had = t.put(k.chunk.code(), e)
	}
	if had {
		ix.charge(old, -1)
	} else {
		ix.count++
	}
	ix.charge(e, 1)
	return old, had
}

// del removes k and returns its entry.
func (ix *index) del(k rkey) (entry, bool) {
	var old entry
	var had bool
	if k.named {
		old, had = ix.named[k.name]
		delete(ix.named, k.name)
	} else if t := ix.dims[k.chunk.Dim]; t != nil {
		old, had = t.del(k.chunk.code())
	}
	if had {
		ix.count--
		ix.charge(old, -1)
	}
	return old, had
}

func (ix *index) clone() *index {
	c := &index{dims: make(map[int32]*dimIndex, len(ix.dims)), named: make(map[string]entry, len(ix.named)), count: ix.count, live: ix.live}
	for d, t := range ix.dims {
		c.dims[d] = t.clone()
	}
	for n, e := range ix.named {
		c.named[n] = e
	}
	if ix.bodies != nil {
		c.bodies = maps.Clone(ix.bodies)
	}
	if ix.hist != nil {
		c.hist = ix.hist.clone()
	}
	return c
}

// sortedDims returns the dimensions in ascending order.
func (ix *index) sortedDims() []int32 {
	ds := make([]int32, 0, len(ix.dims))
	for d := range ix.dims {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds
}

// each calls fn for every key in order: dimensions ascending, chunks by
// Morton code, then named keys sorted. It stops when fn returns false.
func (ix *index) each(fn func(k rkey, e entry) bool) {
	for _, d := range ix.sortedDims() {
		stop := false
		ix.dims[d].ascend(0, ^uint64(0), func(code uint64, e entry) bool {
			x, z := morton.Decode(code)
			if !fn(rkey{chunk: Key{Dim: d, X: x, Z: z}}, e) {
				stop = true
			}
			return !stop
		})
		if stop {
			return
		}
	}
	names := make([]string, 0, len(ix.named))
	for n := range ix.named {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !fn(rkey{named: true, name: n}, ix.named[n]) {
			return
		}
	}
}

// area appends the keys inside a, in Morton order.
func (ix *index) area(dst []Key, a Area) []Key {
	t := ix.dims[a.Dim]
	if t == nil || a.MinX > a.MaxX || a.MinZ > a.MaxZ {
		return dst
	}
	lo, hi := morton.Encode(a.MinX, a.MinZ), morton.Encode(a.MaxX, a.MaxZ)
	t.ascend(lo, hi, func(code uint64, _ entry) bool {
		if x, z := morton.Decode(code); a.contains(x, z) {
			dst = append(dst, Key{Dim: a.Dim, X: x, Z: z})
		}
		return true
	})
	return dst
}

// settle merges every dimension's overrides, leaving exactly sized arrays;
// done after bulk loads and rebuilds.
func (ix *index) settle() {
	for _, t := range ix.dims {
		t.merge()
	}
}

// diff reports whether two indexes hold the same keys and entries, and
// describes the first difference.
func (ix *index) diff(o *index) string {
	if ix.count != o.count || ix.live != o.live {
		return fmt.Sprintf("%d keys of %d live bytes against %d keys of %d live bytes", ix.count, ix.live, o.count, o.live)
	}
	if len(ix.bodies) != len(o.bodies) {
		return fmt.Sprintf("%d bodies against %d", len(ix.bodies), len(o.bodies))
	}
	for f, b := range ix.bodies {
		if ob, ok := o.bodies[f]; !ok || ob != b {
			return fmt.Sprintf("body at %d: %+v against %+v (present %v)", f, b, ob, ok)
		}
	}
	var msg string
	ix.each(func(k rkey, e entry) bool {
		if oe, ok := o.get(k); !ok || oe != e {
			msg = fmt.Sprintf("key %v: %+v against %+v (present %v)", k, e, oe, ok)
			return false
		}
		return true
	})
	return msg
}
