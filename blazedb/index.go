package blazedb

import (
	"encoding/binary"
	"fmt"
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
	live  int64 // bytes of live records
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
		ix.live -= int64(old.size)
	} else {
		ix.count++
	}
	ix.live += int64(e.size)
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
		ix.live -= int64(old.size)
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

// index.dat is a snapshot of the index and the part of chunks.dat it
// covers. It is only an accelerator: when it is missing, damaged, or made
// for another generation of chunks.dat, Open rebuilds the index by scanning.
//
//	+--------+------+-------------------------------------------------+
//	| offset | size | field                                           |
//	+--------+------+-------------------------------------------------+
//	|      0 |    8 | signature "\x89BLZIDX\n"                        |
//	|      8 |    4 | format version, uint32 LE (2)                   |
//	|     12 |    4 | flags (0)                                       |
//	|     16 |    8 | generation of the chunks.dat described          |
//	|     24 |    8 | covered: log offset up to which it is complete  |
//	|     32 |    8 | next sequence number                            |
//	|     40 |    8 | number of chunk entries c                       |
//	|     48 |    8 | number of named entries m                       |
//	|     56 | 28*c | chunk entries: dim, x, z int32; vsum uint32;    |
//	|        |      |   offset uint64; size uint32                    |
//	|      … |    … | m named entries: name length uint16, name,      |
//	|        |      |   vsum uint32, offset uint64, size uint32       |
//	|      … |    … | history section (drawn in historyindex.go)      |
//	|    end |    4 | CRC-32C of everything before it                 |
//	+--------+------+-------------------------------------------------+
//
// Version 1 (without the history section) was never released: it is
// refused with ErrOldVersion, and, as index.dat is only an accelerator,
// Open then rebuilds the index by scanning the log, as it does for any
// index.dat it cannot use (Recovery.IndexProblem says why). From now on
// a change of this format is a new version, and the reader of every
// released one stays (version_test.go).
//
// Part of the on-disk format.
const (
	indexSignature      = "\x89BLZIDX\n"
	indexVersion        = 2 // written and read; 1 was never released
	indexHeaderSize     = 56
	indexChunkEntrySize = 28
	indexNamedFixed     = 2 + 4 + 8 + 4
)

// indexMeta is what index.dat records besides the entries.
type indexMeta struct {
	generation uint64
	covered    int64
	nextSeq    uint64
}

func encodeIndex(ix *index, m indexMeta) []byte {
	nchunks := ix.count - len(ix.named)
	b := make([]byte, indexHeaderSize, indexHeaderSize+nchunks*indexChunkEntrySize+len(ix.named)*32+4)
	copy(b, indexSignature)
	binary.LittleEndian.PutUint32(b[8:], indexVersion)
	binary.LittleEndian.PutUint64(b[16:], m.generation)
	binary.LittleEndian.PutUint64(b[24:], uint64(m.covered))
	binary.LittleEndian.PutUint64(b[32:], m.nextSeq)
	binary.LittleEndian.PutUint64(b[40:], uint64(nchunks))
	binary.LittleEndian.PutUint64(b[48:], uint64(len(ix.named)))
	ix.each(func(k rkey, e entry) bool {
		if k.named {
			b = binary.LittleEndian.AppendUint16(b, uint16(len(k.name)))
			b = append(b, k.name...)
		} else {
			b = binary.LittleEndian.AppendUint32(b, uint32(k.chunk.Dim))
			b = binary.LittleEndian.AppendUint32(b, uint32(k.chunk.X))
			b = binary.LittleEndian.AppendUint32(b, uint32(k.chunk.Z))
		}
		b = binary.LittleEndian.AppendUint32(b, e.vsum)
		b = binary.LittleEndian.AppendUint64(b, uint64(e.off))
		b = binary.LittleEndian.AppendUint32(b, e.size)
		return true
	})
	b = appendHistorySection(b, ix.hist)
	return binary.LittleEndian.AppendUint32(b, crc(b))
}

