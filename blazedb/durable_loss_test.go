package blazedb

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// closedWorld writes 56 keys, then new versions of keys 0 to 3 and a delete
// of key 4, and closes the database cleanly. It returns the log and
// index.dat, the offset of the second half of the log's records (where the
// test cuts it) and the keys whose newest durable state lies past the cut.
func closedWorld(t *testing.T) (log, idx []byte, cut int64, lost []LostKey) {
	t.Helper()
	fs := vfstest.NewMem()
	db := open(t, fs, "/db", Options{Durability: DurabilitySafe, Compression: CompressionNone})
	var offs []int64
	for i := range 56 {
		offs = append(offs, db.Stats().LogBytes)
		if err := db.Put(Key{X: int32(i)}, value(i, 300)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		if err := db.Put(Key{X: int32(i)}, []byte(fmt.Sprint("second version of ", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Delete(Key{X: 4}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	log, _ = fs.ReadFile("/db/chunks.dat")
	idx, _ = fs.ReadFile("/db/index.dat")
	cut = offs[28] + 100 // inside the record of key 28
	for i := 0; i < 4; i++ {
		lost = append(lost, LostKey{Key: Key{X: int32(i)}, Older: true})
	}
	lost = append(lost, LostKey{Key: Key{X: 4}, Older: true, Revived: true})
	for i := 28; i < 56; i++ {
		lost = append(lost, LostKey{Key: Key{X: int32(i)}})
	}
	slices.SortFunc(lost, compareLost)
	return log, idx, cut, lost
}

// Issue 35 item 1: a cleanly closed database whose log lost its second half
// (index.dat, which covers only durable bytes, shows it was durable) is not
// opened as if a crash had torn its tail. A read-write Open refuses with
// ErrDurableLoss and changes nothing; a read-only one opens and names the
// keys lost; AcceptDurableLoss opens it read-write, names them too and
// cuts the log; and Repair gives them up by name, deleting again a key
// whose delete was lost.
func TestTruncatedDurableLogIsLoss(t *testing.T) {
	log, idx, cut, want := closedWorld(t)
	damaged := func() *vfstest.MemFS {
		fs := memWith(log[:cut])
		fs.WriteFile("/db/index.dat", idx)
		return fs
	}

	t.Run("read-write refuses", func(t *testing.T) {
		fs := damaged()
		_, err := Open("/db", Options{FS: fs, Logger: quiet})
		if !errors.Is(err, ErrDurableLoss) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open: %v, want ErrDurableLoss", err)
		}
		t.Log(err)
		if b, _ := fs.ReadFile("/db/chunks.dat"); int64(len(b)) != cut {
			t.Fatalf("a refused open changed the log: %d bytes, want %d", len(b), cut)
		}
		if b, _ := fs.ReadFile("/db/index.dat"); len(b) != len(idx) {
			t.Fatal("a refused open changed index.dat")
		}
	})

	checkLost := func(t *testing.T, rec Recovery) {
		t.Helper()
		if rec.LostBytes <= int64(len(log))-cut {
			t.Errorf("LostBytes %d, want more than the %d bytes cut", rec.LostBytes, int64(len(log))-cut)
		}
		if !slices.Equal(rec.Lost, want) {
			t.Errorf("lost %v,\nwant %v", rec.Lost, want)
		}
	}
	checkState := func(t *testing.T, db *DB, revivedDeleted bool) {
		t.Helper()
		for i := range 28 {
			got, err := db.Get(Key{X: int32(i)})
			switch {
			case i == 4 && revivedDeleted:
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("key 4, deleted, holds %q, %v", got, err)
				}
			case err != nil || string(got) != string(value(i, 300)):
				t.Errorf("key %d holds %q, %v; want its first version", i, got, err)
			}
		}
		for i := 28; i < 56; i++ {
			if _, err := db.Get(Key{X: int32(i)}); !errors.Is(err, ErrNotFound) {
				t.Errorf("key %d, lost, reads %v", i, err)
			}
		}
	}

	t.Run("read-only reports", func(t *testing.T) {
		db := open(t, damaged(), "/db", Options{ReadOnly: true})
		checkLost(t, db.Recovery())
		checkState(t, db, false)
	})

	t.Run("accepted", func(t *testing.T) {
		fs := damaged()
		db := open(t, fs, "/db", Options{AcceptDurableLoss: true})
		checkLost(t, db.Recovery())
		checkState(t, db, false)
		db.Close()
		db = open(t, fs, "/db", Options{})
		if rec := db.Recovery(); rec.LostBytes != 0 || len(rec.Lost) != 0 {
			t.Fatalf("the accepted loss is reported again: %+v", rec)
		}
		checkState(t, db, false)
	})

	t.Run("repair", func(t *testing.T) {
		fs := damaged()
		rep, err := Repair("/db", Options{FS: fs, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Lost, want) || rep.LostBytes == 0 || !rep.Compacted {
			t.Fatalf("repair report: lost %v (%d bytes), compacted %v", rep.Lost, rep.LostBytes, rep.Compacted)
		}
		db := open(t, fs, "/db", Options{})
		if rec := db.Recovery(); rec.LostBytes != 0 || !rec.IndexLoaded {
			t.Fatalf("after repair: %+v", rec)
		}
		checkState(t, db, true)
	})
}

// snapshotFiles returns every file of the database in /db, by name.
func snapshotFiles(t *testing.T, fs *vfstest.MemFS) map[string]string {
	t.Helper()
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, n := range names {
		b, err := fs.ReadFile("/db/" + n)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = string(b)
	}
	return files
}

// Issue 35 item 1: a log that is gone while index.dat, which is written
// only beside a log whose header was durable and covers only durable
// bytes, shows it held durable data: chunks.dat removed, cut to fewer
// bytes than its header, or cut to its header and copy with both
// destroyed. Every key index.dat lists is lost. A read-write Open refuses
// with ErrDurableLoss and changes nothing (it used to make a new, empty
// log, or to fail with ErrNotBlaze); a read-only one opens, writes
// nothing, and names them; AcceptDurableLoss opens read-write on a log
// rebuilt as its header alone, with index.dat's generation; Repair gives
// them up by name; and the database then opens cleanly.
func TestGoneLogIsLoss(t *testing.T) {
	log, idx, _, _ := closedWorld(t)
	_, meta, err := decodeIndex(idx)
	if err != nil {
		t.Fatal(err)
	}
	var want []LostKey // every key index.dat lists: all but key 4, deleted
	for i := range 56 {
		if i != 4 {
			want = append(want, LostKey{Key: Key{X: int32(i)}})
		}
	}
	zeroed := make([]byte, fileHeaderSize+headerCopySize)
	cases := map[string]func() *vfstest.MemFS{
		"removed": func() *vfstest.MemFS {
			fs := vfstest.NewMem()
			fs.MkdirAll("/db", 0o755)
			return fs
		},
		"header and copy zeroed, nothing after": func() *vfstest.MemFS { return memWith(zeroed) },
		"cut inside the copy, header zeroed": func() *vfstest.MemFS {
			return memWith(append(make([]byte, fileHeaderSize), log[fileHeaderSize:fileHeaderSize+20]...))
		},
	}
	for _, n := range []int{0, 1, 7, 8, 20, fileHeaderSize - 1} {
		cases[fmt.Sprintf("cut to %d bytes", n)] = func() *vfstest.MemFS { return memWith(log[:n]) }
	}
	for name, build := range cases {
		damaged := func() *vfstest.MemFS {
			fs := build()
			fs.WriteFile("/db/index.dat", idx)
			return fs
		}
		t.Run(name, func(t *testing.T) {
			t.Run("read-write refuses", func(t *testing.T) {
				fs := damaged()
				before := snapshotFiles(t, fs)
				_, err := Open("/db", Options{FS: fs, Logger: quiet})
				if !errors.Is(err, ErrDurableLoss) {
					t.Fatalf("Open: %v, want ErrDurableLoss", err)
				}
				t.Log(err)
				after := snapshotFiles(t, fs)
				delete(after, lockName)
				if !maps.Equal(before, after) {
					t.Fatalf("a refused open changed the files: %v, then %v", slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
				}
			})

			checkLost := func(t *testing.T, db *DB) {
				t.Helper()
				rec := db.Recovery()
				if rec.LostBytes != meta.covered || rec.IndexLoaded || rec.IndexProblem == "" {
					t.Errorf("LostBytes %d, index loaded %v (%q); want %d, the bytes index.dat covers", rec.LostBytes, rec.IndexLoaded, rec.IndexProblem, meta.covered)
				}
				if !slices.Equal(rec.Lost, want) {
					t.Errorf("lost %v,\nwant %v", rec.Lost, want)
				}
				if keys, err := db.Keys(Area{MinX: -1 << 20, MinZ: -1 << 20, MaxX: 1 << 20, MaxZ: 1 << 20}); err != nil || len(keys) != 0 {
					t.Errorf("keys left: %v, %v", keys, err)
				}
			}

			t.Run("read-only reports", func(t *testing.T) {
				fs := damaged()
				before := snapshotFiles(t, fs)
				db := open(t, fs, "/db", Options{ReadOnly: true})
				checkLost(t, db)
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				if after := snapshotFiles(t, fs); !maps.Equal(before, after) {
					t.Fatal("a read-only open changed the files")
				}
			})

			t.Run("accepted", func(t *testing.T) {
				fs := damaged()
				db := open(t, fs, "/db", Options{AcceptDurableLoss: true})
				checkLost(t, db)
				if g := db.Stats().Generation; g != meta.generation {
					t.Errorf("generation %d, want index.dat's %d", g, meta.generation)
				}
				if err := db.Put(Key{X: 7}, []byte("after")); err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				db = open(t, fs, "/db", Options{})
				if rec := db.Recovery(); rec.LostBytes != 0 || len(rec.Lost) != 0 {
					t.Fatalf("the accepted loss is reported again: %+v", rec)
				}
				if got, err := db.Get(Key{X: 7}); err != nil || string(got) != "after" {
					t.Fatalf("a write after the accepted loss reads %q, %v", got, err)
				}
			})

			t.Run("repair", func(t *testing.T) {
				fs := damaged()
				rep, err := Repair("/db", Options{FS: fs, Logger: quiet})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(rep.Lost, want) || rep.LostBytes != meta.covered || !rep.Compacted {
					t.Fatalf("repair report: lost %v (%d bytes), compacted %v", rep.Lost, rep.LostBytes, rep.Compacted)
				}
				db := open(t, fs, "/db", Options{})
				if rec := db.Recovery(); rec.LostBytes != 0 || len(rec.Lost) != 0 || !rec.IndexLoaded {
					t.Fatalf("after repair: %+v", rec)
				}
				if err := db.Put(Key{X: 7}, []byte("after")); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// Issue 35 item 1: the loss of a gone log is accepted by writing the new
// log before index.dat goes, so a crash in between leaves the loss to be
// reported again, never a database that looks whole.
func TestGoneLogAcceptedLossSurvivesACrash(t *testing.T) {
	_, idx, _, _ := closedWorld(t)
	mem := vfstest.NewMem()
	mem.MkdirAll("/db", 0o755)
	mem.WriteFile("/db/index.dat", idx)
	failRemove := errors.New("injected")
	fs := vfstest.Inject(mem, func(op vfstest.Op, name string) error {
		if op == vfstest.OpRemove && name == "/db/index.dat" {
			return failRemove
		}
		return nil
	})
	if _, err := Open("/db", Options{FS: fs, Logger: quiet, AcceptDurableLoss: true}); !errors.Is(err, failRemove) {
		t.Fatalf("Open: %v, want the injected failure", err)
	}
	if _, err := Open("/db", Options{FS: mem, Logger: quiet}); !errors.Is(err, ErrDurableLoss) {
		t.Fatalf("Open after the interrupted acceptance: %v, want ErrDurableLoss", err)
	}
}

// Issue 35 item 1: without index.dat nothing shows that a log held
// anything. A missing log is a database never created, which a read-write
// Open creates and a read-only one does not find; a short file that is
// not a Blaze log is refused as before (ErrNotBlaze) and left as it is.
func TestGoneLogWithoutIndexIsNotLoss(t *testing.T) {
	fs := vfstest.NewMem()
	fs.MkdirAll("/db", 0o755)
	if _, err := Open("/db", Options{FS: fs, Logger: quiet, ReadOnly: true}); !errors.Is(err, vfs.ErrNotExist) {
		t.Fatalf("read-only Open of an empty directory: %v, want ErrNotExist", err)
	}
	db := open(t, fs, "/db", Options{})
	if rec := db.Recovery(); rec.LostBytes != 0 || len(rec.Lost) != 0 {
		t.Fatalf("a new database reports loss: %+v", rec)
	}
	db.Close()

	for _, content := range []string{"", "x", "hello, world", "not a blaze log, but 40 bytes long......"} {
		fs := memWith([]byte(content))
		for _, o := range []Options{{}, {ReadOnly: true}, {AcceptDurableLoss: true}} {
			o.FS, o.Logger = fs, quiet
			if _, err := Open("/db", o); !errors.Is(err, ErrNotBlaze) {
				t.Errorf("Open(%+v) of a %d-byte foreign chunks.dat: %v, want ErrNotBlaze", o.ReadOnly, len(content), err)
			}
		}
		if b, _ := fs.ReadFile("/db/chunks.dat"); string(b) != content {
			t.Errorf("a refused open changed the foreign file")
		}
	}
}
