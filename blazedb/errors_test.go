package blazedb

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// faults injects an error into one kind of operation on one file while
// armed.
type faults struct {
	armed atomic.Bool
	op    vfstest.Op
	file  string
	err   error
}

func (f *faults) fn(op vfstest.Op, name string) error {
	if f.armed.Load() && op == f.op && filepath.Base(name) == f.file {
		return f.err
	}
	return nil
}

func TestDiskFullOnWrite(t *testing.T) {
	mem := vfstest.NewMem()
	f := &faults{op: vfstest.OpWrite, file: logName, err: syscall.ENOSPC}
	fs := vfstest.Inject(mem, f.fn)
	db := open(t, fs, "/db", Options{Durability: DurabilitySafe})
	for i := 0; i < 10; i++ {
		if err := db.Put(Key{X: int32(i)}, value(i, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	f.armed.Store(true)
	err := db.Put(Key{X: 100}, value(100, 1000))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Put on a full disk: %v", err)
	}
	var b Batch
	b.Put(Key{X: 101}, []byte("a"))
	b.Put(Key{X: 102}, []byte("b"))
	if err := db.Apply(&b); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Apply on a full disk: %v", err)
	}
	if ok, _ := db.Has(Key{X: 100}); ok {
		t.Fatal("failed write is visible")
	}
	// Space comes back: the DB works on, and the half-written record was cut.
	f.armed.Store(false)
	if err := db.Put(Key{X: 103}, []byte("after")); err != nil {
		t.Fatalf("Put after space returned: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	mem.Remove("/db/index.dat")
	db = open(t, mem, "/db", Options{})
	if r := db.Recovery(); len(r.Corrupt) != 0 || r.TornBytes != 0 {
		t.Fatalf("a failed write left damage: %+v", r)
	}
	for i := 0; i < 10; i++ {
		if got := mustGet(t, db, Key{X: int32(i)}); !bytes.Equal(got, value(i, 1000)) {
			t.Fatalf("acknowledged record %d lost", i)
		}
	}
	for _, x := range []int32{100, 101, 102} {
		if ok, _ := db.Has(Key{X: x}); ok {
			t.Fatalf("failed write %d present after reopen", x)
		}
	}
}

// A failed fsync poisons the DB: the failing write and every later one
// fail, reads go on, and a reopen finds everything acknowledged before.
func TestFsyncFailurePoisons(t *testing.T) {
	for _, mode := range []Durability{DurabilitySafe, DurabilitySafeBatch, DurabilityBalanced} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := vfstest.NewMem()
			f := &faults{op: vfstest.OpSync, file: logName, err: syscall.EIO}
			db := open(t, vfstest.Inject(mem, f.fn), "/db", Options{Durability: mode, SyncInterval: time.Millisecond})
			for i := 0; i < 5; i++ {
				db.Put(Key{X: int32(i)}, value(i, 500))
			}
			if err := db.Sync(); err != nil {
				t.Fatal(err)
			}
			f.armed.Store(true)
			err := db.Put(Key{X: 50}, []byte("unlucky"))
			if mode == DurabilityBalanced {
				// The background sync fails; the next write reports it.
				deadline := time.Now().Add(5 * time.Second)
				for err == nil && time.Now().Before(deadline) {
					time.Sleep(2 * time.Millisecond)
					err = db.Put(Key{X: 51}, []byte("x"))
				}
			}
			if !errors.Is(err, ErrPoisoned) || !errors.Is(err, syscall.EIO) {
				t.Fatalf("write with failing fsync: %v", err)
			}
			f.armed.Store(false) // a retried fsync would now "succeed": it must not be trusted
			if err := db.Put(Key{X: 52}, []byte("later")); !errors.Is(err, ErrPoisoned) {
				t.Fatalf("write after poisoning: %v", err)
			}
			if _, err := db.Get(Key{X: 1}); err != nil {
				t.Fatalf("read after poisoning: %v", err)
			}
			if err := db.Close(); !errors.Is(err, ErrPoisoned) {
				t.Fatalf("Close of a poisoned DB: %v", err)
			}
			db = open(t, mem, "/db", Options{})
			for i := 0; i < 5; i++ {
				if got := mustGet(t, db, Key{X: int32(i)}); !bytes.Equal(got, value(i, 500)) {
					t.Fatalf("record %d lost", i)
				}
			}
			if err := db.Put(Key{X: 53}, []byte("fresh")); err != nil {
				t.Fatalf("reopened DB still poisoned: %v", err)
			}
		})
	}
}

