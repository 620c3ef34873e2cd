package blazedb

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// TestConcurrentStress runs readers, writers, batches, compactions and
// syncs at once, then closes under them; run it with -race. Every error
// must be ErrClosed (after Close) or nothing; the final state must match
// the last write of each writer's own keys.
func TestConcurrentStress(t *testing.T) {
	fs := vfstest.NewMem()
	db, err := Open("/db", Options{FS: fs, Logger: quiet, CompactMinBytes: 64 << 10, CompactGarbageRatio: 0.3, CacheBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 4
	stop := make(chan struct{})
	var wg sync.WaitGroup
	last := make([]map[Key]string, writers)
	fail := func(err error) {
		if err != nil && !errors.Is(err, ErrClosed) {
			t.Error(err)
		}
	}
	for w := 0; w < writers; w++ {
		last[w] = map[Key]string{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := Key{Dim: int32(w % 3), X: int32(w), Z: int32(i % 40)}
				v := fmt.Sprintf("w%d-%d-%s", w, i, strings.Repeat("s", i%900))
				var err error
				if i%7 == 0 {
					var b Batch
					b.Put(k, []byte(v))
					b.PutNamed(fmt.Sprint("w", w), []byte(v))
					err = db.Apply(&b)
				} else {
					err = db.Put(k, []byte(v))
				}
				if err != nil {
					fail(err)
					return
				}
				last[w][k] = v
			}
		}()
	}
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := Key{Dim: int32(i % 3), X: int32(i % writers), Z: int32(i % 40)}
				v, err := db.Get(k)
				if err != nil && !errors.Is(err, ErrNotFound) {
					fail(err)
					return
				}
				if err == nil && !strings.HasPrefix(string(v), fmt.Sprintf("w%d-", k.X)) {
					t.Errorf("%v holds %.20q", k, v)
				}
				db.Keys(Area{Dim: 0, MinX: -1, MaxX: 5, MinZ: 0, MaxZ: 40})
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			fail(db.Compact())
			fail(db.Sync())
			db.Stats()
			time.Sleep(time.Millisecond)
		}
	}()
	time.Sleep(700 * time.Millisecond)
	// Close while everything runs, then stop the goroutines.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	db2, err := Open("/db", Options{FS: fs, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if err := db2.Check(); err != nil {
		t.Fatal(err)
	}
	for w := range last {
		for k, v := range last[w] {
			got, err := db2.Get(k)
			if err != nil || string(got) != v {
				t.Fatalf("%v: %.30q %v, want %.30q", k, got, err, v)
			}
		}
	}
}

