package blazedb

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// Issue 42 item 4: a batch's shared puts (the provider's store worker
// writes its columns so) are kept without a copy, in the batch and in the
// engine's cache, and read back like Put's, reopened too, beside a Put and
// a Delete in the same batch, with every codec.
func TestBatchPutShared(t *testing.T) {
	for _, c := range []Compression{CompressionNone, CompressionLZ4, CompressionSnappy, CompressionZstd} {
		fs := vfstest.NewMem()
		db := open(t, fs, "/db", Options{Compression: c})
		if err := db.Put(Key{X: 9}, value(9, 100)); err != nil {
			t.Fatal(err)
		}
		var b Batch
		shared := [][]byte{value(1, 8<<10), value(2, 3<<10)}
		b.PutShared(Key{X: 1}, shared[0])
		b.Put(Key{X: 3}, value(3, 1<<10))
		b.PutShared(Key{X: 2}, shared[1])
		b.Delete(Key{X: 9})
		if &b.ops[0].val[0] != &shared[0][0] || &b.ops[2].val[0] != &shared[1][0] || !b.ops[0].shared || b.ops[1].shared {
			t.Fatal("the batch copied a shared value")
		}
		if err := db.Apply(&b); err != nil {
			t.Fatal(err)
		}
		for i, v := range shared {
			k := Key{X: int32(i + 1)}
			if held, ok := db.cache.get(appendChunkKey(nil, k)); !ok || &held[0] != &v[0] {
				t.Fatalf("codec %v: the cache does not hold shared value %d itself", c, i)
			}
		}
		check := func(when string) {
			for i, want := range [][]byte{value(1, 8<<10), value(2, 3<<10), value(3, 1<<10)} {
				if got := mustGet(t, db, Key{X: int32(i + 1)}); !bytes.Equal(got, want) {
					t.Fatalf("codec %v %s: value %d differs", c, when, i+1)
				}
			}
			if ok, err := db.Has(Key{X: 9}); ok || err != nil {
				t.Fatalf("codec %v %s: the deleted key: %v, %v", c, when, ok, err)
			}
		}
		check("applied")
		db.Close()
		db = open(t, fs, "/db", Options{Compression: c})
		check("reopened")
	}
}

// frame writes a batch's records in place, after room for its header (no
// allocation but the offsets when dst has room): the
// bytes and offsets are those of the body built apart and then framed as
// the batch's value, with and without a mark before it, and a single
// record's those of appendRecord.
func TestFrameInPlace(t *testing.T) {
	db := open(t, vfstest.NewMem(), "/db", Options{})
	db.seq = 41
	var live []pending
	for i := range 4 {
		k := Key{X: int32(i)}
		p := pending{op: op{k: rkey{chunk: k}, key: appendChunkKey(nil, k), val: value(i, 100*i+7)}}
		if i == 2 {
			p.del, p.val = true, nil
		} else {
			p.vsum, p.codec, p.stored = crc(p.val), codecNone, p.val
		}
		live = append(live, p)
	}
	rec := func(p *pending, seq uint64, kind uint8) *record {
		r := &record{seq: seq, kind: kindDelete | kind, key: p.key}
		if !p.del {
			r.kind, r.codec, r.value, r.rawLen, r.vsum = kindPut|kind, p.codec, p.stored, uint32(len(p.val)), p.vsum
		}
		return r
	}
	for _, prefix := range [][]byte{nil, appendMark(nil, 1234)} {
		for _, n := range []int{1, len(live)} {
			var want []byte
			wantOffs := make([]int64, n)
			if n == 1 {
				want = appendRecord(bytes.Clone(prefix), rec(&live[0], db.seq, 0))
				wantOffs[0] = int64(len(prefix))
			} else {
				var body []byte
				for i := range live {
					wantOffs[i] = int64(len(prefix) + recHeaderSize + len(body))
					body = appendRecord(body, rec(&live[i], db.seq+uint64(i), 0x80))
				}
				want = appendRecord(bytes.Clone(prefix), &record{seq: db.seq, kind: kindBatch, value: body, rawLen: uint32(len(body))})
			}
			got, offs := db.frame(bytes.Clone(prefix), live[:n])
			what := fmt.Sprintf("%d records, prefix of %d bytes", n, len(prefix))
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: framed differently", what)
			}
			if fmt.Sprint(offs) != fmt.Sprint(wantOffs) {
				t.Fatalf("%s: offsets %v, want %v", what, offs, wantOffs)
			}
			// In place: with room after the prefix, nothing is allocated
			// but the offsets (a body built apart is one more).
			roomy := append(make([]byte, 0, len(want)), prefix...)
			if n := testing.AllocsPerRun(10, func() { db.frame(roomy, live[:n]) }); n > 1 {
				t.Fatalf("%s: %v allocations to frame into room enough", what, n)
			}
		}
	}
}
