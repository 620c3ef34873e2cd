package convert

import (
	"errors"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

// verify fails a conversion whose destination does not read back every
// column the source holds, exactly, except the columns already reported
// as failed.
func TestVerifyFindsDifferences(t *testing.T) {
	open := func() *provider.DB {
		db, err := provider.Config{}.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	from, to := open(), open()
	same, changed, missing := place{Pos: world.ChunkPos{0, 0}, Dim: world.Overworld},
		place{Pos: world.ChunkPos{1, 0}, Dim: world.Nether}, place{Pos: world.ChunkPos{2, 0}, Dim: world.End}
	for i, pl := range []place{same, changed, missing} {
		col := worldtest.Synthetic(uint64(i), pl.Dim, world.DefaultBlockRegistry)
		if err := from.StoreColumn(pl.Pos, pl.Dim, col); err != nil {
			t.Fatal(err)
		}
		if pl == missing {
			continue
		}
		if pl == changed {
			worldtest.ChangeOneBlock(col, 5)
		}
		if err := to.StoreColumn(pl.Pos, pl.Dim, col); err != nil {
			t.Fatal(err)
		}
	}
	if err := verify(from, to, []place{same}, nil, nil); err != nil {
		t.Fatalf("a column converted exactly: %v", err)
	}
	if err := verify(from, to, []place{same, changed}, nil, nil); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Fatalf("a column that differs: %v", err)
	}
	if err := verify(from, to, []place{missing}, nil, nil); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("a column missing from the destination: %v", err)
	}
	failed := []Failure{{Pos: changed.Pos, Dim: changed.Dim}, {Pos: missing.Pos, Dim: missing.Dim}}
	if err := verify(from, to, []place{same, changed, missing}, failed, nil); err != nil {
		t.Fatalf("columns reported as failed are not verified: %v", err)
	}
}
