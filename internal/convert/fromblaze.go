package convert

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/internal/progress"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/world/mcdb"
)

// fromBlaze converts a Blaze world to LevelDB.
func fromBlaze(src, dst string, o Options) (*Report, error) {
	r := &Report{From: "blaze", To: "leveldb"}
	// A segmented world (package segment) keeps its columns in one
	// database a region, beside the world's own.
	regions, err := segment.Regions(src)
	if err != nil {
		return nil, err
	}
	bz, err := provider.Config{Log: o.Log, ReadOnly: true, SegmentRoot: true}.Open(src) // its regions are read below
	if err != nil {
		return nil, fmt.Errorf("open source: %w", err)
	}
	defer bz.Close()
	if err := copyFileIfExists(filepath.Join(src, "level.dat"), filepath.Join(dst, "level.dat")); err != nil {
		return nil, err
	}
	// The world's records first: the player spawns below go into
	// Bedrock's player data among them.
	if err := writeWorldExtras(bz, dst, r); err != nil {
		return r, err
	}
	mc, err := mcdb.Config{Log: o.Log}.Open(dst)
	if err != nil {
		return nil, fmt.Errorf("open destination: %w", err)
	}
	// One bar for the whole world: a segmented world's total is only
	// known region by region. It counts the columns copied, and says when
	// a region's are verified.
	var bar *progress.Bar
	if len(regions) > 0 {
		bar = progress.New(o.Progress, -1, "converting")
	}
	if err := copyFromBlaze(bz, src, mc, o, r, bar); err != nil {
		mc.Close()
		return r, err
	}
	for _, dir := range regions {
		reg, err := provider.Config{Log: o.Log, ReadOnly: true, NoLevelDat: true}.Open(dir)
		if err != nil {
			mc.Close()
			return r, fmt.Errorf("open source region: %w", err)
		}
		err = errors.Join(copyFromBlaze(reg, dir, mc, o, r, bar), reg.Close())
		if err != nil {
			mc.Close()
			return r, err
		}
	}
	bar.Finish()
	spawns, err := bz.PlayerSpawns()
	if err != nil {
		mc.Close()
		return r, err
	}
	for _, p := range spawns {
		if p.Err != nil {
			r.FailedPlayers = append(r.FailedPlayers, PlayerFailure{p.Name, p.Err})
			continue
		}
		if err := mc.SavePlayerSpawnPosition(p.ID, p.Pos); err != nil {
			mc.Close()
			return r, err
		}
		r.Players++
	}
	mc.SaveSettings(bz.Settings())
	// Every phase shows progress (issue 38 item 5): those that count no
	// columns as steps.
	step := progress.Start(o.Progress, "closing the destination and writing the LevelDB records the columns carry")
	defer step.Done()
	if err := mc.Close(); err != nil {
		return r, fmt.Errorf("close destination: %w", err)
	}
	return r, writeColumnExtras(bz, regions, dst, o, r)
}

// copyFromBlaze copies every column of the Blaze database bz to mc,
// counting them on bar (nil: a bar of its own), and verifies each (on a
// bar of its own, or retitling bar while it does); dir names bz.
func copyFromBlaze(bz *provider.DB, dir string, mc *mcdb.DB, o Options, r *Report, bar *progress.Bar) error {
	places, err := bz.Columns()
	if err != nil {
		return err
	}
	if len(places) == 0 {
		return nil
	}
	if bar != nil {
		bar.Describe("converting " + dir)
	}
	if err := copyColumns(pair{from: bz, to: mc}, places, o, r, bar); err != nil {
		return err
	}
	vbar := bar
	if bar == nil {
		vbar = progress.New(o.Progress, len(places)-len(r.Failed), "verifying")
	} else {
		bar.Describe("verifying " + dir)
		vbar = nil // the count is of columns copied
	}
	if err := verifyCounting(bz, mc, places, r.Failed, LevelDBView, vbar); err != nil {
		return err
	}
	if bar == nil {
		vbar.Finish()
	}
	return nil
}

func copyFileIfExists(from, to string) error {
	b, err := os.ReadFile(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return vfs.ReplaceFile(vfs.Default, filepath.Dir(to), filepath.Base(to), b) // synced, as all Blaze writes
}
