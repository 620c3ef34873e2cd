package blazedb

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/blazeworld/blaze/blazedb/internal/morton"
)

// Identical values stored once (issue 41). A flat arena or a void map is
// hundreds of columns holding the same bytes; compaction writes each value
// that two or more live chunk keys hold once, as a body, and the keys that
// hold it as an alias list, in the file it writes:
//
//	header | time marks | history records | first copies of the bodies |
//	live records | second copies of the bodies | alias lists | ...
//
// A body is written twice, apart, because it is the one record whose loss
// would cost more than itself: a read, a compaction or a Repair that finds
// one copy damaged reads the other (logFile.alt). Both copies and the list
// are in the file compaction syncs whole before it becomes chunks.dat, so
// no crash leaves a list without its bodies. Between compactions keys are
// written as ever: a put supersedes the alias of its key, and the body
// stays for the keys still naming it.
//
// The index points an aliased key at its body's first copy, as it points
// a key at its own record; reads check the body's checksums as a put's.
// How many keys hold a body is never stored: the index counts them
// (index.bodies) as it is loaded or rebuilt, so no crash leaves a count
// wrong. A body no key names is garbage for the next compaction; a version
// the history keeps that names a body is copied as a put of its key.
// Only live chunk values are aliased: named values, history records and
// overlays' and segments' databases (each its own DB, so its own bodies)
// are stored as before.
//
// An alias list is a record of kind 7 (record.go), without a key, whose
// sequence number is the largest of the keys it names and whose value is,
// before its codec (zstd when that makes it smaller):
//
//	+--------------------+---------------------------------------------+
//	| field              | encoding                                    |
//	+--------------------+---------------------------------------------+
//	| bodies b           | uvarint                                     |
//	| b bodies           | distance from the list's offset back to the |
//	|                    |   first copy, uvarint; back to the second   |
//	|                    |   copy, uvarint (less than the first's);    |
//	|                    |   the copies' record size, uvarint; the     |
//	|                    |   value's checksum (CRC-32C), uint32 LE     |
//	| dimensions d       | uvarint                                     |
//	| d dimensions,      | dimension int32 LE; keys n uvarint (n >= 1);|
//	|   ascending        |   n keys in Morton order                    |
//	| key                | Morton code minus the previous key's of the |
//	|                    |   dimension (the first: the code; then at   |
//	|                    |   least 1), uvarint; body number (< b),     |
//	|                    |   uvarint; sequence number minus the        |
//	|                    |   previous key's (the first: minus 0),      |
//	|                    |   zigzag varint                             |
//	+--------------------+---------------------------------------------+
//
// Part of the on-disk format (log version 4).

// aliasBody is one body of an alias list, located in the log.
type aliasBody struct {
	first, second int64 // offsets of the two copies
	size          uint32
	vsum          uint32
}

// aliasKey is one key of an alias list.
type aliasKey struct {
	k    Key
	body int
	seq  uint64
}

// aliasList is a decoded alias list; keys are in index order.
type aliasList struct {
	bodies []aliasBody
	keys   []aliasKey
}

// maxSeq is the largest sequence number of the list's keys.
func (a *aliasList) maxSeq() uint64 {
	var m uint64
	for _, k := range a.keys {
		m = max(m, k.seq)
	}
	return m
}

