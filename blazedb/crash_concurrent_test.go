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

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// The crash simulation in crash_test.go drives the database from one
// goroutine, so a write never lands while another's fsync is under way.
// These writers share the log instead: in DurabilitySafeBatch one writer's
// fsync covers the others' writes (group commit), in DurabilitySafe each
// writer syncs beside the others' writes, in DurabilityBalanced background
// syncs and Sync calls run beside the writes, and in DurabilityFast Sync
// calls; compactions copy the log meanwhile. Some writes are deletes, and
// some are batches of three. After a crash every write acknowledged as
// durable must survive, and what survives of each writer must be the state
// after some prefix of its writes that does not end inside a batch.
// Snapshots are taken meanwhile (issue 36): each one whose creation
// returned must survive and read, for every writer, what it read when it
// was taken.

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
	fs := vfstest.NewMem()
	// One seed in four renames as Windows must (files.go), with reads and
	// writes racing the compactions that rename the log aside.
	windows := seed%4 == 3
	fs.SetWindows(windows)
	opts := Options{
		FS: fs, Logger: quiet, Durability: mode,
		Compression:     Compression(rng.IntN(5)),
		SyncBytes:       int64(1 + rng.IntN(4<<10)),
		SyncInterval:    time.Duration(1+rng.IntN(5)) * time.Millisecond,
		CompactMinBytes: int64(rng.IntN(8 << 10)),
		History:         []time.Duration{0, -1, time.Nanosecond}[rng.IntN(3)],
	}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	fs.CrashAfter(1 + rng.IntN(400))

	// acked[w] is how many of writer w's writes have returned nil;
	// durable[w] how many are known durable. batches[w] lists where each
	// of w's batches starts, and deletes[w] which of its writes are
	// deletes; only w touches them until the writers are done.
	var acked, durable [crashWriters]atomic.Int64
	var batches [crashWriters][]int
	var deletes [crashWriters][]bool
	safe := mode == DurabilitySafe || mode == DurabilitySafeBatch
	var wg sync.WaitGroup
	for w := range crashWriters {
		wrng := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Go(func() {
			for i := 0; ; {
				n, err := 1, error(nil)
				del := func() bool { // the next write deletes its key
					d := wrng.IntN(6) == 0
					deletes[w] = append(deletes[w], d)
					return d
				}
				switch {
				case wrng.IntN(4) == 0:
					n = concurrentBatch
					var b Batch
					for j := i; j < i+n; j++ {
						if del() {
							b.Delete(concurrentKey(w, j))
						} else {
							b.Put(concurrentKey(w, j), concurrentVal(w, j))
						}
					}
					batches[w] = append(batches[w], i)
					err = db.Apply(&b)
				case del():
					err = db.Delete(concurrentKey(w, i))
				default:
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
	// The snapshotter takes snapshots between the writes and reads every
	// writer's keys at each, until its first error.
	type taken struct {
		info  SnapshotInfo
		state [crashWriters][]int // nil: a read failed, compared no further
	}
	var snaps []taken
	var snapshotter sync.WaitGroup
	srng := rand.New(rand.NewPCG(seed, 8))
	snapshotter.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-writersDone:
				return
			default:
			}
			info, err := db.CreateSnapshot(fmt.Sprintf("s%d", i))
			if err != nil {
				return
			}
			tk := taken{info: info}
			for w := range crashWriters {
				st, err := snapshotState(db, w, info.Seq)
				if err != nil {
					tk.state = [crashWriters][]int{}
					break
				}
				tk.state[w] = st
			}
			snaps = append(snaps, tk)
			time.Sleep(time.Duration(srng.IntN(500)) * time.Microsecond)
		}
	})
	wg.Wait()
	close(writersDone)
	syncer.Wait()
	snapshotter.Wait()
	keep := []float64{0, 0.3, 0.7, 1}[rng.IntN(4)]
	clone := fs.CrashClone(rand.New(rand.NewPCG(seed, 7)), keep)
	db.Close()

	desc := fmt.Sprintf("mode %v seed %d keep %.1f windows %v", mode, seed, keep, windows)
	opts.FS = clone
	after, err := Open("/db", opts)
	if err != nil {
		t.Fatalf("%s: reopen: %v", desc, err)
	}
	defer after.Close()
	if err := after.Check(); err != nil {
		t.Fatalf("%s: Check: %v", desc, err)
	}
	list, err := after.Snapshots()
	if err != nil {
		t.Fatalf("%s: Snapshots: %v", desc, err)
	}
	for _, tk := range snaps {
		i := slices.IndexFunc(list, func(s SnapshotInfo) bool { return s.Name == tk.info.Name })
		if i < 0 || list[i].Seq != tk.info.Seq {
			t.Fatalf("%s: durable snapshot %+v lost (have %+v)", desc, tk.info, list)
		}
		for w := range crashWriters {
			if tk.state[w] == nil {
				continue
			}
			got, err := snapshotState(after, w, tk.info.Seq)
			if err != nil || !slices.Equal(got, tk.state[w]) {
				t.Fatalf("%s: snapshot %s: writer %d reads %v, %v; it read %v", desc, tk.info.Name, w, got, err, tk.state[w])
			}
		}
	}
	for w := range crashWriters {
		got := writerState(t, after, w, desc)
		d := int(durable[w].Load())
		var cuts []int // the prefixes of w's writes that leave got
		for c := 0; c <= len(deletes[w]); c++ {
			if slices.Equal(got, stateAfter(deletes[w], c)) {
				cuts = append(cuts, c)
			}
		}
		ok := slices.ContainsFunc(cuts, func(c int) bool {
			inBatch := slices.ContainsFunc(batches[w], func(b int) bool { return b < c && c < b+concurrentBatch })
			return c >= d && !inBatch
		})
		if !ok {
			t.Fatalf("%s: writer %d: its keys hold writes %v (-1: absent): the state after %v of its writes, but %d were durable (batches start at %v)",
				desc, w, got, cuts, d, batches[w])
		}
	}
}

// snapshotState reads writer w's keys at point p, as writerState reads
// them now.
func snapshotState(db *DB, w int, p uint64) ([]int, error) {
	var got []int
	for k := range keysPerWriter {
		v, err := db.GetAt(concurrentKey(w, k), p)
		if errors.Is(err, ErrNotFound) {
			got = append(got, -1)
			continue
		}
		if err != nil {
			return nil, err
		}
		var vw, i int
		if _, err := fmt.Sscanf(string(v), "w%d#%d#", &vw, &i); err != nil {
			return nil, fmt.Errorf("writer %d key %d holds %q", w, k, v)
		}
		got = append(got, i)
	}
	return got, nil
}

// stateAfter is the state of a writer's keys after its first c writes: for
// each key, the number of the last write that put it, or -1 when it is
// absent (never written, or deleted).
func stateAfter(deletes []bool, c int) []int {
	st := slices.Repeat([]int{-1}, keysPerWriter)
	for i := range c {
		st[i%keysPerWriter] = i
		if deletes[i] {
			st[i%keysPerWriter] = -1
		}
	}
	return st
}

// writerState reads writer w's keys: for each, the number of the write
// whose value it holds, or -1 when it is absent.
func writerState(t *testing.T, db *DB, w int, desc string) []int {
	var got []int
	for k := range keysPerWriter {
		v, err := db.Get(concurrentKey(w, k))
		if errors.Is(err, ErrNotFound) {
			got = append(got, -1)
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
		got = append(got, i)
	}
	return got
}
