package blazedb

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blazeworld/blaze/blazedb/internal/morton"
)

// dimIndex must behave as a sorted map through puts, deletes, merges and
// clones, and clones must not see later changes.
func TestDimIndexMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	d := newDimIndex()
	model := map[uint64]entry{}
	var snap *dimIndex
	var snapModel map[uint64]entry
	check := func(d *dimIndex, m map[uint64]entry) {
		t.Helper()
		var want []uint64
		for c := range m {
			want = append(want, c)
		}
		slices.Sort(want)
		var got []uint64
		d.ascend(0, ^uint64(0), func(c uint64, e entry) bool {
			if m[c] != e {
				t.Fatalf("code %d: %+v, want %+v", c, e, m[c])
			}
			got = append(got, c)
			return true
		})
		if !slices.Equal(got, want) {
			t.Fatalf("%d keys in order, want %d", len(got), len(want))
		}
		// A bounded range.
		lo, hi := uint64(rng.IntN(5000)), uint64(5000+rng.IntN(5000))
		var inRange []uint64
		d.ascend(lo, hi, func(c uint64, _ entry) bool { inRange = append(inRange, c); return true })
		var wantRange []uint64
		for _, c := range want {
			if c >= lo && c <= hi {
				wantRange = append(wantRange, c)
			}
		}
		if !slices.Equal(inRange, wantRange) {
			t.Fatalf("range [%d,%d]: %d keys, want %d", lo, hi, len(inRange), len(wantRange))
		}
	}
	for i := 0; i < 60000; i++ {
		c := uint64(rng.IntN(12000))
		if i%3000 == 0 && rng.IntN(2) == 0 {
			c = 20000 + uint64(i) // appends past the end
		}
		switch rng.IntN(3) {
		case 0, 1:
			e := entry{off: int64(i), size: uint32(30 + rng.IntN(100)), vsum: uint32(i)}
			old, had := d.put(c, e)
			if mo, mh := model[c]; had != mh || old != mo {
				t.Fatalf("put %d: previous %+v %v, want %+v %v", c, old, had, mo, mh)
			}
			model[c] = e
		case 2:
			old, had := d.del(c)
			if mo, mh := model[c]; had != mh || old != mo {
				t.Fatalf("del %d: previous %+v %v, want %+v %v", c, old, had, mo, mh)
			}
			delete(model, c)
		}
		if e, ok := d.get(c); ok != (model[c] != entry{}) || e != model[c] {
			t.Fatalf("get %d after op", c)
		}
		if i%7919 == 0 {
			if snap != nil {
				check(snap, snapModel)
			}
			snap = d.clone()
			snapModel = map[uint64]entry{}
			for k, v := range model {
				snapModel[k] = v
			}
			check(d, model)
		}
	}
	check(d, model)
	check(snap, snapModel)
	d.merge()
	check(d, model)
	if cap(d.base) != len(d.base) {
		t.Fatal("merge left slack")
	}
}

func TestIndexAreaMatchesFilter(t *testing.T) {
	ix := newIndex()
	rng := rand.New(rand.NewPCG(5, 6))
	var all []Key
	for i := 0; i < 3000; i++ {
		k := Key{Dim: 1, X: int32(rng.IntN(200) - 100), Z: int32(rng.IntN(200) - 100)}
		if _, had := ix.put(rkey{chunk: k}, entry{off: 40, size: 30}); !had {
			all = append(all, k)
		}
	}
	a := Area{Dim: 1, MinX: -17, MinZ: 5, MaxX: 40, MaxZ: 61}
	got := ix.area(nil, a)
	want := 0
	for _, k := range all {
		if a.contains(k.X, k.Z) {
			want++
		}
	}
	if len(got) != want {
		t.Fatalf("area returned %d keys, want %d", len(got), want)
	}
	for i := 1; i < len(got); i++ {
		if morton.Encode(got[i-1].X, got[i-1].Z) >= morton.Encode(got[i].X, got[i].Z) {
			t.Fatal("area not in Morton order")
		}
	}
}