// A failed fsync while a compaction copies poisons the database, and the
// compaction then gives up rather than install its file: the old log
// stays, and what it holds reads back after reopening.
func TestCompactionStopsWhenPoisonedMeanwhile(t *testing.T) {
	mem := vfstest.NewMem()
	f := &faults{op: vfstest.OpSync, file: logName, err: syscall.EIO}
	db := open(t, vfstest.Inject(mem, f.fn), "/db", Options{Durability: DurabilitySafe})
	for i := 0; i < 50; i++ {
		if err := db.Put(Key{X: int32(i % 10)}, value(i, 3000)); err != nil {
			t.Fatal(err)
		}
	}
	db.knobs.compactCopied = func() {
		f.armed.Store(true)
		if err := db.Put(Key{X: 99}, []byte("unlucky")); !errors.Is(err, ErrPoisoned) {
			t.Errorf("write with failing fsync: %v", err)
		}
		f.armed.Store(false)
	}
	if err := db.Compact(); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("Compact of a database poisoned meanwhile: %v", err)
	}
	if n := db.Stats().Compactions; n != 0 || mem.HasPrefix("/db/"+compactName) {
		t.Fatalf("%d compactions installed; temp file left: %v", n, mem.HasPrefix("/db/"+compactName))
	}
	db.Close()
	db = open(t, mem, "/db", Options{})
	for i := 40; i < 50; i++ {
		if got := mustGet(t, db, Key{X: int32(i % 10)}); !bytes.Equal(got, value(i, 3000)) {
			t.Fatalf("key %d wrong after reopening", i%10)
		}
	}
}

// A SafeBatch writer waiting for another's fsync is released by a
// compaction that copied its write into the new log. If the compaction's
// rename could not be made durable (the directory's sync failed), a power
// loss may bring the old log back without that write: the writer must get
// an error, never an acknowledgement, and so must Sync.
func TestFailedCompactionSwapAcksNothing(t *testing.T) {
	mem := vfstest.NewMem()
	var armed, failDir atomic.Bool
	var block sync.Once
	inFsync, release := make(chan struct{}), make(chan struct{})
	fsys := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
		if !armed.Load() {
			return nil
		}
		if op == vfstest.OpSync && filepath.Base(name) == logName {
			block.Do(func() { close(inFsync); <-release }) // the first writer's fsync
		}
		if op == vfstest.OpSyncDir && name == "/db" && failDir.Load() {
			return syscall.EIO
		}
		return nil
	})
	db := open(t, fsys, "/db", Options{Durability: DurabilitySafeBatch, ExternalMaintenance: true})
	for i := 0; i < 20; i++ {
		if err := db.Put(Key{X: int32(i % 5)}, value(i, 500)); err != nil {
			t.Fatal(err)
		}
	}
	armed.Store(true)
	leader := make(chan error, 1)
	go func() { leader <- db.Put(Key{X: 100}, []byte("leader")) }()
	<-inFsync
	before := db.log.written.Load()
	follower := make(chan error, 1)
	go func() { follower <- db.Put(Key{X: 101}, []byte("follower")) }()
	for db.log.written.Load() == before { // until the follower has appended
		time.Sleep(100 * time.Microsecond)
	}
	failDir.Store(true)
	if err := db.Compact(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Compact whose directory sync failed: %v", err)
	}
	followerErr := <-follower
	// Nor may Sync say the writes that returned are durable: a power loss
	// may bring the old log back without them.
	if err := db.Sync(); err == nil {
		t.Error("Sync after a compaction whose swap failed reported success")
	}
	// A power loss now, with the first writer still in its fsync.
	after := open(t, mem.CrashClone(nil, 0), "/db", Options{})
	defer after.Close()
	close(release)
	<-leader
	db.Close()
	if followerErr == nil {
		got, err := after.Get(Key{X: 101})
		t.Fatalf("the follower was acknowledged by a compaction whose swap failed; after a power loss it reads %q, %v", got, err)
	}
}

