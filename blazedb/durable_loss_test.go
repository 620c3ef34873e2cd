package blazedb

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// closedWorld writes 56 keys, then new versions of keys 0 to 3 and a delete
// of key 4, and closes the database cleanly. It returns the log and
// index.dat, the offset of the second half of the log's records (where the
// test cuts it) and the keys whose newest durable state lies past the cut.
func closedWorld(t *testing.T) (log, idx []byte, cut int64, lost []LostKey) {
	t.Helper()
	fs := vfs.NewMem()
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
	damaged := func() *vfs.MemFS {
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
