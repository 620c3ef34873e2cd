package blazedb

import (
	"errors"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// Lock is refused while the database is open, and holds Open off while it
// is held.
func TestLockBesideOpen(t *testing.T) {
	dir := t.TempDir()
	db := open(t, vfs.Default, dir, Options{})
	if _, err := Lock(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("Lock of an open database: %v", err)
	}
	db.Close()
	l, err := Lock(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{Logger: quiet}); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open beside Lock: %v", err)
	}
	l.Close()
	open(t, vfs.Default, dir, Options{}).Close()
}