// appendAliasList appends the raw value of a, the list to be written at
// offset at.
func appendAliasList(b []byte, a *aliasList, at int64) []byte {
	b = binary.AppendUvarint(b, uint64(len(a.bodies)))
	for _, bd := range a.bodies {
		b = binary.AppendUvarint(b, uint64(at-bd.first))
		b = binary.AppendUvarint(b, uint64(at-bd.second))
		b = binary.AppendUvarint(b, uint64(bd.size))
		b = binary.LittleEndian.AppendUint32(b, bd.vsum)
	}
	var dims []int32
	for i, k := range a.keys {
		if i == 0 || k.k.Dim != a.keys[i-1].k.Dim {
			dims = append(dims, k.k.Dim)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(dims)))
	var seq uint64
	for i := 0; i < len(a.keys); {
		d := a.keys[i].k.Dim
		j := i
		for j < len(a.keys) && a.keys[j].k.Dim == d {
			j++
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(d))
		b = binary.AppendUvarint(b, uint64(j-i))
		var prev uint64
		for _, k := range a.keys[i:j] {
			c := k.k.code()
			b = binary.AppendUvarint(b, c-prev)
			prev = c
			b = binary.AppendUvarint(b, uint64(k.body))
			b = binary.AppendVarint(b, int64(k.seq-seq))
			seq = k.seq
		}
		i = j
	}
	return b
}

// decodeAliasList decodes the raw value v of the alias list at offset at.
// Every body must lie before the list, after the log's header copy; keys
// ascend and name a body of the list. Anything else is ErrCorrupt.
func decodeAliasList(v []byte, at int64) (*aliasList, error) {
	p := 0
	bad := func(format string, args ...any) (*aliasList, error) {
		return nil, corruptf(logName, at, "alias list, byte %d of its value: %s", p, fmt.Sprintf(format, args...))
	}
	uv := func() (uint64, bool) {
		x, n := binary.Uvarint(v[p:])
		if n <= 0 {
			return 0, false
		}
		p += n
		return x, true
	}
	nb, ok := uv()
	if !ok || nb == 0 || nb > uint64(len(v))/7 {
		return bad("body count")
	}
	a := &aliasList{bodies: make([]aliasBody, 0, nb)}
	for i := uint64(0); i < nb; i++ {
		d1, ok1 := uv()
		d2, ok2 := uv()
		size, ok3 := uv()
		if !ok1 || !ok2 || !ok3 || len(v)-p < 4 {
			return bad("body %d is truncated", i)
		}
		bd := aliasBody{first: at - int64(d1), second: at - int64(d2), size: uint32(size), vsum: binary.LittleEndian.Uint32(v[p:])}
		p += 4
		if d1 > uint64(at) || d2 >= d1 || size < recHeaderSize || size > recHeaderSize+maxBodyLen ||
			bd.first < fileHeaderSize+headerCopySize || bd.first+int64(size) > bd.second || bd.second+int64(size) > at {
			return bad("body %d at %d and %d of %d bytes", i, bd.first, bd.second, size)
		}
		a.bodies = append(a.bodies, bd)
	}
	nd, ok := uv()
	if !ok || nd == 0 || nd > uint64(len(v)-p) {
		return bad("dimension count")
	}
	var seq uint64
	for i := uint64(0); i < nd; i++ {
		if len(v)-p < 4 {
			return bad("dimension %d is truncated", i)
		}
		dim := int32(binary.LittleEndian.Uint32(v[p:]))
		p += 4
		if len(a.keys) > 0 && dim <= a.keys[len(a.keys)-1].k.Dim {
			return bad("dimension %d out of order", dim)
		}
		n, ok := uv()
		if !ok || n == 0 || n > uint64(len(v)-p)/3 {
			return bad("dimension %d: key count", dim)
		}
		var code uint64
		for j := uint64(0); j < n; j++ {
			delta, ok1 := uv()
			body, ok2 := uv()
			ds, n2 := binary.Varint(v[p:])
			if !ok1 || !ok2 || n2 <= 0 {
				return bad("dimension %d: key %d is truncated", dim, j)
			}
			p += n2
			if (j > 0 && delta == 0) || delta > math.MaxUint64-code || body >= nb {
				return bad("dimension %d: key %d: code delta %d, body %d", dim, j, delta, body)
			}
			code += delta
			seq += uint64(ds)
			x, z := morton.Decode(code)
			a.keys = append(a.keys, aliasKey{k: Key{Dim: dim, X: x, Z: z}, body: int(body), seq: seq})
		}
	}
	if p != len(v) {
		return bad("%d trailing bytes", len(v)-p)
	}
	return a, nil
}

