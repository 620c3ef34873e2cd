package blazedb

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/blazeworld/blaze/blazedb/internal/morton"
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
	b = appendHistoryHead(b, h)
	le := binary.LittleEndian
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

// appendHistoryHead appends the history section up to its chains.
func appendHistoryHead(b []byte, h *history) []byte {
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
	return b
}

// decodeHistorySection decodes the history section at body[p:] into
// ix.hist, checking it against ix and the covered log, and returns the
// offset after it.
func decodeHistorySection(body []byte, p int, ix *index, covered int64) (int, error) {
	h, p, err := decodeHistoryHead(body, p, ix)
	if err != nil {
		return 0, err
	}
	le := binary.LittleEndian
	bad := func(at int, format string, args ...any) (int, error) {
		return 0, corruptf(indexName, int64(at), "history: "+format, args...)
	}
	rest := func() uint64 { return uint64(len(body) - p) }
	if rest() < 8 {
		return bad(p, "section is truncated")
	}
	n := le.Uint64(body[p:])
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
			c[j] = v
			p += histVersionSize
		}
		if err := addChain(h, ix, k, c, covered); err != nil {
			return bad(p, "%v", err)
		}
	}
	ix.hist = h
	return p, nil
}

// addChain checks c, the chain of k decoded from index.dat, against ix
// and the covered log, and adds it to h.
func addChain(h *history, ix *index, k rkey, c []version, covered int64) error {
	for j, v := range c {
		switch {
		case j > 0 && v.seq <= c[j-1].seq:
			return fmt.Errorf("versions of %v out of order", k)
		case v.size < recHeaderSize || v.size > maxBodyLen+recHeaderSize:
			return fmt.Errorf("version of %v of %d bytes", k, v.size)
		case !v.deleted() && (v.off < fileHeaderSize || v.off+int64(v.size) > covered):
			return fmt.Errorf("version of %v at %d+%d outside the covered log of %d bytes", k, v.off, v.size, covered)
		}
	}
	e, live := ix.get(k)
	if last := c[len(c)-1]; last.deleted() == live || (live && last.entry() != e) {
		return fmt.Errorf("the newest version of %v is not its entry", k)
	}
	h.chains.set(k, c)
	h.count += len(c)
	for j, v := range c {
		if j < len(c)-1 || v.deleted() {
			h.bytes += int64(v.size)
		}
	}
	return nil
}

