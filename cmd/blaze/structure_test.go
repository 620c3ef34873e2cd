package main

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/restore"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/structure"
)

// blocksOf returns the blocks (layer 0) of the box lo..hi of the world in
// dir, read through a World on it.
func blocksOf(t *testing.T, dir string, lo, hi cube.Pos) []world.Block {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	db, err := provider.Config{Log: log, ReadOnly: true}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, ReadOnly: true, Log: log}.New()
	defer w.Close()
	var out []world.Block
	<-w.Do(func(tx *world.Tx) {
		for x := lo[0]; x <= hi[0]; x++ {
			for y := lo[1]; y <= hi[1]; y++ {
				for z := lo[2]; z <= hi[2]; z++ {
					out = append(out, tx.Block(cube.Pos{x, y, z}))
				}
			}
		}
	}).Done()
	return out
}

// Issue 36 (tools): blaze export writes an area as a snapshot holds it
// (or as the world is now) to a .mcstructure, and blaze import pastes it
// into another world, block for block.
func TestExportImportCommands(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	src := t.TempDir()
	db, err := provider.Config{Log: log}.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: log}.New()
	a, b := cube.Pos{3, 64, 5}, cube.Pos{20, 70, 30} // chunks (0,0) and (1,1)
	<-w.Do(func(tx *world.Tx) {
		for x := 0; x < 32; x++ {
			tx.SetBlock(cube.Pos{x, 60, x}, block.Planks{Wood: block.OakWood()}, nil)
		}
		tx.SetBlock(a, block.Stone{}, nil)
		tx.SetBlock(b, block.Glowstone{}, nil)
	}).Done()
	w.Save()
	if err := db.Snapshot("s"); err != nil {
		t.Fatal(err)
	}
	<-w.Do(func(tx *world.Tx) {
		tx.SetBlock(a, block.Air{}, nil)
		tx.SetBlock(b, block.Dirt{}, nil)
	}).Done()
	w.Close() // saves, and closes db

	ar, err := parseArea("1,1,0,0", "overworld")
	if err != nil {
		t.Fatal(err)
	}
	ar.ylo, ar.yhi, err = parseHeights("72,58", world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	old, now := filepath.Join(t.TempDir(), "old.mcstructure"), filepath.Join(t.TempDir(), "now.mcstructure")
	if code := runExport(&out, src, "s", ar, old); code != exitOK {
		t.Fatalf("export at s: %d", code)
	}
	if !strings.HasPrefix(out.String(), old+": 32×15×32 blocks") {
		t.Fatalf("export printed %q", out.String())
	}
	if code := runExport(&out, src, "now", ar, now); code != exitOK {
		t.Fatalf("export now: %d", code)
	}
	if code := runExport(&out, src, "nowhere", ar, now); code != exitFailed {
		t.Fatalf("export at no point: %d", code)
	}

	// Pasted elsewhere in another world, the blocks are the snapshot's.
	dst := t.TempDir()
	d, err := provider.Config{Log: log}.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	off := cube.Pos{100, 2, -40}
	lo, hi := cube.Pos{0, 58, 0}, cube.Pos{31, 72, 31}
	out.Reset()
	if code := runImport(&out, dst, old, lo.Add(off), world.Overworld); code != exitOK {
		t.Fatalf("import: %d", code)
	}
	if !strings.Contains(out.String(), "32×15×32 blocks pasted") || !strings.Contains(out.String(), "before-import-") {
		t.Fatalf("import printed %q", out.String())
	}
	want, got := blocksOf(t, src, lo, hi), blocksOf(t, dst, lo.Add(off), hi.Add(off))
	// The source now differs from the snapshot at a and b: take its blocks
	// as the snapshot had them.
	i := func(p cube.Pos) int { return (p[0]-lo[0])*15*32 + (p[1]-lo[1])*32 + (p[2] - lo[2]) }
	want[i(a)], want[i(b)] = block.Stone{}, block.Glowstone{}
	planks := 0
	for k := range want {
		if world.BlockRuntimeID(want[k]) != world.BlockRuntimeID(got[k]) {
			t.Fatalf("block %d: pasted %#v, want %#v", k, got[k], want[k])
		}
		if _, ok := want[k].(block.Planks); ok {
			planks++
		}
	}
	if planks != 32 {
		t.Fatalf("%d planks in the area, want 32", planks)
	}
	// The present, pasted over it, has a and b as they are now.
	if code := runImport(&out, dst, now, lo.Add(off), world.Overworld); code != exitOK {
		t.Fatalf("import now: %d", code)
	}
	got = blocksOf(t, dst, lo.Add(off), hi.Add(off))
	if _, ok := got[i(a)].(block.Air); !ok {
		t.Fatalf("a after pasting the present: %#v", got[i(a)])
	}
	if _, ok := got[i(b)].(block.Dirt); !ok {
		t.Fatalf("b after pasting the present: %#v", got[i(b)])
	}

	// Malformed arguments.
	for _, args := range [][]string{
		{src, old, "-area", "0,0,1,1"},                        // export without -at
		{src, "-at", "s", old},                                // export without -area
		{src, "-at", "s", "-area", "0,0,1,1", "-y", "1", old}, // -y not a range
	} {
		if code := exportCmd(args); code != exitUsage {
			t.Fatalf("export %q: %d", args, code)
		}
	}
	for _, args := range [][]string{{dst, old}, {dst, old, "-at", "1,2"}, {dst, old, "-at", "1,2,3", "-dim", "moon"}} {
		if code := importCmd(args); code != exitUsage {
			t.Fatalf("import %q: %d", args, code)
		}
	}
	if code := runImport(&out, dst, filepath.Join(t.TempDir(), "missing"), off, world.Overworld); code != exitFailed {
		t.Fatalf("import of no file: %d", code)
	}
	// A file whose structure declares 2^31-1 layers of block indices
	// fails; the decoder alone would allocate 48 GiB of slices for them
	// first, and die of it.
	huge := filepath.Join(t.TempDir(), "huge.mcstructure")
	rec := append([]byte{10, 0, 0, 10, 9, 0}, "structure"...)
	rec = append(append(rec, 9, 13, 0), "block_indices"...)
	rec = binary.LittleEndian.AppendUint32(append(rec, 9), 1<<31-1)
	if err := os.WriteFile(huge, append(rec, 0, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := runImport(&out, dst, huge, off, world.Overworld); code != exitFailed {
		t.Fatalf("import of a damaged file: %d", code)
	}
	// A structure whose block index lies beyond its palette is refused
	// before anything is written, and leaves no snapshot to undo it with.
	before := snapshotNames(t, dst)
	bad := structure.New([3]int{1, 1, 1})
	bad.Set(0, 0, 0, block.Stone{}, nil)
	bad.Structure.BlockIndices[0][0] = 1_000_000
	badFile := filepath.Join(t.TempDir(), "bad.mcstructure")
	if err := structure.WriteFile(badFile, bad); err != nil {
		t.Fatal(err)
	}
	if code := runImport(&out, dst, badFile, off, world.Overworld); code != exitFailed {
		t.Fatalf("import of a structure indexing beyond its palette: %d", code)
	}
	if after := snapshotNames(t, dst); !slices.Equal(before, after) {
		t.Fatalf("a refused import left snapshots %v, had %v", after, before)
	}
}

// snapshotNames lists the snapshots of the world in dir.
func snapshotNames(t *testing.T, dir string) []string {
	t.Helper()
	db, err := openHistoried(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ss, err := db.Snapshots()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	return names
}

// sameStructure compares two structures block by block.
func sameStructure(t *testing.T, a, b structure.Structure) {
	t.Helper()
	da, db := a.Dimensions(), b.Dimensions()
	if da != db {
		t.Fatalf("dimensions %v and %v", da, db)
	}
	for x := 0; x < da[0]; x++ {
		for y := 0; y < da[1]; y++ {
			for z := 0; z < da[2]; z++ {
				ba, _ := a.At(x, y, z, nil)
				bb, _ := b.At(x, y, z, nil)
				if world.BlockRuntimeID(ba) != world.BlockRuntimeID(bb) {
					t.Fatalf("block %d,%d,%d: %#v, want %#v", x, y, z, ba, bb)
				}
			}
		}
	}
}

// Issue 36 (tools): blaze export reads a segmented world at a snapshot
// and now, and refuses now when a snapshot is named so.
func TestExportSegmented(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	seg := t.TempDir()
	p, err := segment.Config{Log: log, SegmentSize: 4}.Open(seg)
	if err != nil {
		t.Fatal(err)
	}
	p.StoreColumn(world.ChunkPos{5, 0}, world.Overworld, synth(1, world.Overworld))
	if err := p.Snapshot("s"); err != nil {
		t.Fatal(err)
	}
	p.StoreColumn(world.ChunkPos{5, 0}, world.Overworld, synth(2, world.Overworld))
	p.Close()
	// The structures expected: the synthetic columns, exported from a
	// world of their own.
	want := func(seed uint64) structure.Structure {
		db := openTest(t, t.TempDir())
		defer db.Close()
		store(t, db, 5, 0, world.Overworld, seed)
		s, err := restore.Export(db, world.Overworld, cube.Pos{80, -64, 0}, cube.Pos{95, -40, 15})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ar, _ := parseArea("5,0,5,0", "")
	ar.ylo, ar.yhi, _ = parseHeights("-64,-40", world.Overworld)
	var out bytes.Buffer
	for point, seed := range map[string]uint64{"s": 1, "now": 2} {
		file := filepath.Join(t.TempDir(), point+".mcstructure")
		if code := runExport(&out, seg, point, ar, file); code != exitOK {
			t.Fatalf("export of a segmented world at %s: %d", point, code)
		}
		got, err := structure.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sameStructure(t, got, want(seed))
	}
	if code := runSnapshotCreate(&out, seg, "now"); code != exitOK {
		t.Fatalf("snapshot named now: %d", code)
	}
	if code := runExport(&out, seg, "now", ar, filepath.Join(t.TempDir(), "x")); code != exitFailed {
		t.Fatalf("export at now, which a snapshot is named: %d", code)
	}
}