// readAliasList decompresses, verifies and decodes r, the alias list at
// off.
func readAliasList(off int64, r *record) (*aliasList, error) {
	v, err := r.rawValue()
	if err != nil {
		return nil, corruptf(logName, off, "alias list: %v", err)
	}
	return decodeAliasList(v, off)
}

// applyAliases applies the alias list a to ix: its bodies and each key's
// entry, with, when hist, the key's sequence number for the history (a
// scan's; compaction builds the history it writes itself).
func applyAliases(ix *index, a *aliasList, hist bool) {
	for _, bd := range a.bodies {
		ix.addBody(bd.first, bd.second)
	}
	for _, k := range a.keys {
		bd := a.bodies[k.body]
		e := entry{off: bd.first, size: bd.size, vsum: bd.vsum}
		if hist {
			ix.putAt(rkey{chunk: k.k}, e, k.seq)
		} else {
			ix.put(rkey{chunk: k.k}, e)
		}
	}
}

// bodyRef is what the index knows of a body: where its second copy is,
// and how many keys of the index point at its first copy.
type bodyRef struct {
	second int64
	refs   int32
}

// addBody registers the body whose copies are at first and second.
func (ix *index) addBody(first, second int64) {
	if ix.bodies == nil {
		ix.bodies = map[int64]bodyRef{}
	}
	if _, ok := ix.bodies[first]; !ok {
		ix.bodies[first] = bodyRef{second: second}
	}
}

// charge counts e in or out (by = 1 or -1) of the live bytes: a body's
// two copies count once, while a key points at it.
func (ix *index) charge(e entry, by int32) {
	b, ok := ix.bodies[e.off]
	if !ok {
		ix.live += int64(by) * int64(e.size)
		return
	}
	b.refs += by
	ix.bodies[e.off] = b
	if (by > 0 && b.refs == 1) || (by < 0 && b.refs == 0) {
		ix.live += int64(by) * 2 * int64(e.size)
	}
}

// alternates returns the offsets of the bodies' second copies by their
// first's, for the log the index describes (logFile.alt).
func (ix *index) alternates() map[int64]int64 {
	if len(ix.bodies) == 0 {
		return nil
	}
	m := make(map[int64]int64, len(ix.bodies))
	for f, b := range ix.bodies {
		m[f] = b.second
	}
	return m
}

// planned is one body compaction writes: the body record, the keys that
// hold it in index order, and where its copies went.
type planned struct {
	rec           []byte
	vsum          uint32
	keys          []aliasKey
	first, second int64
	recoded       bool // Recode changed the value
}

// aliasPlan is what one compaction stores once.
type aliasPlan struct {
	bodies    []*planned
	of        map[rkey]bool // the keys aliased
	listBytes int64         // the alias list's record, once written
}