// Online compaction reclaims garbage, keeps every value and lets writes
// land while it runs.
func TestCompactionReclaimsAndKeepsWrites(t *testing.T) {
	fs := vfstest.NewMem()
	// History off: every overwritten version is garbage.
	db := open(t, fs, "/db", Options{DisableAutoCompaction: true, History: -1})
	for round := 0; round < 5; round++ {
		for i := 0; i < 100; i++ {
			db.Put(Key{X: int32(i % 10), Z: int32(i / 10)}, value(round*1000+i, 2000))
		}
	}
	before := db.Stats()
	if before.GarbageBytes < 3*before.LiveBytes {
		t.Fatalf("expected garbage: %+v", before)
	}
	during := 0
	db.knobs.compactCopied = func() {
		for i := 0; i < 20; i++ {
			db.Put(Key{X: int32(i % 10), Z: int32(i / 10)}, value(9000+i, 2000))
			during++
		}
		var b Batch
		b.Delete(Key{X: 5, Z: 5})
		b.PutNamed("during", []byte("compaction"))
		db.Apply(&b)
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	after := db.Stats()
	if after.Generation != before.Generation+1 {
		t.Fatal("generation did not advance")
	}
	if after.LogBytes > after.LiveBytes+after.LiveBytes/3+fileHeaderSize {
		t.Fatalf("compaction left %d bytes for %d live", after.LogBytes, after.LiveBytes)
	}
	check := func(db *DB) {
		for i := 0; i < 100; i++ {
			k := Key{X: int32(i % 10), Z: int32(i / 10)}
			want := value(4000+i, 2000)
			if i < 20 {
				want = value(9000+i, 2000)
			}
			if k == (Key{X: 5, Z: 5}) {
				if _, err := db.Get(k); !errors.Is(err, ErrNotFound) {
					t.Fatal("delete during compaction lost")
				}
				continue
			}
			if got := mustGet(t, db, k); string(got) != string(want) {
				t.Fatalf("%v wrong after compaction", k)
			}
		}
		if v, _ := db.GetNamed("during"); string(v) != "compaction" {
			t.Fatal("batch during compaction lost")
		}
	}
	check(db)
	db.Close()
	db = open(t, fs, "/db", Options{})
	if !db.Recovery().IndexLoaded {
		t.Fatalf("index.dat after compaction unusable: %s", db.Recovery().IndexProblem)
	}
	check(db)
}

// Compaction writes index.dat after releasing the write lock: a store
// made while that file is being written (two fsyncs and a rename) returns
// without waiting for it, and Open after a power loss replays it from the
// log past what index.dat covers.
func TestCompactionWritesIndexOutsideWriteLock(t *testing.T) {
	mem := vfstest.NewMem()
	var armed atomic.Bool
	blocked, release := make(chan struct{}), make(chan struct{})
	fs := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
		if op == vfstest.OpCreate && filepath.Base(name) == indexName+vfs.TempSuffix && armed.CompareAndSwap(true, false) {
			close(blocked)
			<-release
		}
		return nil
	})
	db := open(t, fs, "/db", Options{DisableAutoCompaction: true, Durability: DurabilitySafe})
	for i := range 200 {
		db.Put(Key{X: int32(i % 20)}, value(i, 1000))
	}
	armed.Store(true)
	compacted := make(chan error)
	go func() { compacted <- db.Compact() }()
	<-blocked
	stored := make(chan error)
	go func() { stored <- db.Put(Key{X: 99}, value(99, 1000)) }()
	select {
	case err := <-stored:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("a store waited for compaction's index.dat")
	}
	close(release)
	if err := <-compacted; err != nil {
		t.Fatal(err)
	}
	// Power loss: only what was synced survives (DurabilitySafe synced the
	// store); index.dat covers the compacted log without the store.
	db2, err := Open("/db", Options{FS: mem.CrashClone(rand.New(rand.NewPCG(5, 6)), 0), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if rec := db2.Recovery(); !rec.IndexLoaded || rec.ScannedBytes <= 0 {
		t.Fatalf("recovery %+v: index.dat should cover the compacted log and leave the store to the scan", rec)
	}
	if got := mustGet(t, db2, Key{X: 99}); !bytes.Equal(got, value(99, 1000)) {
		t.Fatal("the store made during compaction is lost")
	}
	for i := 180; i < 200; i++ {
		if got := mustGet(t, db2, Key{X: int32(i % 20)}); !bytes.Equal(got, value(i, 1000)) {
			t.Fatalf("%d lost in compaction", i)
		}
	}
}

// Auto compaction starts by itself past the garbage ratio.
func TestAutoCompaction(t *testing.T) {
	db := open(t, vfstest.NewMem(), "/db", Options{CompactMinBytes: 32 << 10, CompactGarbageRatio: 0.5, History: -1})
	for i := 0; i < 400; i++ {
		db.Put(Key{X: int32(i % 4)}, value(i, 1000))
	}
	deadline := time.Now().Add(5 * time.Second)
	for db.Stats().Compactions == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if db.Stats().Compactions == 0 {
		t.Fatal("no automatic compaction")
	}
}

// The engine stores bytes; it must never import Dragonfly.
func TestNoDragonflyDependency(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v: %s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "df-mc") || strings.Contains(dep, "gophertunnel") {
			t.Fatalf("blazedb depends on %s", dep)
		}
	}
}

// With ExternalMaintenance the DB starts no goroutine, and Maintain does
// the periodic sync and the automatic compaction.
func TestExternalMaintenance(t *testing.T) {
	before := runtime.NumGoroutine()
	db := open(t, vfstest.NewMem(), "/db", Options{ExternalMaintenance: true, CompactMinBytes: 1, CompactGarbageRatio: 0.3, SyncInterval: 2 * time.Millisecond, History: -1})
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines started", n-before)
	}
	for i := 0; i < 20; i++ {
		db.Put(Key{X: int32(i % 2)}, value(i, 500))
	}
	if db.Stats().Fsyncs != 0 || db.Stats().Compactions != 0 {
		t.Fatal("work done without Maintain")
	}
	time.Sleep(time.Millisecond) // the writes are SyncInterval/2 old
	if err := db.Maintain(); err != nil {
		t.Fatal(err)
	}
	st := db.Stats()
	if st.Fsyncs == 0 || st.Compactions != 1 || st.GarbageBytes != 0 {
		t.Fatalf("after Maintain: %+v", st)
	}
}

