package blazedb

import (
	"encoding/binary"
	"maps"
	"math"
	"slices"
)

// The history section of index.dat (format versions 2 and 3), after the named
// entries: the history as it was when index.dat was written (history.go).
//
//	+--------+------+-------------------------------------------------+
//	| offset | size | field                                           |
//	+--------+------+-------------------------------------------------+
//	|      0 |    8 | history floor, uint64 LE                        |
//	|      8 |    8 | present point (next sequence number), uint64 LE |
//	|     16 |    8 | number of time points t                         |
//	|     24 | 16*t | time points: point uint64, Unix nanoseconds     |
//	|        |      |   int64, both ascending                         |
//	|      … |    8 | number of snapshot pins n                       |
//	|      … |    … | n pins: name length uint16, name, point uint64  |
//	|      … |    8 | number of chains c                              |
//	|      … |    … | c chains: key length uint16, record key         |
//	|        |      |   (key.go), versions v uint32, then v versions  |
//	|        |      |   of 24 bytes, oldest first: seq uint64, offset |
//	|        |      |   uint64 (all ones: a deletion), size uint32,   |
//	|        |      |   vsum uint32                                   |
//	+--------+------+-------------------------------------------------+
//
// Every version lies inside the covered log, sequence numbers ascend
// within a chain, a chain's last version is its key's entry in the index
// (or, for a deletion, the key is absent), and every pin has its snapshot's
// record in the index: anything else is
// ErrCorrupt, and Open rebuilds by scanning. Part of the on-disk format.
const (
	histVersionSize = 24
	histDeleted     = math.MaxUint64
)

func appendHistorySection(b []byte, h *history) []byte {
	if h == nil {
		h = newHistory()
	}
	le := binary.LittleEndian
	b = le.AppendUint64(b, h.floor)
	b = le.AppendUint64(b, h.next)
	b = le.AppendUint64(b, uint64(len(h.points)))
	for _, p := range h.points {
		b = le.AppendUint64(b, p.seq)
		b = le.AppendUint64(b, uint64(p.at))
	}
	// Pins and chains in order, so that the same history always encodes
	// to the same bytes.
	b = le.AppendUint64(b, uint64(len(h.pins)))
	for _, n := range slices.Sorted(maps.Keys(h.pins)) {
		b = le.AppendUint16(b, uint16(len(n)))
		b = append(b, n...)
		b = le.AppendUint64(b, h.pins[n])
	}
	b = le.AppendUint64(b, uint64(h.chains.len()))
	var key []byte
	for _, k := range slices.SortedFunc(h.chains.keys(), compareRkey) {
		c, _ := h.chains.get(k)
		key = k.appendTo(key[:0])
		b = le.AppendUint16(b, uint16(len(key)))
		b = append(b, key...)
		b = le.AppendUint32(b, uint32(len(c)))
		for _, v := range c {
			b = le.AppendUint64(b, v.seq)
			b = le.AppendUint64(b, uint64(v.off))
			b = le.AppendUint32(b, v.size)
			b = le.AppendUint32(b, v.vsum)
		}
	}
	return b
}