// planAliases finds the live chunk values of snap that two or more keys
// hold, with the same stored bytes: those with the same checksum and
// stored length are read (a body's other copy when one is damaged) and
// compared. Keys carry names, and records that do not verify, are left
// to the copy. rc rewrites each body once, as it would each key's record.
func (db *DB) planAliases(old *logFile, snap *index, carry map[rkey]carried, rc *recompressor) (*aliasPlan, error) {
	// A key's class is its value's checksum and stored length. Classes
	// are found twice over with a sorted list, 8 bytes a key, rather than
	// a map of every key: on a real world nearly every class is one key.
	class := func(e entry) uint64 {
		stored := e.size - recHeaderSize
		if _, body := snap.bodies[e.off]; !body {
			stored -= chunkKeyLen
		}
		return uint64(e.vsum)<<32 | uint64(stored)
	}
	chunkKeys := func(fn func(k rkey, e entry)) {
		snap.each(func(k rkey, e entry) bool {
			if k.named {
				return false // chunk keys come first; nothing named is aliased
			}
			if _, ok := carry[k]; !ok {
				fn(k, e)
			}
			return true
		})
	}
	var all []uint64
	chunkKeys(func(_ rkey, e entry) { all = append(all, class(e)) })
	slices.Sort(all)
	twice := map[uint64]bool{}
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			twice[all[i]] = true
		}
	}
	all = nil
	classes := map[uint64][]rkey{}
	chunkKeys(func(k rkey, e entry) {
		if c := class(e); twice[c] {
			classes[c] = append(classes[c], k)
		}
	})
	plan := &aliasPlan{of: map[rkey]bool{}}
	var buf []byte
	type same struct {
		codec  codec
		rawLen uint32
		value  string
	}
	for _, ks := range classes {
		if len(ks) < 2 {
			continue
		}
		groups := map[same]*planned{}
		var order []*planned
		for _, k := range ks {
			e, _ := snap.get(k)
			var r record
			var bad, err error
			r, buf, bad, err = readLiveAlt(old, e, buf)
			if err != nil {
				return nil, err
			}
			if bad != nil {
				continue // the copy meets it, and carries it
			}
			seq := r.seq
			if r.kind == kindBody {
				seq = 0 // not in the record: the history's, if it keeps one
			}
			seq = liveSeq(snap, k, seq)
			s := same{r.codec, r.rawLen, string(r.value)}
			g := groups[s]
			if g == nil {
				r.kind, r.key = kindPut, k.appendTo(nil)
				vsum := r.vsum
				if nr, ok := rc.rewrite(k, &r); ok {
					r = nr
				}
				r.kind, r.key, r.seq = kindBody, nil, 0
				g = &planned{rec: appendRecord(nil, &r), vsum: r.vsum, recoded: r.vsum != vsum}
				groups[s] = g
				order = append(order, g)
			}
			g.keys = append(g.keys, aliasKey{k: k.chunk, seq: seq})
		}
		for _, g := range order {
			if len(g.keys) < 2 {
				continue
			}
			plan.bodies = append(plan.bodies, g)
			for _, ak := range g.keys {
				plan.of[rkey{chunk: ak.k}] = true
			}
		}
	}
	for _, g := range plan.bodies {
		if g.recoded { // the value of every key naming it changed
			for _, ak := range g.keys {
				rc.recoded = append(rc.recoded, appendChunkKey(nil, ak.k))
			}
		}
	}
	// Bodies in the order of their first key, so that the same index
	// always compacts to the same bytes.
	slices.SortFunc(plan.bodies, func(a, b *planned) int {
		return compareRkey(rkey{chunk: a.keys[0].k}, rkey{chunk: b.keys[0].k})
	})
	return plan, nil
}

// writeFirst writes the first copy of every body.
func (p *aliasPlan) writeFirst(w *appender) error {
	for _, g := range p.bodies {
		g.first = w.pos()
		if err := w.write(g.rec); err != nil {
			return fmt.Errorf("write %s: %w", compactName, err)
		}
	}
	return nil
}

// maxAliasListKeys is the most keys one alias list names, so that a
// list's value stays below maxValueLen however many columns a world
// aliases (a key takes at most 30 bytes, a body 39, and a list holds only
// the bodies its keys name, at most one for two keys); more keys take more
// lists.
const maxAliasListKeys = 1 << 20