// decodeIndex parses index.dat. Every entry must lie inside the covered
// part of the log; anything else is ErrCorrupt (and the caller rebuilds).
func decodeIndex(b []byte) (*index, indexMeta, error) {
	bad := func(off int, format string, args ...any) (*index, indexMeta, error) {
		return nil, indexMeta{}, corruptf(indexName, int64(off), format, args...)
	}
	if len(b) < len(indexSignature) || string(b[:len(indexSignature)]) != indexSignature {
		return bad(0, "no index signature")
	}
	if len(b) < indexHeaderSize+4 {
		return bad(0, "%d bytes is too short", len(b))
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != indexVersion {
		switch {
		case v > indexVersion:
			return nil, indexMeta{}, fmt.Errorf("%w: %s is format version %d; this build reads version %d", ErrVersion, indexName, v, indexVersion)
		case v == 1:
			return nil, indexMeta{}, fmt.Errorf("%w: %s is format version %d, a development format no release wrote; this build reads version %d", ErrOldVersion, indexName, v, indexVersion)
		}
		return bad(8, "format version %d", v)
	}
	body := b[:len(b)-4]
	if got, want := binary.LittleEndian.Uint32(b[len(b)-4:]), crc(body); got != want {
		return bad(len(b)-4, "checksum %08x, want %08x", got, want)
	}
	m := indexMeta{
		generation: binary.LittleEndian.Uint64(b[16:]),
		covered:    int64(binary.LittleEndian.Uint64(b[24:])),
		nextSeq:    binary.LittleEndian.Uint64(b[32:]),
	}
	nchunks := binary.LittleEndian.Uint64(b[40:])
	nnamed := binary.LittleEndian.Uint64(b[48:])
	if m.covered < fileHeaderSize || m.covered > 1<<56 {
		return bad(24, "covered offset %d", m.covered)
	}
	if nchunks > uint64(len(body))/indexChunkEntrySize || nnamed > uint64(len(body))/indexNamedFixed {
		return bad(40, "%d chunk and %d named entries cannot fit in %d bytes", nchunks, nnamed, len(b))
	}
	ix := newIndex()
	p := indexHeaderSize
	checkEntry := func(at int, e entry) error {
		if e.off < fileHeaderSize || e.size < recHeaderSize || e.off+int64(e.size) > m.covered {
			return corruptf(indexName, int64(at), "entry at %d+%d outside the covered log of %d bytes", e.off, e.size, m.covered)
		}
		return nil
	}
	for i := uint64(0); i < nchunks; i++ {
		if len(body)-p < indexChunkEntrySize {
			return bad(p, "chunk entry %d is truncated", i)
		}
		k := rkey{chunk: Key{
			Dim: int32(binary.LittleEndian.Uint32(body[p:])),
			X:   int32(binary.LittleEndian.Uint32(body[p+4:])),
			Z:   int32(binary.LittleEndian.Uint32(body[p+8:])),
		}}
		e := entry{
			vsum: binary.LittleEndian.Uint32(body[p+12:]),
			off:  int64(binary.LittleEndian.Uint64(body[p+16:])),
			size: binary.LittleEndian.Uint32(body[p+24:]),
		}
		if err := checkEntry(p, e); err != nil {
			return nil, indexMeta{}, err
		}
		if _, dup := ix.put(k, e); dup {
			return bad(p, "duplicate key %v", k)
		}
		p += indexChunkEntrySize
	}
	for i := uint64(0); i < nnamed; i++ {
		if len(body)-p < 2 {
			return bad(p, "named entry %d is truncated", i)
		}
		n := int(binary.LittleEndian.Uint16(body[p:]))
		if n == 0 || n > MaxNameLen || len(body)-p < indexNamedFixed+n {
			return bad(p, "named entry %d of %d bytes is malformed", i, n)
		}
		k := rkey{named: true, name: string(body[p+2 : p+2+n])}
		q := p + 2 + n
		e := entry{
			vsum: binary.LittleEndian.Uint32(body[q:]),
			off:  int64(binary.LittleEndian.Uint64(body[q+4:])),
			size: binary.LittleEndian.Uint32(body[q+12:]),
		}
		if err := checkEntry(p, e); err != nil {
			return nil, indexMeta{}, err
		}
		if _, dup := ix.put(k, e); dup {
			return bad(p, "duplicate key %v", k)
		}
		p = q + 16
	}
	p, herr := decodeHistorySection(body, p, ix, m.covered)
	if herr != nil {
		return nil, indexMeta{}, herr
	}
	if p != len(body) {
		return bad(p, "%d trailing bytes", len(body)-p)
	}
	return ix, m, nil
}