// encodeIndexV2 writes index.dat of version 2, which builds before
// issue 41 wrote and this one still reads.
func encodeIndexV2(ix *index, m indexMeta) []byte {
	nchunks := ix.count - len(ix.named)
	b := make([]byte, indexHeaderSize, indexHeaderSize+nchunks*indexChunkEntrySize+len(ix.named)*32+4)
	copy(b, indexSignature)
	binary.LittleEndian.PutUint32(b[8:], indexVersion2)
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

// decodeIndex refuses an index.dat of version 2 that passes its checksum
// but describes what cannot be: a key twice, an entry outside the log it
// covers, a covered length outside the log's bounds. Open then rebuilds
// by scanning.
func TestDecodeIndexRefuses(t *testing.T) {
	ix := newIndex()
	ix.put(rkey{chunk: Key{X: 1}}, entry{off: fileHeaderSize, size: 100, vsum: 1})
	ix.put(rkey{chunk: Key{X: 2}}, entry{off: fileHeaderSize + 100, size: 100, vsum: 2})
	ix.settle()
	meta := indexMeta{generation: 3, covered: fileHeaderSize + 200, nextSeq: 9}
	valid := encodeIndexV2(ix, meta)
	if got, m, err := decodeIndex(valid); err != nil || m != meta || got.diff(ix) != "" {
		t.Fatalf("a valid index.dat: %+v, %v", m, err)
	}
	// edit changes the bytes at off (after the header) and fixes the checksum.
	edit := func(off int, v []byte) []byte {
		b := slices.Clone(valid[:len(valid)-4])
		copy(b[off:], v)
		return binary.LittleEndian.AppendUint32(b, crc(b))
	}
	second := indexHeaderSize + indexChunkEntrySize
	for name, b := range map[string][]byte{
		"key twice":            edit(second+4, binary.LittleEndian.AppendUint32(nil, 1)), // the second's X becomes 1
		"entry beyond covered": edit(second+16, binary.LittleEndian.AppendUint64(nil, fileHeaderSize+150)),
		"covered too short":    edit(24, binary.LittleEndian.AppendUint64(nil, fileHeaderSize-1)),
		"covered too long":     edit(24, binary.LittleEndian.AppendUint64(nil, 1<<57)),
	} {
		if _, _, err := decodeIndex(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Issue 41 item 2: index.dat version 3 round-trips, is smaller than
// version 2 for a compacted log of identical columns, and its decoder
// refuses, as ErrCorrupt, a payload that passes the checksum but
// describes what cannot be.
func TestDecodeIndexV3(t *testing.T) {
	ix := newIndex()
	var off int64 = fileHeaderSize
	for x := int32(-12); x < 12; x++ {
		for z := int32(-12); z < 12; z++ {
			ix.put(rkey{chunk: Key{X: x, Z: z}}, entry{off: off, size: 300, vsum: 0xfeedf00d})
			off += 300
		}
	}
	ix.put(rkey{chunk: Key{Dim: 2, X: 5}}, entry{off: off, size: 90, vsum: 1})
	ix.put(rkey{named: true, name: "level"}, entry{off: fileHeaderSize, size: 300, vsum: 0xfeedf00d})
	ix.settle()
	meta := indexMeta{generation: 3, covered: off + 90, nextSeq: 900}
	v3, v2 := encodeIndex(ix, meta), encodeIndexV2(ix, meta)
	for _, b := range [][]byte{v3, v2} {
		got, m, err := decodeIndex(b)
		if err != nil || m != meta || got.diff(ix) != "" {
			t.Fatalf("version %d: %+v, %v, %s", b[8], m, err, got.diff(ix))
		}
	}
	if len(v3)*10 > len(v2) {
		t.Errorf("version 3 holds %d bytes, version 2 %d: not 10 times smaller", len(v3), len(v2))
	}

	// payload builds a payload of one dimension 0 with the given chunk
	// entries (code delta, offset delta, size), no names, no history.
	payload := func(entries ...[3]int64) []byte {
		b := binary.AppendUvarint(nil, 0) // no bodies
		b = binary.AppendUvarint(b, 1)
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.AppendUvarint(b, uint64(len(entries)))
		for _, e := range entries {
			b = binary.AppendUvarint(b, uint64(e[0]))
			b = binary.AppendVarint(b, e[1])
			b = binary.AppendUvarint(b, uint64(e[2]))
			b = binary.LittleEndian.AppendUint32(b, 7)
		}
		b = binary.AppendUvarint(b, 0)
		return appendHistoryV3(b, nil, nil)
	}
	small := indexMeta{generation: 1, covered: fileHeaderSize + 200, nextSeq: 1}
	if _, _, err := decodeIndex(wrapIndexPayload(small, payload([3]int64{1, 0, 100}, [3]int64{1, 0, 100}))); err != nil {
		t.Fatalf("a valid payload: %v", err)
	}
	damagedFrame := wrapIndexPayload(small, payload([3]int64{1, 0, 100}))
	damagedFrame[indexV3HeaderSize+6] ^= 0xff
	damagedFrame = binary.LittleEndian.AppendUint32(damagedFrame[:len(damagedFrame)-4], crc(damagedFrame[:len(damagedFrame)-4]))
	wrongLength := wrapIndexPayload(small, payload([3]int64{1, 0, 100}))
	wrongLength[40]++
	wrongLength = binary.LittleEndian.AppendUint32(wrongLength[:len(wrongLength)-4], crc(wrongLength[:len(wrongLength)-4]))
	for name, b := range map[string][]byte{
		"key twice":            wrapIndexPayload(small, payload([3]int64{1, 0, 100}, [3]int64{0, 0, 100})),
		"entry beyond covered": wrapIndexPayload(small, payload([3]int64{1, 0, 100}, [3]int64{1, 1, 100})),
		"entry before the log": wrapIndexPayload(small, payload([3]int64{1, -1, 100})),
		"code overflows":       wrapIndexPayload(small, payload([3]int64{-1, 0, 100}, [3]int64{2, 0, 100})),
		"trailing bytes":       wrapIndexPayload(small, append(payload([3]int64{1, 0, 100}), 0)),
		"truncated":            wrapIndexPayload(small, payload([3]int64{1, 0, 100})[:9]),
		"covered too short":    wrapIndexPayload(indexMeta{covered: fileHeaderSize - 1}, payload()),
		"damaged frame":        damagedFrame,
		"wrong raw length":     wrongLength,
	} {
		if _, _, err := decodeIndex(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