// decodeHistoryHead decodes the history section at body[p:] up to its
// chains (the same in versions 2 and 3): the floor, the present, the
// time points and the pins.
func decodeHistoryHead(body []byte, p int, ix *index) (*history, int, error) {
	le := binary.LittleEndian
	bad := func(at int, format string, args ...any) (*history, int, error) {
		return nil, 0, corruptf(indexName, int64(at), "history: "+format, args...)
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
	return h, p, nil
}

// The history section of index.dat version 3: the same as version 2's up
// to the chains (floor, present, time points, pins), then:
//
//	+--------------------+--------------------------------------------+
//	| field              | encoding                                   |
//	+--------------------+--------------------------------------------+
//	| chains c           | uvarint                                    |
//	| c chains, in key   | the key, then versions n uvarint (n >= 1), |
//	|   order            |   then n versions, oldest first            |
//	| key                | uvarint 0: a chunk key of the dimension of |
//	|                    |   the chunk key before it, then its Morton |
//	|                    |   code minus that key's, uvarint; 1: a     |
//	|                    |   chunk key of another dimension, then the |
//	|                    |   dimension int32 LE and the Morton code   |
//	|                    |   uvarint; 2: a named key, then the name's |
//	|                    |   length uvarint and the name              |
//	| version            | sequence number minus the version's before |
//	|                    |   it (the chain's first: minus the first   |
//	|                    |   of the chain before), zigzag varint; then|
//	|                    |   the location, except for the newest      |
//	|                    |   version of a live key, whose location is |
//	|                    |   the key's entry                          |
//	| location           | uvarint 0: a deletion, then its record's   |
//	|                    |   size uvarint; else the offset minus 39,  |
//	|                    |   then size uvarint and vsum uint32 LE     |
//	+--------------------+--------------------------------------------+
//
// The checks are version 2's. Part of the on-disk format.
const (
	histKeySameDim  = 0
	histKeyOtherDim = 1
	histKeyNamed    = 2
)

// appendHistoryV3 appends the history section of index.dat version 3
// for h, the history of ix.
func appendHistoryV3(b []byte, h *history, ix *index) []byte {
	if h == nil {
		h = newHistory()
	}
	b = appendHistoryHead(b, h)
	keys := slices.SortedFunc(h.chains.keys(), compareRkey)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	var prev rkey
	var prevFirst uint64
	for i, k := range keys {
		switch {
		case k.named:
			b = binary.AppendUvarint(b, histKeyNamed)
			b = binary.AppendUvarint(b, uint64(len(k.name)))
			b = append(b, k.name...)
		case i > 0 && !prev.named && prev.chunk.Dim == k.chunk.Dim:
			b = binary.AppendUvarint(b, histKeySameDim)
			b = binary.AppendUvarint(b, k.chunk.code()-prev.chunk.code())
		default:
			b = binary.AppendUvarint(b, histKeyOtherDim)
			b = binary.LittleEndian.AppendUint32(b, uint32(k.chunk.Dim))
			b = binary.AppendUvarint(b, k.chunk.code())
		}
		prev = k
		c, _ := h.chains.get(k)
		_, live := ix.get(k)
		b = binary.AppendUvarint(b, uint64(len(c)))
		seq := prevFirst
		prevFirst = c[0].seq
		for j, v := range c {
			b = binary.AppendVarint(b, int64(v.seq-seq))
			seq = v.seq
			switch {
			case j == len(c)-1 && live && !v.deleted():
				// the key's entry
			case v.deleted():
				b = binary.AppendUvarint(b, 0)
				b = binary.AppendUvarint(b, uint64(v.size))
			default:
				b = binary.AppendUvarint(b, uint64(v.off-fileHeaderSize+1))
				b = binary.AppendUvarint(b, uint64(v.size))
				b = binary.LittleEndian.AppendUint32(b, v.vsum)
			}
		}
	}
	return b
}

// decodeHistoryV3 decodes the history section of index.dat version 3 at
// body[p:] into ix.hist, checking it as decodeHistorySection does, and
// returns the offset after it.
func decodeHistoryV3(body []byte, p int, ix *index, covered int64) (int, error) {
	h, p, err := decodeHistoryHead(body, p, ix)
	if err != nil {
		return 0, err
	}
	bad := func(at int, format string, args ...any) (int, error) {
		return 0, corruptf(indexName, int64(at), "payload byte %d: history: %s", at, fmt.Sprintf(format, args...))
	}
	uv := func() (uint64, bool) {
		x, n := binary.Uvarint(body[p:])
		if n <= 0 {
			return 0, false
		}
		p += n
		return x, true
	}
	n, ok := uv()
	if !ok || n > uint64(len(body)-p)/3 {
		return bad(p, "chain count")
	}
	h.chains = newChainMap(int(n))
	var prev rkey
	var prevFirst uint64
	for i := uint64(0); i < n; i++ {
		start := p
		tag, ok := uv()
		if !ok {
			return bad(start, "chain %d: key", i)
		}
		var k rkey
		switch tag {
		case histKeySameDim:
			d, ok := uv()
			c := prev.chunk.code()
			if !ok || i == 0 || prev.named || d == 0 || d > math.MaxUint64-c {
				return bad(start, "chain %d: key", i)
			}
			x, z := morton.Decode(c + d)
			k = rkey{chunk: Key{Dim: prev.chunk.Dim, X: x, Z: z}}
		case histKeyOtherDim:
			if len(body)-p < 4 {
				return bad(start, "chain %d: key", i)
			}
			dim := int32(binary.LittleEndian.Uint32(body[p:]))
			p += 4
			code, ok := uv()
			if !ok {
				return bad(start, "chain %d: key", i)
			}
			x, z := morton.Decode(code)
			k = rkey{chunk: Key{Dim: dim, X: x, Z: z}}
		case histKeyNamed:
			l, ok := uv()
			if !ok || l == 0 || l > MaxNameLen || l > uint64(len(body)-p) {
				return bad(start, "chain %d: key", i)
			}
			k = rkey{named: true, name: string(body[p : p+int(l)])}
			p += int(l)
		default:
			return bad(start, "chain %d: key tag %d", i, tag)
		}
		if i > 0 && compareRkey(prev, k) >= 0 {
			return bad(start, "chain of %v after %v", k, prev)
		}
		prev = k
		cnt, ok := uv()
		if !ok || cnt == 0 || cnt > uint64(len(body)-p+1) {
			return bad(start, "chain of %v: version count", k)
		}
		e, live := ix.get(k)
		c := make([]version, cnt)
		seq := prevFirst
		for j := range c {
			d, m := binary.Varint(body[p:])
			if m <= 0 {
				return bad(p, "chain of %v: version %d", k, j)
			}
			p += m
			seq += uint64(d)
			v := version{seq: seq}
			if j == len(c)-1 && live {
				v.off, v.size, v.vsum = e.off, e.size, e.vsum
			} else {
				off, ok1 := uv()
				size, ok2 := uv()
				if !ok1 || !ok2 || size > math.MaxUint32 || off > uint64(covered) {
					return bad(p, "chain of %v: version %d", k, j)
				}
				v.size = uint32(size)
				if off == 0 {
					v.off = -1
				} else {
					if len(body)-p < 4 {
						return bad(p, "chain of %v: version %d", k, j)
					}
					v.off = int64(off) + fileHeaderSize - 1
					v.vsum = binary.LittleEndian.Uint32(body[p:])
					p += 4
				}
			}
			c[j] = v
		}
		prevFirst = c[0].seq
		if err := addChain(h, ix, k, c, covered); err != nil {
			return bad(start, "%v", err)
		}
	}
	ix.hist = h
	return p, nil
}
