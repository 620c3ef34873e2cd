package blazedb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// open opens a DB in dir on fs with test defaults and checks it against a
// full scan when the test ends.
func open(t testing.TB, fs vfs.FS, dir string, o Options) *DB {
	t.Helper()
	o.FS = fs
	if o.Logger == nil {
		o.Logger = quiet
	}
	db, err := Open(dir, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if !db.closed.Load() {
			if err := db.Check(); err != nil {
				t.Errorf("Check at end of test: %v", err)
			}
			db.Close()
		}
	})
	return db
}

func mustGet(t testing.TB, db *DB, k Key) []byte {
	t.Helper()
	v, err := db.Get(k)
	if err != nil {
		t.Fatalf("Get %v: %v", k, err)
	}
	return v
}

func value(i int, size int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	b := make([]byte, size)
	for j := range b {
		if r.IntN(4) == 0 {
			b[j] = byte(r.Uint32())
		} else {
			b[j] = byte(j / 64)
		}
	}
	return b
}

func TestPutGetDeleteReopen(t *testing.T) {
	for _, c := range []Compression{CompressionNone, CompressionLZ4, CompressionSnappy, CompressionZstd} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			fs := vfstest.NewMem()
			db := open(t, fs, "/db", Options{Compression: c})
			want := map[Key][]byte{}
			for i := 0; i < 200; i++ {
				k := Key{Dim: int32(i % 3), X: int32(i - 100), Z: int32(i*7 - 500)}
				want[k] = value(i, 100+i*37)
				if err := db.Put(k, want[k]); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 200; i += 3 {
				k := Key{Dim: int32(i % 3), X: int32(i - 100), Z: int32(i*7 - 500)}
				if err := db.Delete(k); err != nil {
					t.Fatal(err)
				}
				delete(want, k)
			}
			if err := db.PutNamed("player/alice", []byte("spawn 1 2 3")); err != nil {
				t.Fatal(err)
			}
			verify := func(db *DB) {
				for k, v := range want {
					if got := mustGet(t, db, k); !bytes.Equal(got, v) {
						t.Fatalf("%v: got %d bytes, want %d", k, len(got), len(v))
					}
				}
				if _, err := db.Get(Key{X: 99999}); !errors.Is(err, ErrNotFound) {
					t.Fatalf("missing key: %v", err)
				}
				if _, err := db.Get(Key{Dim: 0, X: -100, Z: -500}); !errors.Is(err, ErrNotFound) {
					t.Fatalf("deleted key: %v", err)
				}
				if v, err := db.GetNamed("player/alice"); err != nil || string(v) != "spawn 1 2 3" {
					t.Fatalf("named: %q %v", v, err)
				}
				if st := db.Stats(); st.Keys != len(want)+1 {
					t.Fatalf("Stats.Keys = %d, want %d", st.Keys, len(want)+1)
				}
			}
			verify(db)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = open(t, fs, "/db", Options{})
			if !db.Recovery().IndexLoaded {
				t.Fatalf("index.dat not used: %s", db.Recovery().IndexProblem)
			}
			verify(db)
			db.Close()
			fs.Remove("/db/index.dat")
			db = open(t, fs, "/db", Options{})
			if db.Recovery().IndexLoaded {
				t.Fatal("index.dat loaded after removal")
			}
			verify(db)
		})
	}
}

// The caller owns what Get returns and may reuse what it passed to Put.
func TestOwnership(t *testing.T) {
	db := open(t, vfstest.NewMem(), "/db", Options{})
	k := Key{X: 1}
	v := []byte("hello world")
	db.Put(k, v)
	v[0] = 'J'
	got := mustGet(t, db, k)
	if string(got) != "hello world" {
		t.Fatalf("Put kept the caller's slice: %q", got)
	}
	got[0] = 'Y'
	if got := mustGet(t, db, k); string(got) != "hello world" {
		t.Fatalf("Get shared the cache's slice: %q", got)
	}
}

