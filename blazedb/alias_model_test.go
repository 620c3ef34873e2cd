package blazedb

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// Issue 41 (review): a model of chunk keys holding a few values, written,
// deleted and batched around compactions (some with writes while they
// copy), reopenings with index.dat and without, reads at past points and
// snapshots, with history kept, off, or passed at every compaction; then
// one copy of each body damaged. Every read matches the model, and Check
// finds nothing but while a copy is damaged.
func TestAliasModel(t *testing.T) {
	for seed := uint64(0); seed < uint64(soak(10, 3000)); seed++ {
		aliasModelRun(t, seed)
	}
}

// point is a state of the model and the point it was taken at.
type point struct {
	seq uint64
	m   map[Key][]byte
}

// aliasModelRun is one run of TestAliasModel.
func aliasModelRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	fs := vfstest.NewMem()
	fs.MkdirAll("/db", 0o755)
	hist := []int64{0, -1, 1}[rng.IntN(3)]
	o := Options{FS: fs, Logger: quiet, DisableAutoCompaction: true}
	if hist < 0 {
		o.History = -1
	}
	if hist == 1 {
		o.History = 1
	}
	var pins []point
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	vals := [][]byte{}
	for i := range 4 {
		vals = append(vals, bytes.Repeat([]byte(fmt.Sprintf("value %d ", i)), 10+i))
	}
	model := map[Key][]byte{}
	var points []point
	keys := []Key{}
	for i := range 8 {
		keys = append(keys, Key{Dim: int32(i % 2), X: int32(i), Z: int32(-i)})
	}
	snapshotModel := func() map[Key][]byte {
		m := map[Key][]byte{}
		for k, v := range model {
			m[k] = v
		}
		return m
	}
	damaged := false
	check := func(what string) {
		for _, k := range keys {
			v, err := db.Get(k)
			want, ok := model[k]
			if !ok {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("seed %d %s: %v: %q %v, want none", seed, what, k, v, err)
				}
				continue
			}
			if err != nil || !bytes.Equal(v, want) {
				t.Fatalf("seed %d %s: %v: %q %v, want %q", seed, what, k, v, err, want)
			}
		}
		ps := pins
		if hist == 0 {
			ps = append(ps, points...)
		}
		{
			for _, p := range ps {
				for _, k := range keys {
					v, err := db.GetAt(k, p.seq)
					want, ok := p.m[k]
					if !ok {
						if !errors.Is(err, ErrNotFound) {
							t.Fatalf("seed %d %s: %v at %d: %q %v, want none", seed, what, k, p.seq, v, err)
						}
						continue
					}
					if err != nil || !bytes.Equal(v, want) {
						t.Fatalf("seed %d %s: %v at %d: %q %v, want %q", seed, what, k, p.seq, v, err, want)
					}
				}
			}
		}
		if damaged {
			return
		}
		if err := db.Check(); err != nil {
			t.Fatalf("seed %d %s: check: %v", seed, what, err)
		}
	}
	for step := 0; step < 60; step++ {
		switch r := rng.IntN(20); {
		case r < 10:
			k := keys[rng.IntN(len(keys))]
			v := vals[rng.IntN(len(vals))]
			if err := db.Put(k, v); err != nil {
				t.Fatal(err)
			}
			model[k] = v
		case r < 12:
			k := keys[rng.IntN(len(keys))]
			if err := db.Delete(k); err != nil {
				t.Fatal(err)
			}
			delete(model, k)
		case r < 13:
			b := &Batch{}
			for i := 0; i < 3; i++ {
				k := keys[rng.IntN(len(keys))]
				v := vals[rng.IntN(len(vals))]
				b.Put(k, v)
				model[k] = v
			}
			if err := db.Apply(b); err != nil {
				t.Fatal(err)
			}
		case r < 14:
			s, _ := db.Seq()
			points = append(points, point{s, snapshotModel()})
		case r < 15:
			if len(pins) > 0 && rng.IntN(3) == 0 {
				i := rng.IntN(len(pins))
				if err := db.DeleteSnapshot(fmt.Sprint(pins[i].seq)); err != nil {
					t.Fatal(err)
				}
				pins = append(pins[:i], pins[i+1:]...)
				break
			}
			s, _ := db.Seq()
			info, err := db.CreateSnapshot(fmt.Sprint(s))
			if err != nil {
				t.Fatal(err)
			}
			pins = append(pins, point{info.Seq, snapshotModel()})
		case r < 18:
			if rng.IntN(2) == 0 {
				db.knobs.compactCopied = func() {
					for i := 0; i < 3; i++ {
						k := keys[rng.IntN(len(keys))]
						if rng.IntN(4) == 0 {
							if err := db.Delete(k); err != nil {
								t.Error(err)
							}
							delete(model, k)
							continue
						}
						v := vals[rng.IntN(len(vals))]
						if err := db.Put(k, v); err != nil {
							t.Error(err)
						}
						model[k] = v
					}
					if rng.IntN(2) == 0 {
						s, _ := db.Seq()
						points = append(points, point{s, snapshotModel()})
					}
				}
			} else {
				db.knobs.compactCopied = nil
			}
			if err := db.Compact(); err != nil {
				t.Fatalf("seed %d: compact: %v", seed, err)
			}
			check("after compaction")
		default:
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(2) == 0 {
				fs.Remove("/db/" + indexName)
			}
			db, err = Open("/db", o)
			if err != nil {
				t.Fatal(err)
			}
			check("after reopen")
		}
	}
	check("end")
	db.Close()
	b, _ := fs.ReadFile("/db/" + logName)
	var bodies []int64
	for off := fileHeaderSize; off < len(b); {
		r, n, err := decodeRecord(b[off:], true)
		if err != nil {
			t.Fatalf("seed %d: record at %d: %v", seed, off, err)
		}
		if r.kind == kindBody {
			bodies = append(bodies, int64(off))
		}
		off += n
	}
	if len(bodies) == 0 {
		return
	}
	// Damage one copy of each body: the first or the second.
	half := len(bodies) / 2
	which := rng.IntN(2)
	for i := 0; i < half; i++ {
		at := bodies[i+which*half] + recHeaderSize + 2
		b[at] ^= 0x10
	}
	fs.WriteFile("/db/"+logName, b)
	damaged = true
	if rng.IntN(2) == 0 {
		fs.Remove("/db/" + indexName)
	}
	var err2 error
	db, err2 = Open("/db", o)
	if err2 != nil {
		t.Fatal(err2)
	}
	check(fmt.Sprintf("damaged copy %d", which))
	if err := db.Compact(); err != nil {
		t.Fatalf("seed %d: compaction of a damaged body copy: %v", seed, err)
	}
	damaged = false
	check("compacted after damage")
	db.Close()
	db, _ = Open("/db", o)
	check("reopened after damage")
	db.Close()
}
