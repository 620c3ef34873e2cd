package tests

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/mcdb"
	"github.com/df-mc/goleveldb/leveldb"
)

// extrasOf reads every column's extra records of p at places.
func extrasOf(t *testing.T, p provider.ExtraCarrier, places []provider.Place) map[provider.Place][]provider.ExtraRecord {
	t.Helper()
	out := map[provider.Place][]provider.ExtraRecord{}
	for _, pl := range places {
		recs, err := p.ColumnExtras(pl.Pos, pl.Dim)
		if err != nil {
			t.Fatal(err)
		}
		out[pl] = recs
	}
	return out
}

func sameExtras(t *testing.T, what string, want, got map[provider.Place][]provider.ExtraRecord) {
	t.Helper()
	for pl, w := range want {
		g := got[pl]
		if len(g) != len(w) {
			t.Fatalf("%s: column %v (%v) has %d extra records, had %d", what, pl.Pos, pl.Dim, len(g), len(w))
		}
		for i := range w {
			if g[i].Kind != w[i].Kind || !bytes.Equal(g[i].Key, w[i].Key) || !bytes.Equal(g[i].Value, w[i].Value) {
				t.Fatalf("%s: column %v (%v): extra record %x differs", what, pl.Pos, pl.Dim, w[i].Key)
			}
		}
	}
}

