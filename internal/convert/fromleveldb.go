package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/blazeworld/blaze/internal/progress"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/mcdb"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/df-mc/goleveldb/leveldb/opt"
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
	// Each column is read from the source once: what the verification
	// compares the destination with is its Sum (colcmp), taken as it is
	// written. Both sides are safe for concurrent use: a column is read
	// and written on every core.
	summer := colcmp.NewSummer()
	pass, err := passLevelDB(filepath.Join(tmp, "db"), bz, summer, o)
	if err != nil {
		bz.Close()
		return r, err
	}
	places := pass.places
	reportColumns(r, o, places, func(i int) error { return pass.cols[i].err })
	failed := failedSet(r.Failed)
	sums := make([]colcmp.Sum, len(places))
	for i := range places {
		sums[i] = pass.cols[i].sum
	}
	// Dragonfly's provider reads level.dat and the players' spawns, once
	// the pass has closed the database (it holds it to itself).
	mc, err := mcdb.Config{Log: o.Log, LDBOptions: &opt.Options{ReadOnly: true}}.Open(tmp)
	if err != nil {
		bz.Close()
		return r, fmt.Errorf("open source: %w", err)
	}
	defer mc.Close()
	for _, id := range pass.players {
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
	x := pass.x
	step = progress.Start(o.Progress, "copying the LevelDB records Blaze keeps as they are")
	err = storeExtras(bz, x, r)
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

// passLevelDB reads the LevelDB database in dir in one pass (ldbpass.go),
// storing its columns into to on every core.
func passLevelDB(dir string, to world.Provider, summer *colcmp.Summer, o Options) (*levelDBPass, error) {
	ldb, err := leveldb.OpenFile(dir, &opt.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("open source database: %w", err)
	}
	defer ldb.Close()
	blocks := world.DefaultBlockRegistry
	blocks.Finalize() // as mcdb's Open does
	cr := &columnReader{ldb: ldb, blocks: blocks, log: o.Log.With("provider", "mcdb")}
	// The number of columns is known only at the end of the pass.
	bar := progress.New(o.Progress, -1, "converting")
	p, err := readLevelDB(cr, to, summer, runtime.GOMAXPROCS(0), bar)
	if err != nil {
		return nil, err
	}
	bar.Finish()
	return p, nil
}
