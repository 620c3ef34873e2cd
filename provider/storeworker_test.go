package provider

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Issue 42 item 4: the store worker encodes a batch's columns on several
// goroutines (a second encoder starts while the first is still on its
// column), writes them in one batch, reports a column that does not encode
// as that column's failure and writes the others; the cache's snapshot of
// each written column holds the queued snapshot's own sub-chunks, not a
// second copy of them.
func TestStoreWorkerEncodesBatchInParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	db := openDB(t, t.TempDir(), Config{})
	gate := make(chan struct{})
	db.store.gate = gate
	db.store.maxAge = time.Hour // the gated worker writes nothing meanwhile
	var calls atomic.Int32
	var alone atomic.Bool
	second := make(chan struct{})
	db.store.encoding = func() {
		switch calls.Add(1) {
		case 1:
			select {
			case <-second:
			case <-time.After(5 * time.Second):
				alone.Store(true)
			}
		case 2:
			close(second)
		}
	}
	br := world.DefaultBlockRegistry
	want := map[world.ChunkPos]*chunk.Column{}
	for i := range 2 {
		pos := world.ChunkPos{int32(i), 0}
		want[pos] = worldtest.Synthetic(uint64(i), world.Overworld, br)
		if err := db.StoreColumn(pos, world.Overworld, worldtest.Synthetic(uint64(i), world.Overworld, br)); err != nil {
			t.Fatal(err)
		}
	}
	// A block entity NBT cannot encode: the snapshot takes it, the
	// encoder refuses it.
	bad := worldtest.Synthetic(9, world.Overworld, br)
	bad.BlockEntities = append(bad.BlockEntities, chunk.BlockEntity{Pos: [3]int{1, 2, 3}, Data: map[string]any{"x": make(chan int)}})
	if err := db.StoreColumn(world.ChunkPos{9, 9}, world.Overworld, bad); err != nil {
		t.Fatalf("the store itself: %v", err)
	}
	db.store.mu.Lock()
	queued := map[blazedb.Key]*snapshot{}
	for _, j := range db.store.jobs {
		queued[j.s.key] = j.s
	}
	db.store.mu.Unlock()
	close(gate)
	err := db.Sync()
	if err == nil || !strings.Contains(err.Error(), "(9, 9)") || strings.Contains(err.Error(), "(0, 0)") {
		t.Fatalf("Sync after a batch with one column that cannot encode: %v", err)
	}
	if alone.Load() {
		t.Fatal("the batch's columns were encoded one at a time")
	}
	cols, _ := db.columns()
	for pos, w := range want {
		got, err := db.LoadColumn(pos, world.Overworld)
		if err != nil {
			t.Fatalf("load %v: %v", pos, err)
		}
		if err := worldtest.Compare(w, got); err != nil {
			t.Fatalf("column %v: %v", pos, err)
		}
		k, _ := key(pos, world.Overworld)
		s, ok := cols.peek(k)
		if !ok {
			t.Fatalf("column %v is not cached", pos)
		}
		q := queued[k]
		if q.flat == nil {
			// blaze_safe: the queued snapshot's sub-chunks are SubChunk
			// copies, which its build puts in its chunk.
			for i, sub := range s.subs {
				if sub != q.chunk.Sub()[i] {
					t.Fatalf("column %v: the cached sub-chunk %d is a second copy of the queued snapshot's", pos, i)
				}
			}
			continue
		}
		// Issue 42 item 4: the worker encoded the tick's flat copies
		// (snapshotOf) as they are, building no SubChunk from them, and
		// the cached snapshot holds those very copies.
		if q.chunk != nil {
			t.Fatalf("column %v: the worker built the queued snapshot's chunk", pos)
		}
		for i, f := range q.flat {
			if len(f) == 0 || len(s.flat) != len(q.flat) || &s.flat[i][0] != &f[0] || s.subs[i] != nil {
				t.Fatalf("column %v: the cached sub-chunk %d is not the queued snapshot's flat copy", pos, i)
			}
		}
	}
	if ok, _ := db.Has(world.ChunkPos{9, 9}, world.Overworld); ok {
		t.Fatal("the column that cannot encode was written")
	}
}
