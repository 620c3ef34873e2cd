package blazedb

import (
	"slices"
	"sort"
)

// dimIndex holds the chunk keys of one dimension, ordered by Morton code.
//
// It is a sorted array (base) plus a small map of overrides (delta): puts
// and deletes since the last merge, a delete being an entry of size 0.
// When delta outgrows its bound it is merged into a new, exactly sized base.
// This keeps the index near 24 bytes per key, where a B-tree, its nodes a
// half to two thirds full, holds nearly twice that (docs/BENCHMARKS.md,
// "The engine"), makes a clone cost one copy of delta, and still gives
// ordered iteration for areas and compaction.
//
// base is never modified in place once a clone may share it: updates go
// to delta and merges build a new array; only appends past the end (which
// no clone can see) reuse it. Clones are read-only.
type dimIndex struct {
	base  []chunkItem
	delta map[uint64]entry
}

// deltaMin and deltaShare bound the overrides: a merge happens when delta
// holds max(deltaMin, len(base)/deltaShare) keys. A merge costs
// O(len(base)), so each write pays at most about deltaShare element copies
// (and a rebuild of a million keys in random order is not quadratic), while
// delta stays a small fraction of the index.
const (
	deltaMin   = 4096
	deltaShare = 16
)

func newDimIndex() *dimIndex { return &dimIndex{delta: map[uint64]entry{}} }

func (d *dimIndex) search(code uint64) (int, bool) {
	i := sort.Search(len(d.base), func(i int) bool { return d.base[i].code >= code })
	return i, i < len(d.base) && d.base[i].code == code
}

func (d *dimIndex) get(code uint64) (entry, bool) {
	if e, ok := d.delta[code]; ok {
		return e, e.size != 0
	}
	if i, ok := d.search(code); ok {
		return d.base[i].e, true
	}
	return entry{}, false
}

// put sets code's entry and returns the previous one.
func (d *dimIndex) put(code uint64, e entry) (entry, bool) {
	old, had := d.get(code)
	if _, inDelta := d.delta[code]; !inDelta && (len(d.base) == 0 || code > d.base[len(d.base)-1].code) {
		d.base = append(d.base, chunkItem{code: code, e: e}) // sorted loads take this path
		return old, had
	}
	d.delta[code] = e
	d.maybeMerge()
	return old, had
}

func (d *dimIndex) del(code uint64) (entry, bool) {
	old, had := d.get(code)
	if !had {
		return old, false
	}
	if _, inBase := d.search(code); inBase {
		d.delta[code] = entry{} // tombstone over base
	} else {
		delete(d.delta, code)
	}
	d.maybeMerge()
	return old, true
}

func (d *dimIndex) maybeMerge() {
	if len(d.delta) >= max(deltaMin, len(d.base)/deltaShare) {
		d.merge()
	}
}

// merge folds delta into a new, exactly sized base.
func (d *dimIndex) merge() {
	if len(d.delta) == 0 {
		if cap(d.base) > len(d.base) {
			d.base = append([]chunkItem(nil), d.base...)
		}
		return
	}
	codes := d.sortedDelta(0, ^uint64(0))
	out := make([]chunkItem, 0, len(d.base)+len(codes))
	i := 0
	for _, c := range codes {
		for i < len(d.base) && d.base[i].code < c {
			out = append(out, d.base[i])
			i++
		}
		if i < len(d.base) && d.base[i].code == c {
			i++
		}
		if e := d.delta[c]; e.size != 0 {
			out = append(out, chunkItem{code: c, e: e})
		}
	}
	out = append(out, d.base[i:]...)
	if cap(out) > len(out) { // deletes shrank it
		out = append(make([]chunkItem, 0, len(out)), out...)
	}
	d.base = out
	d.delta = map[uint64]entry{}
}

func (d *dimIndex) sortedDelta(lo, hi uint64) []uint64 {
	codes := make([]uint64, 0, len(d.delta))
	for c := range d.delta {
		if c >= lo && c <= hi {
			codes = append(codes, c)
		}
	}
	slices.Sort(codes)
	return codes
}

// ascend calls fn for every live key with lo <= code <= hi in order,
// until fn returns false.
func (d *dimIndex) ascend(lo, hi uint64, fn func(code uint64, e entry) bool) {
	codes := d.sortedDelta(lo, hi)
	i, _ := d.search(lo)
	j := 0
	for {
		var c uint64
		var e entry
		switch {
		case i < len(d.base) && d.base[i].code <= hi && (j == len(codes) || d.base[i].code < codes[j]):
			c, e = d.base[i].code, d.base[i].e
			i++
		case j < len(codes):
			c, e = codes[j], d.delta[codes[j]]
			if i < len(d.base) && d.base[i].code == c {
				i++ // overridden
			}
			j++
			if e.size == 0 {
				continue
			}
		default:
			return
		}
		if !fn(c, e) {
			return
		}
	}
}

func (d *dimIndex) clone() *dimIndex {
	c := &dimIndex{base: d.base[:len(d.base):len(d.base)], delta: make(map[uint64]entry, len(d.delta))}
	for k, v := range d.delta {
		c.delta[k] = v
	}
	return c
}