// A compaction that fails leaves the old log in charge and no temp file;
// the error comes back from Compact.
func TestCompactionFailureLosesNothing(t *testing.T) {
	mem := vfstest.NewMem()
	f := &faults{op: vfstest.OpWrite, file: compactName, err: syscall.ENOSPC}
	db := open(t, vfstest.Inject(mem, f.fn), "/db", Options{})
	for i := 0; i < 50; i++ {
		db.Put(Key{X: int32(i % 10)}, value(i, 3000))
	}
	f.armed.Store(true)
	if err := db.Compact(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Compact: %v", err)
	}
	if mem.HasPrefix("/db/" + compactName) {
		t.Fatal("failed compaction left its file")
	}
	f.armed.Store(false)
	db.Put(Key{X: 77}, []byte("after"))
	for i := 40; i < 50; i++ {
		if got := mustGet(t, db, Key{X: int32(i % 10)}); !bytes.Equal(got, value(i, 3000)) {
			t.Fatalf("key %d wrong after failed compaction", i%10)
		}
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
}

// A background compaction failure is returned by the next call that can
// report it, once.
func TestBackgroundErrorReported(t *testing.T) {
	mem := vfstest.NewMem()
	f := &faults{op: vfstest.OpCreate, file: compactName, err: syscall.EIO}
	f.armed.Store(true)
	db := open(t, vfstest.Inject(mem, f.fn), "/db", Options{CompactMinBytes: 1, CompactGarbageRatio: 0.1, History: -1})
	for i := 0; i < 20; i++ {
		db.Put(Key{}, value(i, 100))
	}
	deadline := time.Now().Add(5 * time.Second)
	var err error
	for err == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		err = db.Sync()
	}
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("background compaction error not reported: %v", err)
	}
	if err := db.Sync(); err != nil {
		t.Fatalf("reported twice: %v", err)
	}

	// One that no call has reported yet is returned by Close (f is still
	// armed: this database's compactions fail too).
	db = open(t, vfstest.Inject(vfstest.NewMem(), f.fn), "/db", Options{CompactMinBytes: 1, CompactGarbageRatio: 0.1, History: -1})
	for i := 0; i < 20; i++ {
		db.Put(Key{}, value(i, 100))
	}
	failed := func() bool {
		db.bg.mu.Lock()
		defer db.bg.mu.Unlock()
		return db.bg.err != nil
	}
	for deadline := time.Now().Add(5 * time.Second); !failed() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if err := db.Close(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Close with a background error unreported: %v", err)
	}
}

// Group commit: concurrent SafeBatch writers share fsyncs; Safe writers
// issue their own, about one a write.
func TestGroupCommitSharesFsyncs(t *testing.T) {
	slow := func(op vfstest.Op, name string) error {
		if op == vfstest.OpSync {
			time.Sleep(2 * time.Millisecond)
		}
		return nil
	}
	run := func(mode Durability) (writes, fsyncs int64) {
		db := open(t, vfstest.Inject(vfstest.NewMem(), slow), "/db", Options{Durability: mode})
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					if err := db.Put(Key{X: int32(w), Z: int32(i)}, value(i, 200)); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		st := db.Stats()
		return st.Appends, st.Fsyncs
	}
	w, f := run(DurabilitySafeBatch)
	if f*2 > w {
		t.Fatalf("SafeBatch: %d fsyncs for %d writes; want them shared", f, w)
	}
	// A Safe writer never waits for another's fsync, but needs none of its
	// own when one that began after its write has already covered it (a
	// writer whose append came between another's append and its fsync):
	// so about one fsync a write, not exactly one.
	w, f = run(DurabilitySafe)
	if f*4 < w*3 {
		t.Fatalf("Safe: %d fsyncs for %d writes; want about one each", f, w)
	}
}

// A read of chunks.dat that fails while Open reads the log fails the Open
// with that error: it is never taken for damage (ErrCorrupt, ErrNotBlaze)
// nor passed over. Each k fails the k-th read, until Open makes fewer.
func TestOpenReadError(t *testing.T) {
	for _, scan := range []bool{false, true} {
		for _, ro := range []bool{false, true} {
			mem := vfstest.NewMem()
			db := open(t, mem, "/db", Options{})
			for i := range 50 {
				if err := db.Put(Key{X: int32(i)}, value(i, 3000)); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if scan {
				if err := mem.Remove("/db/" + indexName); err != nil {
					t.Fatal(err)
				}
			}
			for k := 1; ; k++ {
				var mu sync.Mutex
				reads, fired := 0, false
				fs := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
					if op != vfstest.OpRead || filepath.Base(name) != logName {
						return nil
					}
					mu.Lock()
					defer mu.Unlock()
					if reads++; reads == k {
						fired = true
						return syscall.EIO
					}
					return nil
				})
				db, err := Open("/db", Options{FS: fs, Logger: quiet, ReadOnly: ro})
				mu.Lock()
				f := fired
				mu.Unlock()
				if err == nil {
					db.Close()
					if f {
						t.Fatalf("scan %t, read-only %t: read %d failed and Open succeeded", scan, ro, k)
					}
					if k < 3 {
						t.Fatalf("scan %t, read-only %t: Open read chunks.dat %d times", scan, ro, k-1)
					}
					break
				}
				if !errors.Is(err, syscall.EIO) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotBlaze) {
					t.Fatalf("scan %t, read-only %t: read %d failed: Open returned %v", scan, ro, k, err)
				}
			}
		}
	}
}