// writeRest writes the second copy of every body and the alias lists, and
// points the aliased keys of nix at the bodies. It notes the lists' size
// (p.listBytes): not garbage, as the bodies are not.
func (p *aliasPlan) writeRest(w *appender, nix *index, most int) error {
	if len(p.bodies) == 0 {
		return nil
	}
	a := &aliasList{}
	for i, g := range p.bodies {
		g.second = w.pos()
		if err := w.write(g.rec); err != nil {
			return fmt.Errorf("write %s: %w", compactName, err)
		}
		a.bodies = append(a.bodies, aliasBody{first: g.first, second: g.second, size: uint32(len(g.rec)), vsum: g.vsum})
		for _, k := range g.keys {
			k.body = i
			a.keys = append(a.keys, k)
		}
	}
	slices.SortFunc(a.keys, func(x, y aliasKey) int { return compareRkey(rkey{chunk: x.k}, rkey{chunk: y.k}) })
	if most <= 0 {
		most = maxAliasListKeys
	}
	for keys := a.keys; len(keys) > 0; {
		part := &aliasList{}
		local := map[int]int{}
		for _, k := range keys[:min(most, len(keys))] {
			n, ok := local[k.body]
			if !ok {
				n = len(part.bodies)
				local[k.body] = n
				part.bodies = append(part.bodies, a.bodies[k.body])
			}
			k.body = n
			part.keys = append(part.keys, k)
		}
		keys = keys[len(part.keys):]
		at := w.pos()
		raw := appendAliasList(nil, part, at)
		stored, c, err := compress(nil, codecZstd, raw)
		if err != nil {
			return err
		}
		rec := appendRecord(nil, &record{seq: part.maxSeq(), kind: kindAliases, codec: c, value: stored, rawLen: uint32(len(raw)), vsum: crc(raw)})
		p.listBytes += int64(len(rec))
		if err := w.write(rec); err != nil {
			return fmt.Errorf("write %s: %w", compactName, err)
		}
	}
	applyAliases(nix, a, false)
	return nil
}

// readLiveAlt is readLive, reading a body's second copy when the first
// does not verify.
func readLiveAlt(old *logFile, e entry, buf []byte) (r record, b []byte, bad, err error) {
	r, buf, bad, err = readLive(old, e, buf)
	if bad == nil || err != nil {
		return r, buf, bad, err
	}
	second, ok := old.alt[e.off]
	if !ok {
		return r, buf, bad, nil
	}
	r2, buf2, bad2, err := readLive(old, entry{off: second, size: e.size, vsum: e.vsum}, nil)
	if err != nil || bad2 != nil {
		return r, buf, bad, err
	}
	return r2, buf2, nil, nil
}

// liveSeq is the sequence number of k's live value in snap: its history
// chain's last, or else seq, the record's (0 for a body, which holds none:
// a key without a chain has held its value since before the history's
// floor, where any point reads the same).
func liveSeq(snap *index, k rkey, seq uint64) uint64 {
	if snap.hist != nil {
		if c, ok := snap.hist.chains.get(k); ok && len(c) > 0 {
			return c[len(c)-1].seq
		}
	}
	return seq
}

// bodySeen is a body a scan met.
type bodySeen struct{ size, vsum uint32 }

// checkAliasList verifies, for a scan from the offset from, that r, the
// alias list at off, decodes, that its sequence number is its keys'
// largest, and that each of its bodies is a body the scan met at one of
// its copies, the other being one too or in a damaged stretch it passed
// over (corrupt). A copy before from is index.dat's to vouch for. What
// does not verify is a decode error: the scan takes the list for damage.
func checkAliasList(off int64, r *record, from int64, bodies map[int64]bodySeen, corrupt []CorruptRegion) error {
	a, err := readAliasList(off, r)
	if err != nil {
		return fmt.Errorf("%w: %v", errBadRecord, err)
	}
	if m := a.maxSeq(); m != r.seq {
		return fmt.Errorf("%w: alias list of sequence %d names keys up to %d", errBadRecord, r.seq, m)
	}
	for i, bd := range a.bodies {
		found := false
		for _, at := range []int64{bd.first, bd.second} {
			if at < from {
				found = true
				continue
			}
			if s, ok := bodies[at]; ok && s == (bodySeen{bd.size, bd.vsum}) {
				found = true
			} else if !inRegion(corrupt, at) {
				return fmt.Errorf("%w: alias list names body %d at %d, where there is none", errBadRecord, i, at)
			}
		}
		if !found {
			return fmt.Errorf("%w: alias list names body %d, whose copies are both damaged", errBadRecord, i)
		}
	}
	return nil
}
