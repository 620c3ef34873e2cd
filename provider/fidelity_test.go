package provider

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openDB(t testing.TB, dir string, c Config) *DB {
	t.Helper()
	if c.Log == nil {
		c.Log = quiet
	}
	db, err := c.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// flipByte damages the file name: it inverts the byte at off.
func flipByte(t *testing.T, name string, off int64) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0xff
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every column of every real world comes back exactly: stored with Blaze,
// read hot (from the column cache), then cold after reopening. The worlds
// run beside each other: each has its own directories and database.
func TestFidelityRealWorlds(t *testing.T) {
	for _, path := range worldtest.Worlds(t) {
		t.Run(worldtest.Name(path), func(t *testing.T) {
			t.Parallel()
			cols, err := worldtest.ReadAll(worldtest.UnpackTemp(t, path), world.DefaultBlockRegistry)
			if err != nil {
				t.Fatal(err)
			}
			if len(cols) == 0 {
				t.Fatal("no columns read")
			}
			dir := t.TempDir()
			db := openDB(t, dir, Config{})
			for _, c := range cols {
				if err := db.StoreColumn(c.Pos, c.Dim, c.Col); err != nil {
					t.Fatal(err)
				}
			}
			check := func(db *DB, when string) {
				for _, c := range cols {
					got, err := db.LoadColumn(c.Pos, c.Dim)
					if err != nil {
						t.Fatalf("%s: %v", when, err)
					}
					if err := worldtest.Compare(c.Col, got); err != nil {
						t.Fatalf("%s: column %v (%v): %v", when, c.Pos, c.Dim, err)
					}
				}
			}
			check(db, "hot")
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openDB(t, dir, Config{})
			check(db, "cold")
			dims := map[string]int{}
			for _, c := range cols {
				dims[fmt.Sprint(c.Dim)]++
			}
			t.Logf("%d columns %v", len(cols), dims)
		})
	}
}

func TestMissingColumnIsNotFound(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	col, err := db.LoadColumn(world.ChunkPos{5, 5}, world.Nether)
	if col != nil || !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("got %v, %v", col, err)
	}
	if errors.Is(err, blazedb.ErrCorrupt) {
		t.Fatal("missing reported as corrupt")
	}
}
