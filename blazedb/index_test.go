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

// decodeIndex refuses an index.dat that passes its checksum but describes
// what cannot be: a key twice, an entry outside the log it covers, a
// covered length outside the log's bounds. Open then rebuilds by scanning.
func TestDecodeIndexRefuses(t *testing.T) {
	ix := newIndex()
	ix.put(rkey{chunk: Key{X: 1}}, entry{off: fileHeaderSize, size: 100, vsum: 1})
	ix.put(rkey{chunk: Key{X: 2}}, entry{off: fileHeaderSize + 100, size: 100, vsum: 2})
	ix.settle()
	meta := indexMeta{generation: 3, covered: fileHeaderSize + 200, nextSeq: 9}
	valid := encodeIndex(ix, meta)
	if _, m, err := decodeIndex(valid); err != nil || m != meta {
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