// Maintain fsyncs in DurabilityBalanced once the oldest unsynced write is
// SyncInterval/2 old, not at every call: a pool maintaining many databases
// often would otherwise fsync each of them at every visit.
func TestMaintainSyncsByAge(t *testing.T) {
	const interval = 400 * time.Millisecond
	db := open(t, vfstest.NewMem(), "/db", Options{ExternalMaintenance: true, SyncInterval: interval, DisableAutoCompaction: true})
	start := time.Now()
	db.Put(Key{X: 1}, value(1, 500))
	db.Maintain()
	if time.Since(start) < interval/2 && db.Stats().Fsyncs != 0 {
		t.Fatal("Maintain synced a write younger than SyncInterval/2")
	}
	time.Sleep(interval / 2)
	db.Maintain()
	if db.Stats().Fsyncs != 1 {
		t.Fatalf("%d fsyncs after the write aged past SyncInterval/2, want 1", db.Stats().Fsyncs)
	}
	db.Maintain()
	if db.Stats().Fsyncs != 1 {
		t.Fatal("Maintain synced with nothing unsynced")
	}
	// The age counts from the first write after the last sync.
	start = time.Now()
	db.Put(Key{X: 2}, value(2, 500))
	db.Maintain()
	if time.Since(start) < interval/2 && db.Stats().Fsyncs != 1 {
		t.Fatal("Maintain synced a write younger than SyncInterval/2 that followed a sync")
	}
}