// GetAppend appends the value to the caller's slice, from the file (not
// caching it) or from the cache, with every codec, and what it returns
// shares nothing with the engine.
func TestGetAppend(t *testing.T) {
	for _, c := range []Compression{CompressionNone, CompressionLZ4, CompressionZstd} {
		fs := vfstest.NewMem()
		db := open(t, fs, "/db", Options{Compression: c})
		v := value(3, 8<<10)
		if err := db.Put(Key{X: 1}, v); err != nil {
			t.Fatal(err)
		}
		db.Close()
		db = open(t, fs, "/db", Options{Compression: c})
		for _, from := range []string{"file", "file again", "cache"} {
			if from == "cache" {
				mustGet(t, db, Key{X: 1}) // Get caches what it reads
			}
			got, err := db.GetAppend(Key{X: 1}, []byte("prefix"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got[:6]) != "prefix" || !bytes.Equal(got[6:], v) {
				t.Fatalf("codec %d, from the %s: wrong bytes", c, from)
			}
			if _, cached := db.cache.get(appendChunkKey(nil, Key{X: 1})); cached != (from == "cache") {
				t.Fatalf("codec %d, from the %s: cached %v", c, from, cached)
			}
			clear(got)
			if again := mustGet(t, db, Key{X: 1}); !bytes.Equal(again, v) {
				t.Fatalf("codec %d, from the %s: the engine kept the caller's slice", c, from)
			}
			if from == "file" {
				db.cache = newCache(db.opts.CacheBytes) // Get above cached it: start empty
			}
		}
		if _, err := db.GetAppend(Key{X: 2}, nil); !errors.Is(err, ErrNotFound) {
			t.Fatalf("codec %d: missing key: %v", c, err)
		}
	}
}

// ReadNamed reads every named key with a prefix, and only those, with the
// values GetNamed gives: records next to each other, scattered among chunk
// records, larger than a read's gap, in batches, overwritten, and after a
// compaction; fn's error stops it; a damaged record is ErrCorrupt.
func TestReadNamed(t *testing.T) {
	fs := vfstest.NewMem()
	db := open(t, fs, "/db", Options{Compression: CompressionLZ4})
	want := map[string][]byte{}
	for i := range 300 {
		name := fmt.Sprintf("dict/%04x", i)
		v := value(i, 20+i%7*40)
		if i%50 == 0 {
			v = value(i, readGap*3) // wider than a read's gap
		}
		switch {
		case i%3 == 0:
			if err := db.Put(Key{X: int32(i)}, value(i, 6<<10)); err != nil { // scatter
				t.Fatal(err)
			}
			fallthrough
		case i%3 == 1:
			if err := db.PutNamed(name, v); err != nil {
				t.Fatal(err)
			}
		default:
			var b Batch
			b.PutNamed(name, v)
			b.Put(Key{Z: int32(i)}, value(i, 100))
			if err := db.Apply(&b); err != nil {
				t.Fatal(err)
			}
		}
		want[name] = v
		if err := db.PutNamed(fmt.Sprintf("spawn/%d", i), []byte("other")); err != nil {
			t.Fatal(err)
		}
	}
	want["dict/0001"] = []byte("overwritten")
	if err := db.PutNamed("dict/0001", want["dict/0001"]); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		got := map[string][]byte{}
		err := db.ReadNamed("dict/", func(name string, v []byte) error {
			if _, dup := got[name]; dup {
				return fmt.Errorf("%s twice", name)
			}
			got[name] = v
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d names, want %d", when, len(got), len(want))
		}
		for name, v := range want {
			if !bytes.Equal(got[name], v) {
				t.Fatalf("%s: %s has the wrong value", when, name)
			}
			if g, err := db.GetNamed(name); err != nil || !bytes.Equal(g, v) {
				t.Fatalf("%s: GetNamed %s: %v", when, name, err)
			}
		}
	}
	check("written")
	db.Close()
	db = open(t, fs, "/db", Options{Compression: CompressionLZ4})
	check("reopened")
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	check("compacted")
	// Records close together are read together: count the reads of the
	// log while ReadNamed runs over the compacted file.
	db.Close()
	reads := 0
	counting := vfstest.Inject(fs, func(op vfstest.Op, name string) error {
		if op == vfstest.OpRead && filepath.Base(name) == logName {
			reads++
		}
		return nil
	})
	db = open(t, counting, "/db", Options{Compression: CompressionLZ4})
	reads = 0
	if err := db.ReadNamed("dict/", func(string, []byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if reads > len(want)/10 {
		t.Fatalf("%d reads for %d records", reads, len(want))
	}
	t.Logf("%d reads for %d records", reads, len(want))
	stop := errors.New("stop")
	n := 0
	if err := db.ReadNamed("dict/", func(string, []byte) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("fn's error: %v after %d calls", err, n)
	}
	// Damage one record's value in the file: ReadNamed reports it.
	db.mu.RLock()
	e := db.idx.named["dict/0002"]
	db.mu.RUnlock()
	db.Close()
	f, err := fs.OpenReadWrite(filepath.Join("/db", logName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff}, e.off+int64(e.size)-6); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// The index was persisted at Close, so Open finds the damage only
	// when the record is read.
	db, err = Open("/db", Options{FS: fs, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.ReadNamed("dict/", func(string, []byte) error { return nil }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged record: %v", err)
	}
}

// PutShared stores like Put, with every codec, and elides an unchanged
// value like Put.
func TestPutShared(t *testing.T) {
	for _, c := range []Compression{CompressionNone, CompressionLZ4} {
		fs := vfstest.NewMem()
		db := open(t, fs, "/db", Options{Compression: c})
		v := value(1, 8<<10)
		if err := db.PutShared(Key{X: 1}, v); err != nil {
			t.Fatal(err)
		}
		before := db.Stats().AppendBytes
		if err := db.PutShared(Key{X: 1}, bytes.Clone(v)); err != nil {
			t.Fatal(err)
		}
		if db.Stats().AppendBytes != before {
			t.Fatalf("codec %d: an unchanged shared put appended", c)
		}
		if got := mustGet(t, db, Key{X: 1}); !bytes.Equal(got, v) {
			t.Fatalf("codec %d: got a different value", c)
		}
		db.Close()
		db = open(t, fs, "/db", Options{Compression: c})
		if got := mustGet(t, db, Key{X: 1}); !bytes.Equal(got, v) {
			t.Fatalf("codec %d: reopened, got a different value", c)
		}
	}
}

// A slice from GetShared never changes, whatever happens to its key and to
// the cache afterwards: the provider keeps such slices in its column cache.
func TestGetSharedNeverChanges(t *testing.T) {
	for _, c := range []Compression{CompressionNone, CompressionLZ4, CompressionSnappy, CompressionZstd} {
		db := open(t, vfstest.NewMem(), "/db", Options{Compression: c, CacheBytes: 64 << 10})
		const n = 32
		held := make([][]byte, n)
		for i := range n {
			if err := db.Put(Key{X: int32(i)}, value(i, 4<<10)); err != nil {
				t.Fatal(err)
			}
			// Twice: once from the disk, once from the cache.
			for range 2 {
				v, err := db.GetShared(Key{X: int32(i)})
				if err != nil {
					t.Fatal(err)
				}
				held[i] = v
			}
		}
		// Overwrite, delete, evict and compact.
		for i := range n {
			k := Key{X: int32(i)}
			if i%2 == 0 {
				db.Put(k, value(i+1000, 4<<10))
			} else {
				db.Delete(k)
			}
			db.GetShared(Key{X: int32(i + n)})
		}
		if err := db.Compact(); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if !bytes.Equal(held[i], value(i, 4<<10)) {
				t.Fatalf("codec %d: value %d changed after it was handed out", c, i)
			}
		}
		db.Close()
	}
}
func TestUnchangedWriteAppendsNothing(t *testing.T) {
	db := open(t, vfstest.NewMem(), "/db", Options{})
	k := Key{X: 3, Z: 4}
	v := value(1, 5000)
	if err := db.Put(k, v); err != nil {
		t.Fatal(err)
	}
	before := db.Stats().LogBytes
	for i := 0; i < 10; i++ {
		if err := db.Put(k, append([]byte(nil), v...)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Delete(Key{X: 1000}); err != nil {
		t.Fatal(err)
	}
	st := db.Stats()
	if st.LogBytes != before || st.Elided != 11 {
		t.Fatalf("log grew %d -> %d, elided %d", before, st.LogBytes, st.Elided)
	}
	// A changed value with the same length is written.
	v2 := append([]byte(nil), v...)
	v2[100]++
	db.Put(k, v2)
	if db.Stats().LogBytes == before {
		t.Fatal("changed value was elided")
	}
	// Elision must also hold when the value is not cached.
	db.cache = nil
	before = db.Stats().LogBytes
	db.Put(k, v2)
	if db.Stats().LogBytes != before {
		t.Fatal("unchanged value appended when not cached")
	}
}

// readPause holds the first read of chunks.dat made once armed: it closes
// reached and waits for release, so a test can act in the middle of a
// read.
type readPause struct {
	armed            atomic.Bool
	reached, release chan struct{}
}

func (p *readPause) fs(under vfs.FS) vfs.FS {
	return vfstest.Inject(under, func(op vfstest.Op, name string) error {
		if op == vfstest.OpRead && filepath.Base(name) == logName && p.armed.CompareAndSwap(true, false) {
			close(p.reached)
			<-p.release
		}
		return nil
	})
}

// A put found equal to the stored value is compared before the write lock
// is taken; if another writer changes the key meanwhile, the put must be
// written after all, or the later put would be lost to the earlier one.
func TestElisionRecheckedUnderWriteLock(t *testing.T) {
	pause := &readPause{reached: make(chan struct{}), release: make(chan struct{})}
	db := open(t, pause.fs(vfstest.NewMem()), "/db", Options{CacheBytes: -1}) // the comparison reads the log
	k := Key{X: 1}
	v1, v2 := value(1, 3000), value(2, 3000)
	if err := db.Put(k, v1); err != nil {
		t.Fatal(err)
	}
	pause.armed.Store(true)
	done := make(chan error)
	go func() { done <- db.Put(k, v1) }() // pauses while comparing with v1
	<-pause.reached
	if err := db.Put(k, v2); err != nil {
		t.Fatal(err)
	}
	close(pause.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, err := db.Get(k); err != nil || !bytes.Equal(got, v1) {
		t.Fatalf("after put v1, put v2, put v1: got the value of %d bytes, v1 %v (%v)", len(got), bytes.Equal(got, v1), err)
	}
}

// A read that misses the cache adds what it read only if the key still
// holds that record: a write that lands while the read is at the file must
// not be hidden behind the older value in the cache.
func TestStaleReadNeverCached(t *testing.T) {
	pause := &readPause{reached: make(chan struct{}), release: make(chan struct{})}
	fs := pause.fs(vfstest.NewMem())
	k := Key{X: 2}
	v1, v2 := value(1, 3000), value(2, 3000)
	db := open(t, fs, "/db", Options{})
	if err := db.Put(k, v1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = open(t, fs, "/db", Options{}) // nothing cached
	pause.armed.Store(true)
	done := make(chan []byte)
	go func() { v, _ := db.Get(k); done <- v }() // pauses reading v1
	<-pause.reached
	if err := db.Put(k, v2); err != nil {
		t.Fatal(err)
	}
	close(pause.release)
	if v := <-done; !bytes.Equal(v, v1) {
		t.Fatal("the paused read did not return the value it read")
	}
	if got := mustGet(t, db, k); !bytes.Equal(got, v2) {
		t.Fatal("a read that began before the put left the old value in the cache")
	}
}

// A batch with Sync set is durable on return in the modes that do not
// sync each write, and survives a power loss that keeps nothing unsynced;
// one without it does not, and Reset clears Sync.
func TestBatchSync(t *testing.T) {
	for _, mode := range []Durability{DurabilityFast, DurabilityBalanced} {
		fs := vfstest.NewMem()
		db := open(t, fs, "/db", Options{Durability: mode, SyncInterval: time.Hour})
		var b Batch
		b.Put(Key{X: 1}, []byte("synced"))
		b.Sync = true
		if err := db.Apply(&b); err != nil {
			t.Fatal(err)
		}
		b.Reset()
		if b.Sync {
			t.Fatal("Reset left Sync set")
		}
		b.Put(Key{X: 2}, []byte("not synced"))
		if err := db.Apply(&b); err != nil {
			t.Fatal(err)
		}
		after := open(t, fs.CrashClone(nil, 0), "/db", Options{})
		if v, err := after.Get(Key{X: 1}); err != nil || string(v) != "synced" {
			t.Fatalf("%v: the synced batch after a power loss: %q, %v", mode, v, err)
		}
		if _, err := after.Get(Key{X: 2}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%v: the unsynced batch survived a power loss that keeps nothing unsynced (%v)", mode, err)
		}
	}
}

// A batch that puts the value a key already holds, in a record not yet
// durable, leaves that put out; a power loss that keeps the batch must not
// then find it half applied, so the earlier record survives with it.
func TestBatchElisionKeepsAtomicity(t *testing.T) {
	var kept, lost int
	for seed := range uint64(200) {
		fs := vfstest.NewMem()
		db := open(t, fs, "/db", Options{Durability: DurabilityFast})
		if err := db.Put(Key{X: 1}, []byte("a")); err != nil {
			t.Fatal(err)
		}
		var b Batch
		b.Put(Key{X: 1}, []byte("a")) // what it holds, unsynced
		b.Put(Key{X: 2}, []byte("b"))
		if err := db.Apply(&b); err != nil {
			t.Fatal(err)
		}
		after := open(t, fs.CrashClone(rand.New(rand.NewPCG(seed, 1)), 0.5), "/db", Options{})
		y, yerr := after.Get(Key{X: 2})
		x, xerr := after.Get(Key{X: 1})
		if yerr == nil && string(y) == "b" {
			kept++
			if xerr != nil || string(x) != "a" {
				t.Fatalf("seed %d: the batch survived without its put of the value the key held (%q, %v)", seed, x, xerr)
			}
		} else {
			lost++
		}
	}
	if kept == 0 || lost == 0 {
		t.Fatalf("the crashes kept the batch %d times and lost it %d times; the test needs both", kept, lost)
	}
}

func TestBatchAtomicAndDedupe(t *testing.T) {
	fs := vfstest.NewMem()
	db := open(t, fs, "/db", Options{})
	db.Put(Key{X: 9}, []byte("old"))
	var b Batch
	b.Put(Key{X: 1}, []byte("a"))
	b.PutNamed("n", []byte("named"))
	b.Put(Key{X: 1}, []byte("a2"))
	b.Delete(Key{X: 9})
	b.Put(Key{X: 2, Dim: 1}, []byte("b"))
	if err := db.Apply(&b); err != nil {
		t.Fatal(err)
	}
	check := func(db *DB) {
		if v := mustGet(t, db, Key{X: 1}); string(v) != "a2" {
			t.Fatalf("X1 = %q", v)
		}
		if _, err := db.Get(Key{X: 9}); !errors.Is(err, ErrNotFound) {
			t.Fatal("delete in batch lost")
		}
		if v, _ := db.GetNamed("n"); string(v) != "named" {
			t.Fatalf("named = %q", v)
		}
	}
	check(db)
	db.Close()
	fs.Remove("/db/index.dat")
	db = open(t, fs, "/db", Options{})
	check(db)

	// A named record deleted in a batch, beside a put, stays deleted.
	var del Batch
	del.DeleteNamed("n")
	del.Put(Key{X: 3}, []byte("c"))
	if del.Len() != 2 {
		t.Fatalf("a batch of 2 operations has Len %d", del.Len())
	}
	if err := db.Apply(&del); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = open(t, fs, "/db", Options{})
	if _, err := db.GetNamed("n"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("named record deleted in a batch: %v", err)
	}

	var bad Batch
	bad.Put(Key{X: 50}, []byte("x"))
	bad.PutNamed("", []byte("y"))
	db2 := open(t, vfstest.NewMem(), "/db2", Options{})
	if err := db2.Apply(&bad); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("bad batch: %v", err)
	}
	if ok, _ := db2.Has(Key{X: 50}); ok {
		t.Fatal("part of an invalid batch was written")
	}
}

func TestKeysInMortonOrder(t *testing.T) {
	db := open(t, vfstest.NewMem(), "/db", Options{})
	for x := int32(-8); x < 8; x++ {
		for z := int32(-8); z < 8; z++ {
			db.Put(Key{X: x, Z: z}, []byte{1})
			db.Put(Key{Dim: 2, X: x, Z: z}, []byte{1})
		}
	}
	keys, err := db.Keys(Area{MinX: -2, MinZ: -3, MaxX: 3, MaxZ: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 6*5 {
		t.Fatalf("%d keys, want 30", len(keys))
	}
	for i, k := range keys {
		if k.Dim != 0 || k.X < -2 || k.X > 3 || k.Z < -3 || k.Z > 1 {
			t.Fatalf("key %v outside area", k)
		}
		if i > 0 && keys[i-1].code() >= k.code() {
			t.Fatal("not in Morton order")
		}
	}
}

func TestCloseIdempotentAndErrClosed(t *testing.T) {
	db := open(t, vfstest.NewMem(), "/db", Options{})
	db.Put(Key{}, []byte("x"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for name, err := range map[string]error{
		"Put":     db.Put(Key{}, []byte("y")),
		"Delete":  db.Delete(Key{}),
		"Sync":    db.Sync(),
		"Compact": db.Compact(),
		"Check":   db.Check(),
		"Get":     func() error { _, err := db.Get(Key{}); return err }(),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
}

// A database opened read-write and only read closes without writing:
// index.dat already describes the whole log. Once anything is appended,
// Close writes index.dat again, and the next Open scans nothing.
func TestCloseWritesIndexOnlyWhenStale(t *testing.T) {
	mem := vfstest.NewMem()
	var writes []string // mutating operations on anything but LOCK
	fs := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
		if op != vfstest.OpOpen && op != vfstest.OpRead && filepath.Base(name) != lockName {
			writes = append(writes, fmt.Sprintf("%d %s", op, filepath.Base(name)))
		}
		return nil
	})
	db := open(t, fs, "/db", Options{})
	for i := range 10 {
		db.Put(Key{X: int32(i)}, value(i, 300))
	}
	db.Close()
	reopen := func() *DB {
		t.Helper()
		writes = nil
		db := open(t, fs, "/db", Options{})
		if rec := db.Recovery(); !rec.IndexLoaded || rec.ScannedBytes != 0 {
			t.Fatalf("recovery %+v: index.dat did not cover the log", rec)
		}
		return db
	}
	closed := func(db *DB) []string {
		t.Helper()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return writes
	}

	db = reopen()
	mustGet(t, db, Key{X: 3})
	db.Put(Key{X: 4}, value(4, 300)) // the value it holds: appends nothing
	if w := closed(db); len(w) != 0 {
		t.Fatalf("open, read and close wrote: %v", w)
	}
	db = reopen()
	db.Put(Key{X: 4}, value(40, 300))
	if w := closed(db); !slices.Contains(w, fmt.Sprintf("%d %s", vfstest.OpRename, indexName)) {
		t.Fatalf("close after a write did not replace index.dat: %v", w)
	}
	db = reopen()
	if got := mustGet(t, db, Key{X: 4}); !bytes.Equal(got, value(40, 300)) {
		t.Fatal("the write before close is lost")
	}
	// Compaction writes index.dat for the new log; Close need not again.
	db.Put(Key{X: 5}, value(50, 300))
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	writes = nil
	if w := closed(db); len(w) != 0 {
		t.Fatalf("close right after compaction wrote: %v", w)
	}
	db = reopen()
	if got := mustGet(t, db, Key{X: 5}); !bytes.Equal(got, value(50, 300)) {
		t.Fatal("the write before compaction is lost")
	}
	db.Close()
}

func TestLockExcludesSecondOpen(t *testing.T) {
	dir := t.TempDir()
	db := open(t, vfs.Default, dir, Options{})
	if _, err := Open(dir, Options{Logger: quiet}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	if _, err := Open(dir, Options{Logger: quiet, ReadOnly: true}); !errors.Is(err, ErrLocked) {
		t.Fatalf("read-only open beside a writer: %v", err)
	}
	db.Close()
	db2 := open(t, vfs.Default, dir, Options{})
	db2.Close()
}

// A new database's directories are made durable before Open returns, and
// a failure to make or sync any of them fails Open; an Open tried again
// after it finishes the job.
func TestOpenMakesNewDirectoriesDurable(t *testing.T) {
	steps := []struct {
		op   vfstest.Op
		name string
	}{
		{vfstest.OpMkdir, "/w/db"},
		{vfstest.OpSyncDir, "/"},     // /w, made by Open
		{vfstest.OpSyncDir, "/w"},    // /w/db, made by Open, and its entry once more on creation
		{vfstest.OpSyncDir, "/w/db"}, // chunks.dat
	}
	for _, step := range steps {
		mem := vfstest.NewMem()
		boom := errors.New("injected")
		failed := false
		fsys := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
			if op == step.op && name == step.name && !failed {
				failed = true
				return boom
			}
			return nil
		})
		if _, err := Open("/w/db", Options{FS: fsys, Logger: quiet}); !errors.Is(err, boom) {
			t.Fatalf("%v %s failed: Open returned %v", step.op, step.name, err)
		}
		db := open(t, fsys, "/w/db", Options{Durability: DurabilitySafe})
		if err := db.Put(Key{X: 1}, []byte("durable")); err != nil {
			t.Fatal(err)
		}
		after := open(t, mem.CrashClone(nil, 0), "/w/db", Options{})
		if got, err := after.Get(Key{X: 1}); string(got) != "durable" {
			t.Fatalf("after %v %s failed once, a power loss: %q, %v", step.op, step.name, got, err)
		}
		after.Close()
		db.Close()
	}
	// A directory someone else made and never synced becomes durable too,
	// though the first try fails to sync it.
	mem := vfstest.NewMem()
	mem.MkdirAll("/made", 0o755)
	failed := false
	fsys := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
		if op == vfstest.OpSyncDir && name == "/" && !failed {
			failed = true
			return errors.New("injected")
		}
		return nil
	})
	if _, err := Open("/made", Options{FS: fsys, Logger: quiet}); err == nil {
		t.Fatal("Open succeeded without syncing the directory's entry")
	}
	db := open(t, fsys, "/made", Options{Durability: DurabilitySafe})
	db.Put(Key{X: 1}, []byte("durable"))
	after := open(t, mem.CrashClone(nil, 0), "/made", Options{})
	if got, err := after.Get(Key{X: 1}); string(got) != "durable" {
		t.Fatalf("in a directory made before Open, a power loss: %q, %v", got, err)
	}
	after.Close()
	db.Close()
}

func TestRefusesForeignDirectoryAndNewerVersion(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"CURRENT", "MANIFEST-000001", "000003.log"} {
		os.WriteFile(filepath.Join(dir, n), []byte("leveldb"), 0o644)
	}
	_, err := Open(dir, Options{Logger: quiet})
	if !errors.Is(err, ErrNotBlaze) {
		t.Fatalf("LevelDB directory: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Fatalf("Open changed a foreign directory: %d entries", len(entries))
	}

	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, logName), []byte("not a blaze file at all, but long enough"), 0o644)
	if _, err := Open(dir, Options{Logger: quiet}); !errors.Is(err, ErrNotBlaze) {
		t.Fatalf("foreign chunks.dat: %v", err)
	}

	dir = t.TempDir()
	h := fileHeader{generation: 1}.encode()
	h[8] = logVersion + 1
	os.WriteFile(filepath.Join(dir, logName), h, 0o644)
	_, err = Open(dir, Options{Logger: quiet})
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("newer version: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, lockName)); err == nil {
		t.Fatal("Open created LOCK in a directory it refused")
	}
}

func TestReadOnlyChangesNothing(t *testing.T) {
	fs := vfstest.NewMem()
	db := open(t, fs, "/db", Options{})
	for i := 0; i < 10; i++ {
		db.Put(Key{X: int32(i)}, value(i, 300))
	}
	db.Close()
	log, _ := fs.ReadFile("/db/chunks.dat")
	fs.WriteFile("/db/chunks.dat", append(log, 1, 2, 3, 4, 5)) // a torn tail
	ops := fs.Ops()
	ro := open(t, fs, "/db", Options{ReadOnly: true})
	if got := mustGet(t, ro, Key{X: 3}); !bytes.Equal(got, value(3, 300)) {
		t.Fatal("read-only read wrong")
	}
	if err := ro.Put(Key{}, []byte("x")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only Put: %v", err)
	}
	if ro.Recovery().TornBytes != 5 {
		t.Fatalf("torn bytes %d", ro.Recovery().TornBytes)
	}
	ro.Close()
	if fs.Ops() != ops {
		t.Fatalf("read-only open made %d mutating operations", fs.Ops()-ops)
	}
	if after, _ := fs.ReadFile("/db/chunks.dat"); len(after) != len(log)+5 {
		t.Fatal("read-only open cut the tail")
	}
}

func TestOptionsValidated(t *testing.T) {
	for _, o := range []Options{{Durability: 9}, {CompactGarbageRatio: 1.5}, {CompactGarbageRatio: -0.5}, {Compression: 77},
		{SyncInterval: -1}, {SyncBytes: -1}, {CompactMinBytes: -1}} {
		if _, err := Open(t.TempDir(), o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	for _, d := range []Durability{DurabilityBalanced, DurabilityFast, DurabilitySafe, DurabilitySafeBatch} {
		if got, err := ParseDurability(d.String()); err != nil || got != d {
			t.Errorf("ParseDurability(%q) = %v, %v", d.String(), got, err)
		}
	}
	if _, err := ParseDurability("sometimes"); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("ParseDurability of an unknown name: %v", err)
	}
	o := Options{}
	db, err := Open(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if o != (Options{}) {
		t.Fatal("Open modified the caller's Options")
	}
}
