package blazedb

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// The crash simulation in crash_test.go drives the database from one
// goroutine, so a write never lands while another's fsync is under way.
// These writers share the log instead: in DurabilitySafeBatch one writer's
// fsync covers the others' writes (group commit), in DurabilitySafe each
// writer syncs beside the others' writes, in DurabilityBalanced background
// syncs and Sync calls run beside the writes, and in DurabilityFast Sync
// calls; compactions copy the log meanwhile. Some writes are batches of
// three. After a crash every write acknowledged as durable must survive,
// and what survives of each writer must be the state after some prefix of
// its writes that does not end inside a batch.

const (
	crashWriters    = 4
	keysPerWriter   = 5
	concurrentValue = 40 // bytes of a value, padding included
	concurrentBatch = 3  // writes in a batch, fewer than keysPerWriter
)

// concurrentKey is writer w's key for its i-th write.
func concurrentKey(w, i int) Key { return Key{Dim: 1, X: int32(w), Z: int32(i % keysPerWriter)} }

func concurrentVal(w, i int) []byte {
	s := fmt.Sprintf("w%d#%d#", w, i)
	return []byte(s + strings.Repeat("x", concurrentValue-len(s)))
}

// crashesConcurrent is 300 a mode in `make test` and 20,000 under `make soak`.
func crashesConcurrent() int { return soak(300, 20_000) }

func TestCrashConcurrentWriters(t *testing.T) {
	n := crashesConcurrent()
	if testing.Short() {
		n = 30
	}
	for _, mode := range []Durability{DurabilityFast, DurabilityBalanced, DurabilitySafe, DurabilitySafeBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			for seed := range uint64(n) {
				runConcurrentCrash(t, mode, seed)
			}
		})
	}
}

func runConcurrentCrash(t *testing.T, mode Durability, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 100+uint64(mode)))
	fs := vfs.NewMem()
	opts := Options{
		FS: fs, Logger: quiet, Durability: mode,
		Compression:     Compression(rng.IntN(5)),
		SyncBytes:       int64(1 + rng.IntN(4<<10)),
		SyncInterval:    time.Duration(1+rng.IntN(5)) * time.Millisecond,
		CompactMinBytes: int64(rng.IntN(8 << 10)),
	}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	fs.CrashAfter(1 + rng.IntN(400))

	// acked[w] is how many of writer w's writes have returned nil;
	// durable[w] how many are known durable. batches[w] lists where each
	// of w's batches starts; only w touches it until the writers are done.
	var acked, durable [crashWriters]atomic.Int64
	var batches [crashWriters][]int
	safe := mode == DurabilitySafe || mode == DurabilitySafeBatch
	var wg sync.WaitGroup
	for w := range crashWriters {
		wrng := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Go(func() {
			for i := 0; ; {
				n, err := 1, error(nil)
				if wrng.IntN(4) == 0 {
					n = concurrentBatch
					var b Batch
					for j := i; j < i+n; j++ {
						b.Put(concurrentKey(w, j), concurrentVal(w, j))
					}
					batches[w] = append(batches[w], i)
					err = db.Apply(&b)
				} else {
					err = db.Put(concurrentKey(w, i), concurrentVal(w, i))
				}
				if err != nil {
					return
				}
				i += n
				acked[w].Store(int64(i))
				if safe {
					durable[w].Store(int64(i))
				}
			}
		})
	}
	// The syncer stops at its first error or once the writers have all
	// met the crash: a Sync with nothing to sync succeeds without I/O.
	writersDone := make(chan struct{})
	var syncer sync.WaitGroup
	if !safe {
		syncer.Go(func() {
			for {
				select {
				case <-writersDone:
					return
				default:
				}
				var before [crashWriters]int64
				for w := range before {
					before[w] = acked[w].Load()
				}
				if err := db.Sync(); err != nil {
					return
				}
				for w, n := range before {
					durable[w].Store(n)
				}
				time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
			}
		})
	}
	wg.Wait()
	close(writersDone)
	syncer.Wait()
	keep := []float64{0, 0.3, 0.7, 1}[rng.IntN(4)]
	clone := fs.CrashClone(rand.New(rand.NewPCG(seed, 7)), keep)
	db.Close()

	desc := fmt.Sprintf("mode %v seed %d keep %.1f", mode, seed, keep)
	opts.FS = clone
	after, err := Open("/db", opts)
	if err != nil {
		t.Fatalf("%s: reopen: %v", desc, err)
	}
	defer after.Close()
	if err := after.Check(); err != nil {
		t.Fatalf("%s: Check: %v", desc, err)
	}
	for w := range crashWriters {
		lo, hi := writerPrefix(t, after, w, desc)
		if d := durable[w].Load(); hi < d {
			t.Fatalf("%s: writer %d: %d writes were durable, but the state survived is that after %d to %d of them",
				desc, w, d, lo, hi)
		}
		// Some prefix in [lo, hi] must end between batches.
		whole := false
		for c := lo; c <= hi && !whole; c++ {
			whole = !slices.ContainsFunc(batches[w], func(b int) bool { return int64(b) < c && c < int64(b+concurrentBatch) })
		}
		if !whole {
			t.Fatalf("%s: writer %d: the state survived is that after %d to %d of its writes, inside a batch (batches start at %v)",
				desc, w, lo, hi, batches[w])
		}
	}
}

// writerPrefix reads writer w's keys and returns the range of write counts
// c such that the state recovered is the state after w's first c writes.
// It fails the test when there is none.
func writerPrefix(t *testing.T, db *DB, w int, desc string) (lo, hi int64) {
	lo, hi = 0, 1<<62
	var got []string
	for k := range keysPerWriter {
		v, err := db.Get(concurrentKey(w, k))
		if errors.Is(err, ErrNotFound) {
			// Not yet written: the writer's write number k came later.
			hi = min(hi, int64(k))
			got = append(got, "absent")
			continue
		}
		if err != nil {
			t.Fatalf("%s: writer %d key %d: %v", desc, w, k, err)
		}
		var vw, i int
		if _, err := fmt.Sscanf(string(v), "w%d#%d#", &vw, &i); err != nil || vw != w || i%keysPerWriter != k ||
			string(v) != string(concurrentVal(w, i)) {
			t.Fatalf("%s: writer %d key %d holds %q, which it never wrote", desc, w, k, v)
		}
		// Write i is the key's newest: the next to it, i+keysPerWriter,
		// is not in the prefix.
		lo, hi = max(lo, int64(i+1)), min(hi, int64(i+keysPerWriter))
		got = append(got, fmt.Sprint(i))
	}
	if lo > hi {
		t.Fatalf("%s: writer %d's keys hold writes %v: no prefix of its writes leaves that", desc, w, got)
	}
	return lo, hi
}