// With ExternalMaintenance, a compaction or an index checkpoint that fails
// inside Maintain is returned by that Maintain, once; a failed compaction
// is not tried again at every visit (a pool visits its databases often),
// and the database keeps every value.
func TestMaintainReportsItsFailures(t *testing.T) {
	var creates atomic.Int64
	compacts := &faults{op: vfstest.OpCreate, file: compactName, err: syscall.EIO}
	index := &faults{op: vfstest.OpCreate, file: indexName + vfs.TempSuffix, err: syscall.ENOSPC}
	fsys := vfstest.Inject(vfstest.NewMem(), func(op vfstest.Op, name string) error {
		if op == vfstest.OpCreate && filepath.Base(name) == compactName {
			creates.Add(1)
		}
		return errors.Join(compacts.fn(op, name), index.fn(op, name))
	})
	db := open(t, fsys, "/db", Options{ExternalMaintenance: true, CompactMinBytes: 1, CompactGarbageRatio: 0.3,
		IndexCheckpointBytes: 16 << 10, History: -1})
	for i := range 40 {
		if err := db.Put(Key{X: int32(i % 4)}, value(i, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	compacts.armed.Store(true)
	if err := db.Maintain(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Maintain with a failing compaction: %v", err)
	}
	if err := db.Maintain(); err != nil || creates.Load() != 1 {
		t.Fatalf("the next Maintain: %v, after %d compaction attempts; want nil after 1", err, creates.Load())
	}
	compacts.armed.Store(false)

	// An index checkpoint, due with no compaction due; it is tried again
	// at the next visit.
	db2 := open(t, fsys, "/db2", Options{ExternalMaintenance: true, DisableAutoCompaction: true, IndexCheckpointBytes: 16 << 10})
	for i := range 40 {
		if err := db2.Put(Key{X: int32(i)}, value(i, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	index.armed.Store(true)
	if err := db2.Maintain(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Maintain with a failing checkpoint: %v", err)
	}
	index.armed.Store(false)
	if err := db2.Maintain(); err != nil || db2.Stats().Checkpoints != 1 {
		t.Fatalf("Maintain after the disk has room again: %v, %d checkpoints; want nil and 1", err, db2.Stats().Checkpoints)
	}
	for i := range 40 {
		if got := mustGet(t, db2, Key{X: int32(i)}); !bytes.Equal(got, value(i, 1000)) {
			t.Fatalf("%d lost", i)
		}
	}
	for i := 36; i < 40; i++ {
		if got := mustGet(t, db, Key{X: int32(i % 4)}); !bytes.Equal(got, value(i, 1000)) {
			t.Fatalf("%d lost", i)
		}
	}
}

// Issue 35 item 14: after a compaction, errors through the log name
// chunks.dat, not chunks.dat.compact, the name the file was created under,
// which no longer exists; and faults injected on chunks.dat reach it.
func TestErrorsAfterCompactionNameTheLog(t *testing.T) {
	var armed atomic.Bool
	fs := vfstest.Inject(vfstest.NewMem(), func(op vfstest.Op, name string) error {
		if armed.Load() && (op == vfstest.OpWrite || op == vfstest.OpSync) {
			// As the operating system's errors do: the name the handle
			// was opened by.
			return &os.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
		}
		return nil
	})
	db := open(t, fs, "/db", Options{DisableAutoCompaction: true})
	for i := range 20 {
		if err := db.Put(Key{X: int32(i % 5)}, value(i, 500)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	err := db.Put(Key{X: 99}, value(99, 500))
	armed.Store(false)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Put with the fault armed: %v", err)
	}
	if strings.Contains(err.Error(), compactName) || !strings.Contains(err.Error(), "/db/"+logName) {
		t.Fatalf("the error names the wrong file: %v", err)
	}
	if err := db.Put(Key{X: 98}, value(98, 500)); err != nil {
		t.Fatal(err)
	}
}
