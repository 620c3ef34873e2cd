package convert

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/blazeworld/blaze/internal/progress"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/dragonfly/server/world/mcdb"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/df-mc/goleveldb/leveldb/opt"
	"github.com/google/uuid"
)

func fromLevelDB(src, dst string, o Options) (*Report, error) {
	r := &Report{From: "leveldb", To: "blaze"}
	// Opening a LevelDB world writes to it: work on a copy.
	tmp, err := os.MkdirTemp("", "blaze-convert-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// Every phase shows progress (issue 38 item 5): those that count no
	// columns as steps.
	step := progress.Start(o.Progress, "copying the source to a temporary directory (opening a LevelDB world writes to it)")
	err = fsutil.CopyTree(src, tmp, nil)
	step.Done()
	if err != nil {
		return nil, fmt.Errorf("copy source: %w", err)
	}
	step = progress.Start(o.Progress, "listing the source's columns")
	places, players, err := scanLevelDB(filepath.Join(tmp, "db"))
	step.Done()
	if err != nil {
		return nil, err
	}
	if err := copyFileIfExists(filepath.Join(src, "level.dat"), filepath.Join(dst, "level.dat")); err != nil {
		return nil, err
	}
	// The destination first: opening it checks the level.dat just copied,
	// which Dragonfly's reader takes on trust (a damaged length in its
	// header panics).
	// ExternalMaintenance: stores are written at once, not queued (issue
	// 42), so that a column the provider refuses is reported as that
	// column's failure; a conversion needs no background work.
	bz, err := provider.Config{Log: o.Log, Durability: blazedb.DurabilityFast, ExternalMaintenance: true, Compression: o.Compression}.Open(dst)
	if err != nil {
		return nil, fmt.Errorf("open destination, with the source's level.dat: %w", err)
	}
	// Read-only: the copy is read, never written (nor compacted).
	mc, err := mcdb.Config{Log: o.Log, LDBOptions: &opt.Options{ReadOnly: true}}.Open(tmp)
	if err != nil {
		bz.Close()
		return nil, fmt.Errorf("open source: %w", err)
	}
	defer func() { mc.Close() }()
	// Each column is read from the source once: what the verification
	// compares the destination with is its Sum (colcmp), taken as it is
	// written, and what extras need of it (writtenOf). Both sides are safe
	// for concurrent use: a column is read and written on every core.
	summer := colcmp.NewSummer()
	sums := make([]colcmp.Sum, len(places))
	kinds := make([]written, len(places))
	store := func(i int, col *chunk.Column) { sums[i], kinds[i] = summer.Sum(col), writtenOf(col) }
	if err := copyColumns(pair{from: mc, to: bz, stored: store, workers: runtime.GOMAXPROCS(0)}, places, o, r, nil); err != nil {
		bz.Close()
		return r, err
	}
	cols := map[place]written{}
	failed := failedSet(r.Failed)
	for i, pl := range places {
		if !failed[pl] {
			cols[pl] = kinds[i]
		}
	}
	for _, id := range players {
		pos, ok, err := loadSpawn(mc, id)
		if err != nil {
			r.FailedPlayers = append(r.FailedPlayers, PlayerFailure{id.String(), err})
			continue
		}
		if !ok {
			continue
		}
		if err := bz.SavePlayerSpawnPosition(id, pos); err != nil {
			bz.Close()
			return r, err
		}
		r.Players++
	}
	bz.SaveSettings(mc.Settings())
	// The keys the columns do not carry are read with the database to
	// themselves: Dragonfly's provider holds it open.
	var x *extras
	step = progress.Start(o.Progress, "copying the LevelDB records Blaze keeps as they are")
	if err = mc.Close(); err == nil {
		x, err = readExtras(filepath.Join(tmp, "db"), cols)
	}
	if err == nil {
		err = storeExtras(bz, x, r)
	}
	step.Done()
	if err != nil {
		bz.Close()
		return r, err
	}
	if err := bz.Close(); err != nil {
		return r, fmt.Errorf("close destination: %w", err)
	}
	check, err := provider.Config{Log: o.Log, ReadOnly: true}.Open(dst)
	if err != nil {
		return r, fmt.Errorf("reopen destination: %w", err)
	}
	defer check.Close()
	bar := progress.New(o.Progress, len(places)-len(r.Failed), "verifying")
	if err := verifySums(check, places, failed, summer, sums, bar); err != nil {
		return r, err
	}
	bar.Finish()
	step = progress.Start(o.Progress, "verifying the LevelDB records kept")
	err = verifyExtras(check, x)
	step.Done()
	return r, err
}

// scanLevelDB lists the columns and players of a LevelDB database by its
// keys, so that one unreadable column does not hide the rest.
func scanLevelDB(dir string) ([]place, []uuid.UUID, error) {
	ldb, err := leveldb.OpenFile(dir, &opt.Options{ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("open source database: %w", err)
	}
	defer ldb.Close()
	var places []place
	var players []uuid.UUID
	seen := map[place]bool{}
	it := ldb.NewIterator(nil, nil)
	defer it.Release()
	for it.Next() {
		k := it.Key()
		if name := string(k); strings.HasPrefix(name, "player_") && !strings.HasPrefix(name, "player_server_") {
			if id, err := uuid.Parse(strings.TrimPrefix(name, "player_")); err == nil {
				players = append(players, id)
			}
			continue
		}
		if n := len(k); (n != 9 && n != 13) || (k[n-1] != ',' && k[n-1] != 'v') {
			continue
		}
		pl := place{Pos: world.ChunkPos{int32(binary.LittleEndian.Uint32(k)), int32(binary.LittleEndian.Uint32(k[4:]))}, Dim: world.Overworld}
		if len(k) == 13 {
			d, ok := world.DimensionByID(int(int32(binary.LittleEndian.Uint32(k[8:]))))
			if !ok {
				continue
			}
			pl.Dim = d
		}
		if !seen[pl] {
			seen[pl] = true
			places = append(places, pl)
		}
	}
	return places, players, it.Error()
}

// failedSet is the places of failed.
func failedSet(failed []Failure) map[place]bool {
	skip := map[place]bool{}
	for _, f := range failed {
		skip[place{Pos: f.Pos, Dim: f.Dim}] = true
	}
	return skip
}

// verifySums reads back every written column (places but those failed)
// from to, on every core, and checks that each has the Sum of the source
// column it was written from (sums, by index in places).
func verifySums(to world.Provider, places []place, failed map[place]bool, summer *colcmp.Summer, sums []colcmp.Sum, bar *progress.Bar) error {
	var next atomic.Int64
	var stop atomic.Bool
	errs := make([]error, len(places))
	done := make(chan struct{}, len(places))
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(places)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(places) && !stop.Load(); i = int(next.Add(1) - 1) {
				pl := places[i]
				if failed[pl] {
					continue
				}
				b, err := to.LoadColumn(pl.Pos, pl.Dim)
				if err != nil {
					errs[i] = fmt.Errorf("verify: read back column %v (%v): %w", pl.Pos, pl.Dim, err)
				} else if summer.Sum(b) != sums[i] {
					errs[i] = fmt.Errorf("verify: column %v (%v) differs after conversion from the column read from the source", pl.Pos, pl.Dim)
				}
				if errs[i] != nil {
					stop.Store(true)
				}
				done <- struct{}{}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	for range done {
		bar.Add()
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
