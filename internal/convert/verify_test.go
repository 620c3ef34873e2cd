package convert

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/blazeworld/blaze/internal/colcmp"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
)

// verify fails a conversion whose destination does not read back every
// column the source holds, exactly, except the columns already reported
// as failed.
func TestVerifyFindsDifferences(t *testing.T) {
	from, to := openTemp(t), openTemp(t)
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

// Issue 42 item 4: a conversion from LevelDB reads each source column
// once, and verifies the destination against the Sum of what it read:
// verifySums finds a column that differs or is missing, except those
// reported as failed.
func TestVerifySumsFindsDifferences(t *testing.T) {
	to, err := provider.Config{}.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer to.Close()
	summer := colcmp.NewSummer()
	places := []place{{Pos: world.ChunkPos{0, 0}, Dim: world.Overworld}, {Pos: world.ChunkPos{1, 0}, Dim: world.Nether}, {Pos: world.ChunkPos{2, 0}, Dim: world.End}}
	sums := make([]colcmp.Sum, len(places))
	for i, pl := range places[:2] {
		col := smallColumn(pl.Dim, uint32(i))
		sums[i] = summer.Sum(col)
		if i == 1 {
			col.Chunk.SetBlock(1, 2, 3, 0, 7)
		}
		if err := to.StoreColumn(pl.Pos, pl.Dim, col); err != nil {
			t.Fatal(err)
		}
	}
	none := map[place]bool{}
	if err := verifySums(to, places[:1], none, summer, sums, nil); err != nil {
		t.Fatalf("a column converted exactly: %v", err)
	}
	if err := verifySums(to, places[:2], none, summer, sums, nil); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Fatalf("a column that differs: %v", err)
	}
	if err := verifySums(to, []place{places[0], places[2]}, none, summer, sums, nil); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("a column missing from the destination: %v", err)
	}
	if err := verifySums(to, places, map[place]bool{places[1]: true, places[2]: true}, summer, sums, nil); err != nil {
		t.Fatalf("columns reported as failed are not verified: %v", err)
	}
}

// smallColumn is a column of dim with one block set (to rid): quick to
// store and compare under the race detector.
func smallColumn(dim world.Dimension, rid uint32) *chunk.Column {
	c := chunk.New(world.DefaultBlockRegistry, dim.Range())
	c.SetBlock(0, int16(dim.Range()[0]), 0, 0, rid+1)
	return &chunk.Column{Chunk: c}
}

// countingProvider counts the loads of a real provider.
type countingProvider struct {
	*provider.DB
	mu    sync.Mutex
	loads map[place]int
}

func (p *countingProvider) LoadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error) {
	p.mu.Lock()
	p.loads[place{Pos: pos, Dim: dim}]++
	p.mu.Unlock()
	return p.DB.LoadColumn(pos, dim)
}

// openTemp opens a new Blaze world in a temporary directory, closed with
// the test.
func openTemp(t *testing.T) *provider.DB {
	db, err := provider.Config{}.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Issue 42 item 4: copyColumns (a conversion from Blaze) reads each column
// once, writes every one it can read, and reports those it could not read
// in the order of the places.
func TestCopyColumns(t *testing.T) {
	src, dst := &countingProvider{DB: openTemp(t), loads: map[place]int{}}, openTemp(t)
	var places []place
	for i := range 12 {
		pl := place{Pos: world.ChunkPos{int32(i), 0}, Dim: world.Overworld}
		places = append(places, pl)
		if i%5 == 3 {
			continue // missing: cannot be read
		}
		if err := src.StoreColumn(pl.Pos, pl.Dim, smallColumn(pl.Dim, uint32(i))); err != nil {
			t.Fatal(err)
		}
	}
	var r Report
	if err := copyColumns(pair{from: src, to: dst}, places, Options{Log: slog.New(slog.DiscardHandler)}, &r, nil); err != nil {
		t.Fatal(err)
	}
	if r.Columns != 10 || len(r.Failed) != 2 || r.Failed[0].Pos != places[3].Pos || r.Failed[1].Pos != places[8].Pos {
		t.Fatalf("report %+v", r)
	}
	for _, pl := range places {
		if n := src.loads[pl]; n != 1 {
			t.Fatalf("column %v read %d times", pl.Pos, n)
		}
	}
	for i, pl := range places {
		if ok, err := dst.Has(pl.Pos, pl.Dim); err != nil || ok == (i%5 == 3) {
			t.Fatalf("column %v written: %v, %v", pl.Pos, ok, err)
		}
	}
}