// play runs a Dragonfly World on p that puts a stone block in every column
// at places (so that it loads and stores each), then closes it (and p).
func play(t *testing.T, p world.Provider, places []provider.Place) {
	t.Helper()
	w := world.Config{Provider: p, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	<-w.Do(func(tx *world.Tx) {
		for _, pl := range places {
			tx.SetBlock(stonePos(pl), block.Stone{}, nil)
		}
	}).Done()
	w.Close()
}

func stonePos(pl provider.Place) cube.Pos {
	return cube.Pos{int(pl.Pos[0])*16 + 3, 310, int(pl.Pos[1])*16 + 5}
}

// hasStone checks that the World stored the column at pl.
func hasStone(t *testing.T, what string, p world.Provider, pl provider.Place) {
	t.Helper()
	col, err := p.LoadColumn(pl.Pos, pl.Dim)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	sp := stonePos(pl)
	if rid := col.Chunk.Block(uint8(sp[0]&15), int16(sp[1]), uint8(sp[2]&15), 0); rid != world.BlockRuntimeID(block.Stone{}) {
		t.Fatalf("%s: column %v was not stored by the World", what, pl.Pos)
	}
}

// Issue 38 item 3: the records of a real LevelDB world that Blaze carries
// with its columns stay with them while a server on Blaze loads and stores
// those columns, through a compaction, a backup, an overlay over the world
// as a template and a segmented world, and come back as LevelDB keys.
func TestConvertExtrasFollowColumns(t *testing.T) {
	path := worldtest.Worlds(t)[1] // 1.21: structures, blending data, entities under digp
	src := worldtest.UnpackTemp(t, path)
	want := keysOf(t, worldtest.UnpackTemp(t, path))
	bz := filepath.Join(t.TempDir(), "blaze")
	if _, err := convert.Convert(src, bz, convert.Options{}); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "fresh") // for the segmented world
	if _, err := convert.Convert(src, fresh, convert.Options{}); err != nil {
		t.Fatal(err)
	}
	db, err := provider.Config{Log: quiet}.Open(bz)
	if err != nil {
		t.Fatal(err)
	}
	all, err := db.ExtraColumns()
	if err != nil {
		t.Fatal(err)
	}
	// The overworld's columns that carry records: the World below is one.
	var places []provider.Place
	for _, pl := range all {
		if _, err := db.LoadColumn(pl.Pos, pl.Dim); err == nil && pl.Dim == world.Overworld {
			places = append(places, pl)
		}
	}
	if len(places) == 0 {
		t.Fatal("no column carries extra records")
	}
	before := extrasOf(t, db, places)
	play(t, db, places) // closes db

	db, err = provider.Config{Log: quiet}.Open(bz)
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range places {
		hasStone(t, "after the World", db, pl)
	}
	sameExtras(t, "after the World stored the columns", before, extrasOf(t, db, places))
	if err := db.Engine().Compact(); err != nil {
		t.Fatal(err)
	}
	sameExtras(t, "after compaction", before, extrasOf(t, db, places))
	backup := filepath.Join(t.TempDir(), "backup")
	if err := db.Backup(backup); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := provider.Config{Log: quiet, ReadOnly: true}.Open(backup)
	if err != nil {
		t.Fatal(err)
	}
	sameExtras(t, "in the backup", before, extrasOf(t, b, places))
	b.Close()

	// An overlay over the world: the template's records show through the
	// columns the match stored.
	tmpl, err := provider.Config{Log: quiet, ReadOnly: true}.Open(bz)
	if err != nil {
		t.Fatal(err)
	}
	defer tmpl.Close()
	o, err := overlay.Config{Log: quiet}.Open(tmpl, filepath.Join(t.TempDir(), "arena"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	play(t, o, places)
	if err := o.ResetOverlay(); err == nil { // reopens; the match is forgotten, so play once more
		play(t, o, places)
		err = o.ResetOverlay()
	} else {
		t.Fatal(err)
	}
	// Stores into an open overlay, read without a reset.
	w := world.Config{Provider: o, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	<-w.Do(func(tx *world.Tx) {
		for _, pl := range places {
			tx.SetBlock(stonePos(pl), block.Stone{}, nil)
		}
	}).Done()
	w.Save()
	dirty, err := o.Dirty()
	if err != nil || len(dirty) < len(places) {
		t.Fatalf("the overlay holds %d columns (%v), want the %d stored", len(dirty), err, len(places))
	}
	sameExtras(t, "through the overlay", before, extrasOf(t, o, places))
	w.Close()

	// A segmented world holding the same columns and records, as
	// converted.
	tmpl, err = provider.Config{Log: quiet, ReadOnly: true}.Open(fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer tmpl.Close()
	segDir := filepath.Join(t.TempDir(), "segmented")
	seg, err := segment.Config{Log: quiet, SegmentSize: 2}.Open(segDir)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := tmpl.Columns()
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range cols {
		col, err := tmpl.LoadColumn(pl.Pos, pl.Dim)
		if err != nil {
			t.Fatal(err)
		}
		if err := seg.StoreColumn(pl.Pos, pl.Dim, col); err != nil {
			t.Fatal(err)
		}
	}
	for pl, recs := range extrasOf(t, tmpl, all) {
		if err := seg.SetColumnExtras(pl.Pos, pl.Dim, recs); err != nil {
			t.Fatal(err)
		}
	}
	err = tmpl.WorldExtras(func(r provider.ExtraRecord) error { return seg.SetWorldExtra(r) })
	if err != nil {
		t.Fatal(err)
	}
	// The world's time: the World keeps scheduled updates relative to it.
	set := seg.Settings()
	set.CurrentTick = tmpl.Settings().CurrentTick
	seg.SaveSettings(set)
	play(t, seg, places) // closes seg
	seg, err = segment.Config{Log: quiet}.Open(segDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range places {
		hasStone(t, "segmented", seg, pl)
	}
	sameExtras(t, "in the segmented world", before, extrasOf(t, seg, places))
	if err := seg.CompactSegment(places[0].Pos, places[0].Dim); err != nil {
		t.Fatal(err)
	}
	sameExtras(t, "after the region's compaction", before, extrasOf(t, seg, places))
	seg.Close()
	// Each region holds the records of its own columns.
	regions, err := segment.Regions(segDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range regions {
		r, err := provider.Config{Log: quiet, ReadOnly: true, NoLevelDat: true}.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		in, err := r.ExtraColumns()
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Split(filepath.Base(dir), ".") // r.<x>.<z>
		rx, _ := strconv.Atoi(f[1])
		rz, _ := strconv.Atoi(f[2])
		for _, pl := range in {
			if floor2(pl.Pos[0]) != rx || floor2(pl.Pos[1]) != rz {
				t.Fatalf("column %v's records are in region %s", pl.Pos, dir)
			}
		}
		n += len(in)
	}
	if n != len(all) {
		t.Fatalf("%d columns' records in the regions, want %d", n, len(all))
	}

	// Both worlds, after the server, convert back with every key the same
	// server keeps on Dragonfly's LevelDB provider: it drops the entities
	// of types it does not implement from the columns it stores, and with
	// them their actorprefix keys, on either provider.
	ldbDir := worldtest.UnpackTemp(t, path)
	mc, err := mcdb.Config{Log: quiet}.Open(ldbDir)
	if err != nil {
		t.Fatal(err)
	}
	play(t, mc, places)
	want = keysOf(t, ldbDir)
	for _, from := range []string{bz, segDir} {
		back := filepath.Join(t.TempDir(), "back")
		if _, err := convert.Convert(from, back, convert.Options{}); err != nil {
			t.Fatal(err)
		}
		got := keysOf(t, back)
		for k := range want {
			if _, ok := got[k]; !ok {
				t.Fatalf("%s: key %q lost", from, k)
			}
		}
	}
}

func floor2(v int32) int {
	if v < 0 {
		return int((v - 1) / 2)
	}
	return int(v / 2)
}

// keysOf lists the keys of the LevelDB world in dir.
func keysOf(t *testing.T, dir string) map[string]bool {
	t.Helper()
	ldb, err := leveldb.OpenFile(filepath.Join(dir, "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ldb.Close()
	out := map[string]bool{}
	it := ldb.NewIterator(nil, nil)
	defer it.Release()
	for it.Next() {
		out[string(it.Key())] = true
	}
	if err := it.Error(); err != nil {
		t.Fatal(fmt.Errorf("list keys: %w", err))
	}
	return out
}
