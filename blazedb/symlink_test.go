package blazedb

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/internal/linktest"
)

// Issue 35 item 6: a chunks.dat that is a symbolic link is never cut,
// written or truncated through: a read-write open whose recovery would cut
// a torn tail refuses with ErrSymlink and leaves the file behind the link
// as it was; a read-only open still reads it.
func TestTornTailNotCutThroughLink(t *testing.T) {
	const n = 5
	log, offs := writeLog(t, n)
	torn := log[:offs[n-1]+7] // the last record cut short, as by a crash
	trap := linktest.New(t)
	trap.Put(t, logName, torn)
	dir := t.TempDir()
	trap.LinkFile(t, logName, filepath.Join(dir, logName))

	db, err := Open(dir, Options{Logger: quiet})
	trap.Check(t)
	if err == nil {
		db.Close()
	}
	if !errors.Is(err, vfs.ErrSymlink) {
		t.Fatalf("read-write open of a linked chunks.dat: %v, want ErrSymlink", err)
	}

	db, err = Open(dir, Options{Logger: quiet, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of a linked chunks.dat: %v", err)
	}
	defer db.Close()
	if got := mustGet(t, db, Key{X: 0}); string(got) != string(value(0, 200)) {
		t.Error("read-only open through the link: record 0 wrong")
	}
	trap.Check(t)
}

// Issue 35 item 6: compaction never writes its new log through a symbolic
// link found at its temporary name; the next open removes the link
// itself, as a leftover.
func TestCompactionNotThroughLink(t *testing.T) {
	dir := t.TempDir()
	db := open(t, vfs.Default, dir, Options{})
	if err := db.Put(Key{X: 1}, value(1, 300)); err != nil {
		t.Fatal(err)
	}
	trap := linktest.New(t)
	trap.LinkFile(t, linktest.Sentinel, filepath.Join(dir, compactName))
	if err := db.Compact(); !errors.Is(err, vfs.ErrSymlink) {
		t.Errorf("compaction with a link at %s: %v, want ErrSymlink", compactName, err)
	}
	trap.Check(t)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, vfs.Default, dir, Options{})
	if _, err := os.Lstat(filepath.Join(dir, compactName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after a reopen: %v, want it removed", compactName, err)
	}
	trap.Check(t)
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, db, Key{X: 1}); string(got) != string(value(1, 300)) {
		t.Error("record 1 wrong after the compaction")
	}
}
