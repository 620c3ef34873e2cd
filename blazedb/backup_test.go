package blazedb

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// backupState fills db with chunk keys, named keys, overwrites and deletes,
// and returns what it holds.
func backupState(t *testing.T, db *DB) (map[Key][]byte, map[string][]byte) {
	t.Helper()
	chunks, named := map[Key][]byte{}, map[string][]byte{}
	for i := 0; i < 120; i++ {
		k := Key{Dim: int32(i % 3), X: int32(i % 10), Z: int32(i / 10)}
		chunks[k] = value(i, 3<<10)
		if err := db.Put(k, chunks[k]); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ { // overwrites and deletes leave garbage behind
		k := Key{Dim: int32(i % 3), X: int32(i % 10), Z: int32(i / 10)}
		if i%2 == 0 {
			chunks[k] = value(1000+i, 2<<10)
			if err := db.Put(k, chunks[k]); err != nil {
				t.Fatal(err)
			}
		} else {
			delete(chunks, k)
			if err := db.Delete(k); err != nil {
				t.Fatal(err)
			}
		}
	}
	named["player/a"] = []byte("spawn a")
	if err := db.PutNamed("player/a", named["player/a"]); err != nil {
		t.Fatal(err)
	}
	return chunks, named
}

// checkBackup opens the backup in dir and checks that it holds exactly
// chunks and named, that it loads its index.dat without scanning, and that
// Check finds it clean.
func checkBackup(t *testing.T, fsys vfs.FS, dir string, chunks map[Key][]byte, named map[string][]byte) {
	t.Helper()
	b, err := Open(dir, Options{FS: fsys, Logger: quiet, ReadOnly: true})
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer b.Close()
	if rec := b.Recovery(); !rec.IndexLoaded || rec.ScannedBytes != 0 || rec.TornBytes != 0 {
		t.Fatalf("the backup's recovery: %+v", rec)
	}
	n := 0
	for dim := int32(0); dim < 3; dim++ {
		keys, err := b.Keys(Area{Dim: dim, MinX: -1 << 20, MinZ: -1 << 20, MaxX: 1 << 20, MaxZ: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			v, err := b.Get(k)
			if err != nil || !bytes.Equal(v, chunks[k]) {
				t.Fatalf("the backup's %v: %v (in the snapshot: %t)", k, err, chunks[k] != nil)
			}
			n++
		}
	}
	if n != len(chunks) {
		t.Fatalf("the backup has %d chunk keys, the database had %d", n, len(chunks))
	}
	for name, want := range named {
		if v, err := b.GetNamed(name); err != nil || !bytes.Equal(v, want) {
			t.Fatalf("the backup's %q: %q, %v", name, v, err)
		}
	}
	if err := b.Check(); err != nil {
		t.Fatalf("Check of the backup: %v", err)
	}
}

// A backup holds the database as it was when Backup was called, nothing
// written after it, and opens on its own index.dat.
func TestBackup(t *testing.T) {
	for _, mode := range []Durability{DurabilityFast, DurabilityBalanced, DurabilitySafe} {
		t.Run(mode.String(), func(t *testing.T) {
			fsys := vfstest.NewMem()
			db := open(t, fsys, "/db", Options{Durability: mode, DisableAutoCompaction: true})
			chunks, named := backupState(t, db)
			if err := db.Backup("/backups/one"); err != nil {
				t.Fatal(err)
			}
			// Written after the backup: none of it is in it.
			if err := db.Put(Key{X: 99}, []byte("later")); err != nil {
				t.Fatal(err)
			}
			for k := range chunks {
				if err := db.Delete(k); err != nil {
					t.Fatal(err)
				}
				break
			}
			if err := db.PutNamed("player/a", []byte("moved")); err != nil {
				t.Fatal(err)
			}
			checkBackup(t, fsys, "/backups/one", chunks, named)

			err := db.Backup("/backups/one")
			if !errors.Is(err, fs.ErrExist) {
				t.Fatalf("a backup over an existing one: %v", err)
			}
			checkBackup(t, fsys, "/backups/one", chunks, named)
			// A directory left by a crashed backup is not overwritten either.
			if err := fsys.MkdirAll("/backups/two"+vfs.BuildSuffix, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := db.Backup("/backups/two"); !errors.Is(err, fs.ErrExist) {
				t.Fatalf("a backup over a leftover: %v", err)
			}
			if _, err := fsys.List("/backups/two"); err == nil {
				t.Fatal("a refused backup made its directory")
			}
			// Inside the database's directory, it would stop it opening.
			if err := db.Backup("/db/backup"); !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("a backup inside the database: %v", err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if err := db.Backup("/backups/three"); !errors.Is(err, ErrClosed) {
				t.Fatalf("a backup of a closed database: %v", err)
			}
		})
	}
}

// A read-only database can be backed up too.
func TestBackupReadOnly(t *testing.T) {
	fsys := vfstest.NewMem()
	db := open(t, fsys, "/db", Options{})
	chunks, named := backupState(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro := open(t, fsys, "/db", Options{ReadOnly: true})
	if err := ro.Backup("/bak"); err != nil {
		t.Fatal(err)
	}
	checkBackup(t, fsys, "/bak", chunks, named)
}

// A crash at any step of a backup leaves either no backup or a whole one;
// a failed backup removes what it wrote.
func TestBackupCrash(t *testing.T) {
	for n := 1; ; n++ {
		fsys := vfstest.NewMem()
		db, err := Open("/db", Options{FS: fsys, Logger: quiet, DisableAutoCompaction: true})
		if err != nil {
			t.Fatal(err)
		}
		chunks, named := backupState(t, db)
		fsys.CrashAfter(n)
		err = db.Backup("/bak")
		crashed := fsys.Crashed()
		if err == nil && crashed {
			t.Fatalf("step %d: Backup returned nil after a crash", n)
		}
		if err != nil && !crashed {
			t.Fatalf("step %d: %v", n, err)
		}
		for seed := uint64(0); seed < 3; seed++ {
			clone := fsys.CrashClone(rand.New(rand.NewPCG(uint64(n), seed)), 0.5)
			if _, err := clone.List("/bak"); err == nil {
				checkBackup(t, clone, "/bak", chunks, named)
			} else if !crashed {
				t.Fatalf("step %d: no backup after Backup returned", n)
			}
		}
		if crashed {
			// Before the crash the failed backup cleaned up, unless the crash
			// came first: either way the leftover never passes for a backup.
			db.Close()
			continue
		}
		db.Close()
		if n < 5 {
			t.Fatalf("a backup took only %d steps", n)
		}
		break
	}
}

// A backup taken while writes and compactions go on holds exactly the
// effect of some prefix of the writes, at least those that returned before
// Backup was called, and the database goes on as before.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(filepath.Join(dir, "db"), Options{Logger: quiet, Durability: DurabilityBalanced})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const keys = 64
	key := func(j int) Key { return Key{X: int32(j % keys)} }
	val := func(j int) []byte { return append(value(j%7, 2<<10), byte(j), byte(j>>8), byte(j>>16)) }
	var done atomic.Int64 // writes that returned
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for j := 0; ; j++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := db.Put(key(j), val(j)); err != nil {
				t.Error(err)
				return
			}
			done.Store(int64(j + 1))
		}
	}()
	go func() { // the log is mostly garbage: compactions run and wait
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := db.Compact(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for done.Load() < 2000 { // let the writer get ahead
		runtime.Gosched()
	}
	var before []int64
	for b := 0; b < 3; b++ {
		before = append(before, done.Load())
		if err := db.Backup(filepath.Join(dir, "backup", string(rune('a'+b)))); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	for b, min := range before {
		bdir := filepath.Join(dir, "backup", string(rune('a'+b)))
		bk, err := Open(bdir, Options{Logger: quiet, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		// The newest write the backup holds fixes the prefix; every key must
		// then hold its last write in that prefix.
		last := int64(-1)
		for i := 0; i < keys; i++ {
			v, err := bk.Get(key(i))
			if err != nil {
				t.Fatalf("backup %d: key %d: %v", b, i, err)
			}
			j := int64(v[len(v)-3]) | int64(v[len(v)-2])<<8 | int64(v[len(v)-1])<<16
			last = max(last, j)
		}
		if last+1 < min {
			t.Fatalf("backup %d holds writes up to %d; %d had returned before Backup", b, last, min)
		}
		for i := 0; i < keys; i++ {
			want := last - (last-int64(i))%keys
			if got, _ := bk.Get(key(i)); !bytes.Equal(got, val(int(want))) {
				t.Fatalf("backup %d: key %d does not hold write %d of the prefix up to %d", b, i, want, last)
			}
		}
		if err := bk.Check(); err != nil {
			t.Fatal(err)
		}
		bk.Close()
	}
}

// A backup that fails (a full disk while it copies, a failed rename) removes
// what it wrote and leaves the database as it was.
func TestBackupFailureCleansUp(t *testing.T) {
	for _, c := range []struct {
		name string
		op   vfstest.Op
		file string // the name the failing operation is given, or a prefix of it
	}{
		{"write", vfstest.OpWrite, "/bak"},
		{"sync", vfstest.OpSync, "/bak"},
		{"rename of index.dat", vfstest.OpRename, "/bak"},
		{"rename into place", vfstest.OpRename, "/bak$"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := vfstest.NewMem()
			var armed atomic.Bool
			fsys := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
				match := strings.HasPrefix(name, c.file)
				if exact, ok := strings.CutSuffix(c.file, "$"); ok {
					match = name == exact
				}
				if armed.Load() && op == c.op && match {
					return errors.New("injected failure")
				}
				return nil
			})
			db := open(t, fsys, "/db", Options{})
			chunks, named := backupState(t, db)
			armed.Store(true)
			if err := db.Backup("/bak"); err == nil {
				t.Fatal("Backup succeeded despite the failure")
			}
			for _, p := range []string{"/bak", "/bak" + vfs.BuildSuffix} {
				if _, err := mem.List(p); err == nil {
					t.Fatalf("a failed backup left %s", p)
				}
			}
			armed.Store(false)
			if err := db.Put(Key{X: 500}, []byte("after")); err != nil {
				t.Fatalf("a write after a failed backup: %v", err)
			}
			if err := db.Backup("/bak"); err != nil {
				t.Fatal(err)
			}
			chunks[Key{X: 500}] = []byte("after")
			checkBackup(t, mem, "/bak", chunks, named)
		})
	}
}

// A file where the backup should go is refused like a directory.
func TestBackupOverFile(t *testing.T) {
	fsys := vfstest.NewMem()
	db := open(t, fsys, "/db", Options{})
	backupState(t, db)
	fsys.WriteFile("/bak", []byte("not a backup"))
	if err := db.Backup("/bak"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a backup over a file: %v", err)
	}
	if b, err := vfs.ReadFile(fsys, "/bak"); err != nil || string(b) != "not a backup" {
		t.Fatalf("the file: %q %v", b, err)
	}
}

// Close during a backup's copy stops it at its next read, and the backup
// leaves nothing behind.
func TestBackupStoppedByClose(t *testing.T) {
	mem := vfstest.NewMem()
	var db *DB
	started := make(chan struct{})
	var once sync.Once
	fsys := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
		if op == vfstest.OpWrite && name == "/bak"+vfs.BuildSuffix+"/"+logName {
			// The copy's first write: hold it until Close has begun.
			once.Do(func() { close(started) })
			for !db.stopping.Load() {
				runtime.Gosched()
			}
		}
		return nil
	})
	db, err := Open("/db", Options{FS: fsys, Logger: quiet, Compression: CompressionNone})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 48; i++ { // 3 MiB: more than one read of the copy
		if err := db.Put(Key{X: int32(i)}, value(i, 64<<10)); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error)
	go func() { done <- db.Backup("/bak") }()
	<-started
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("a backup Close stopped: %v", err)
	}
	for _, p := range []string{"/bak", "/bak" + vfs.BuildSuffix} {
		if _, err := mem.List(p); err == nil {
			t.Fatalf("a stopped backup left %s", p)
		}
	}
}

func TestInside(t *testing.T) {
	for _, c := range []struct {
		path, dir string
		want      bool
	}{
		{"/w/db/x", "/w/db", true},
		{"/w/db", "/w/db", true},
		{"/w/db/../x", "/w/db", false},
		{"/w/dbx", "/w/db", false},
		{"/w/x", "/w/db", false},
		{"db/x", "db", true},
		{"x", "db", false},
	} {
		if got := inside(c.path, c.dir); got != c.want {
			t.Errorf("inside(%q, %q) = %t", c.path, c.dir, got)
		}
	}
}