// decodeHistorySection decodes the history section at body[p:] into
// ix.hist, checking it against ix and the covered log, and returns the
// offset after it.
func decodeHistorySection(body []byte, p int, ix *index, covered int64) (int, error) {
	le := binary.LittleEndian
	bad := func(at int, format string, args ...any) (int, error) {
		return 0, corruptf(indexName, int64(at), "history: "+format, args...)
	}
	rest := func() uint64 { return uint64(len(body) - p) }
	if rest() < 24 {
		return bad(p, "section is truncated")
	}
	h := newHistory()
	h.floor, h.next = le.Uint64(body[p:]), le.Uint64(body[p+8:])
	n := le.Uint64(body[p+16:])
	p += 24
	if n > rest()/16 {
		return bad(p, "%d time points cannot fit", n)
	}
	for i := uint64(0); i < n; i++ {
		tp := timePoint{seq: le.Uint64(body[p:]), at: int64(le.Uint64(body[p+8:]))}
		if k := len(h.points); k > 0 && (tp.seq < h.points[k-1].seq || tp.at < h.points[k-1].at) {
			return bad(p, "time points out of order")
		}
		h.points = append(h.points, tp)
		p += 16
	}
	if rest() < 8 {
		return bad(p, "section is truncated")
	}
	n = le.Uint64(body[p:])
	p += 8
	if n > rest()/10 {
		return bad(p, "%d pins cannot fit", n)
	}
	for i := uint64(0); i < n; i++ {
		if rest() < 2 {
			return bad(p, "pin %d is truncated", i)
		}
		l := int(le.Uint16(body[p:]))
		if l == 0 || l > MaxSnapshotNameLen || rest() < uint64(2+l+8) {
			return bad(p, "pin %d of %d bytes is malformed", i, l)
		}
		name := string(body[p+2 : p+2+l])
		if _, dup := h.pins[name]; dup {
			return bad(p, "pin %q twice", name)
		}
		if _, ok := ix.named[snapshotPrefix+name]; !ok {
			return bad(p, "pin %q of no snapshot", name)
		}
		h.pins[name] = le.Uint64(body[p+2+l:])
		p += 2 + l + 8
	}
	if rest() < 8 {
		return bad(p, "section is truncated")
	}
	n = le.Uint64(body[p:])
	p += 8
	if n > rest()/(2+2+4+histVersionSize) {
		return bad(p, "%d chains cannot fit", n)
	}
	// One array holds every chain (each capped, so an append copies).
	h.chains = newChainMap(int(n))
	slab := make([]version, 0, rest()/histVersionSize)
	for i := uint64(0); i < n; i++ {
		if rest() < 2 {
			return bad(p, "chain %d is truncated", i)
		}
		l := int(le.Uint16(body[p:]))
		if rest() < uint64(2+l+4) {
			return bad(p, "chain %d is truncated", i)
		}
		k, err := parseKey(body[p+2 : p+2+l])
		if err != nil {
			return bad(p, "chain %d: %v", i, err)
		}
		if _, dup := h.chains.get(k); dup {
			return bad(p, "chain of %v twice", k)
		}
		cnt := uint64(le.Uint32(body[p+2+l:]))
		p += 2 + l + 4
		if cnt == 0 || cnt > rest()/histVersionSize {
			return bad(p, "chain of %v with %d versions", k, cnt)
		}
		c := slab[len(slab) : len(slab)+int(cnt) : len(slab)+int(cnt)]
		slab = slab[:len(slab)+int(cnt)]
		for j := range c {
			v := version{seq: le.Uint64(body[p:]), off: int64(le.Uint64(body[p+8:])), size: le.Uint32(body[p+16:]), vsum: le.Uint32(body[p+20:])}
			if uint64(v.off) == histDeleted {
				v.off = -1
				v.vsum = 0
			}
			switch {
			case j > 0 && v.seq <= c[j-1].seq:
				return bad(p, "versions of %v out of order", k)
			case v.size < recHeaderSize || v.size > maxBodyLen+recHeaderSize:
				return bad(p, "version of %v of %d bytes", k, v.size)
			case !v.deleted() && (v.off < fileHeaderSize || v.off+int64(v.size) > covered):
				return bad(p, "version of %v at %d+%d outside the covered log of %d bytes", k, v.off, v.size, covered)
			}
			c[j] = v
			p += histVersionSize
		}
		e, live := ix.get(k)
		if last := c[len(c)-1]; last.deleted() == live || (live && last.entry() != e) {
			return bad(p, "the newest version of %v is not its entry", k)
		}
		h.chains.set(k, c)
		h.count += len(c)
		for j, v := range c {
			if j < len(c)-1 || v.deleted() {
				h.bytes += int64(v.size)
			}
		}
	}
	ix.hist = h
	return p, nil
}