// In DurabilityBalanced, SyncBytes written without a sync start one however
// young they are: at once with ExternalMaintenance (there is no goroutine
// to hand it to), soon after on the background goroutine.
func TestBalancedSyncsBySize(t *testing.T) {
	for _, external := range []bool{false, true} {
		t.Run(fmt.Sprint("external=", external), func(t *testing.T) {
			db := open(t, vfstest.NewMem(), "/db", Options{SyncInterval: time.Hour, SyncBytes: 64 << 10, Compression: CompressionNone,
				ExternalMaintenance: external, DisableAutoCompaction: true})
			base := db.Stats().Fsyncs
			db.Put(Key{X: 0}, value(0, 5000))
			if n := db.Stats().Fsyncs; n != base {
				t.Fatalf("%d fsyncs after 5,000 bytes, want %d", n, base)
			}
			for i := 1; i < 14; i++ { // 70,000 bytes in all
				if err := db.Put(Key{X: int32(i)}, value(i, 5000)); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for !external && db.Stats().Fsyncs == base && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if n := db.Stats().Fsyncs; n == base {
				t.Fatal("no fsync after SyncBytes were written")
			}
		})
	}
}

// A compaction of a log larger than its write buffer, holding a value
// larger than the buffer, with more than catchUpFinal written while it
// copies (so the tail is caught up in rounds before the final copy under
// the write lock) and a writer going on throughout, keeps every value:
// after it, after reopening with its index.dat, and after a full scan.
func TestCompactionLargeLogWithCatchUp(t *testing.T) {
	fs := vfstest.NewMem()
	db := open(t, fs, "/db", Options{DisableAutoCompaction: true})
	rnd := rand.New(rand.NewPCG(11, 12))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return b
	}
	want := map[Key][]byte{}
	put := func(k Key, v []byte) {
		t.Helper()
		if err := db.Put(k, v); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	for round := range 2 { // the first round is garbage after the second
		for i := range 200 {
			put(Key{X: int32(i)}, noise(16<<10+round))
		}
	}
	put(Key{X: -1}, noise(3<<20)) // larger than the appender's buffer
	if live := db.Stats().LiveBytes; live < 4<<20 {
		t.Fatalf("%d live bytes: the log must be several write buffers long", live)
	}

	gen := db.Stats().Generation
	var mu sync.Mutex // guards want for the writer below
	stop, done := make(chan struct{}), make(chan struct{})
	db.knobs.compactCopied = func() {
		// More than catchUpFinal at once: the compaction copies it in a
		// round of its own before taking the write lock.
		for i := range 40 {
			put(Key{X: int32(i), Z: 1}, noise(16<<10))
			put(Key{X: int32(i)}, noise(16<<10)) // overwrites a copied key
		}
		if err := db.Delete(Key{X: 7}); err != nil {
			t.Fatal(err)
		}
		delete(want, Key{X: 7})
		go func() { // and writes go on while the rounds run
			defer close(done)
			w := rand.New(rand.NewPCG(13, 14))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				k, v := Key{X: int32(w.IntN(50)), Z: 2}, value(n, 8<<10)
				mu.Lock()
				err := db.Put(k, v)
				want[k] = v
				mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-done
	db.knobs.compactCopied = nil
	if st := db.Stats(); st.Generation != gen+1 || st.GarbageBytes > st.LogBytes/2 {
		t.Fatalf("after compaction: %+v", st)
	}
	check := func(db *DB, when string) {
		t.Helper()
		if n := db.Stats().ChunkKeys; n != len(want) {
			t.Fatalf("%s: %d keys, want %d", when, n, len(want))
		}
		for k, v := range want {
			if got, err := db.Get(k); err != nil || !bytes.Equal(got, v) {
				t.Fatalf("%s: %v is wrong (%d bytes, %v), want %d bytes", when, k, len(got), err, len(v))
			}
		}
		if err := db.Check(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
	}
	check(db, "after compaction")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, fs, "/db", Options{DisableAutoCompaction: true})
	if !db.Recovery().IndexLoaded {
		t.Fatalf("index.dat unusable: %s", db.Recovery().IndexProblem)
	}
	check(db, "reopened with index.dat")
	db.Close()
	if err := fs.Remove("/db/" + indexName); err != nil {
		t.Fatal(err)
	}
	db = open(t, fs, "/db", Options{DisableAutoCompaction: true})
	check(db, "reopened by a scan")
}

// Where a rename cannot replace an open file (Windows), compaction renames
// the open log aside and the new one into its place; the aside file goes
// once its last reader is done. A crash between the two renames leaves no
// chunks.dat, and Open puts the aside log back.
func TestCompactionOnWindowsRenamesTheLogAside(t *testing.T) {
	fs := vfstest.NewMem()
	fs.SetWindows(true)
	db := open(t, fs, "/db", Options{DisableAutoCompaction: true})
	for i := 0; i < 200; i++ {
		db.Put(Key{X: int32(i % 20)}, value(i, 1000))
	}
	want := func(db *DB) {
		t.Helper()
		for x := 0; x < 20; x++ {
			if got := mustGet(t, db, Key{X: int32(x)}); string(got) != string(value(180+x, 1000)) {
				t.Fatalf("key %d wrong", x)
			}
		}
	}
	// A reader still holds the old log when the new one is installed.
	db.mu.RLock()
	held := db.log
	held.refs.Add(1)
	db.mu.RUnlock()
	aside := asideName(held.gen)
	if err := db.Compact(); err != nil {
		t.Fatalf("compact: %v", err)
	}
	if names, _ := fs.List("/db"); !slices.Contains(names, aside) || !slices.Contains(names, logName) {
		t.Fatalf("while the old log is read: %v", names)
	}
	want(db)
	held.refs.Done()
	db.Close()
	if names, _ := fs.List("/db"); slices.Contains(names, aside) {
		t.Fatalf("the aside log outlived its readers: %v", names)
	}

	// The state of a crash between the renames: the log aside, a complete
	// new log not yet in its place.
	db = open(t, fs, "/db", Options{})
	gen := db.Stats().Generation
	db.Close()
	aside = asideName(gen)
	if err := fs.Rename("/db/"+logName, "/db/"+aside); err != nil {
		t.Fatal(err)
	}
	fs.WriteFile("/db/"+compactName, []byte("never installed"))
	if !Exists("/db", Options{FS: fs}) {
		t.Fatal("Exists misses a database whose log is aside")
	}
	if _, err := Open("/db", Options{FS: fs, Logger: quiet, ReadOnly: true}); err == nil || !strings.Contains(err.Error(), aside) {
		t.Fatalf("read-only Open of a log aside: %v", err)
	}
	db = open(t, fs, "/db", Options{})
	want(db)
	db.Close()
	if names, _ := fs.List("/db"); slices.Contains(names, aside) || slices.Contains(names, compactName) || !slices.Contains(names, logName) {
		t.Fatalf("after Open put the log back: %v", names)
	}
}
