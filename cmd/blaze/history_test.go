package main

import (
	"bytes"
	"errors"
	"flag"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
)

func openTest(t *testing.T, dir string) *provider.DB {
	t.Helper()
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler)}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func synth(seed uint64, dim world.Dimension) *chunk.Column {
	return worldtest.Synthetic(seed, dim, world.DefaultBlockRegistry)
}

func store(t *testing.T, db *provider.DB, x, z int32, dim world.Dimension, seed uint64) {
	t.Helper()
	if err := db.StoreColumn(world.ChunkPos{x, z}, dim, synth(seed, dim)); err != nil {
		t.Fatal(err)
	}
}

// expect checks that the column at (x, z) in dim is synthetic column seed,
// or missing when seed is 0.
func expect(t *testing.T, db *provider.DB, x, z int32, dim world.Dimension, seed uint64) {
	t.Helper()
	got, err := db.LoadColumn(world.ChunkPos{x, z}, dim)
	if seed == 0 {
		if !errors.Is(err, leveldb.ErrNotFound) {
			t.Fatalf("column %d,%d (%v) should be missing: %v", x, z, dim, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(synth(seed, dim), got); err != nil {
		t.Fatalf("column %d,%d (%v) is not version %d: %v", x, z, dim, seed, err)
	}
}

// Issue 36 (tools): blaze snapshot create, list and delete.
func TestSnapshotCommands(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir)
	store(t, db, 0, 0, world.Overworld, 1)
	db.Close()
	var out bytes.Buffer
	if code := runSnapshotCreate(&out, dir, "s1"); code != exitOK {
		t.Fatalf("create: %d", code)
	}
	if code := runSnapshotCreate(&out, dir, "s1"); code != exitFailed {
		t.Fatalf("create of a name taken: %d", code)
	}
	if code := runSnapshotCreate(&out, dir, "2026-01-01T00:00:00Z"); code != exitFailed {
		t.Fatalf("create of a name that reads as a time: %d", code)
	}
	out.Reset()
	if code := runSnapshotList(&out, dir); code != exitOK || !regexp.MustCompile(`(?m)^s1\t\d{4}-\d\d-\d\dT\S+Z$`).MatchString(out.String()) || !strings.Contains(out.String(), "1 snapshot\n") {
		t.Fatalf("list: %d %q", code, out.String())
	}
	if code := runSnapshotDelete(&out, dir, "s1"); code != exitOK {
		t.Fatalf("delete: %d", code)
	}
	if code := runSnapshotDelete(&out, dir, "s1"); code != exitFailed {
		t.Fatalf("delete of a missing snapshot: %d", code)
	}
	out.Reset()
	if code := runSnapshotList(&out, dir); code != exitOK || !strings.Contains(out.String(), "0 snapshots") {
		t.Fatalf("list: %d %q", code, out.String())
	}
	if code := snapshotCmd([]string{"rename", dir}); code != exitUsage {
		t.Fatalf("an unknown subcommand: %d", code)
	}
	if code := runSnapshotList(&out, t.TempDir()); code != exitFailed {
		t.Fatalf("list of an empty directory: %d", code)
	}
	// A segmented world: snapshots in every region (package segment).
	seg := t.TempDir()
	p, err := segment.Config{Log: slog.New(slog.DiscardHandler), SegmentSize: 4}.Open(seg)
	if err != nil {
		t.Fatal(err)
	}
	p.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, synth(1, world.Overworld))
	p.Close()
	if code := runSnapshotCreate(&out, seg, "s"); code != exitOK {
		t.Fatalf("snapshot of a segmented world: %d", code)
	}
	p, err = segment.Config{Log: slog.New(slog.DiscardHandler)}.Open(seg)
	if err != nil {
		t.Fatal(err)
	}
	p.StoreColumn(world.ChunkPos{9, 9}, world.Overworld, synth(2, world.Overworld))
	p.Close()
	out.Reset()
	if code := runSnapshotList(&out, seg); code != exitOK || !strings.HasPrefix(out.String(), "s\t") {
		t.Fatalf("list of a segmented world: %d %q", code, out.String())
	}
	out.Reset()
	if code := runChanges(&out, seg, "s"); code != exitOK || out.String() != "overworld\t9\t9\n1 column changed since s\n" {
		t.Fatalf("changes of a segmented world: %d %q", code, out.String())
	}
	all, _ := parseArea("", "")
	out.Reset()
	if code := runRollback(&out, seg, "s", all); code != exitOK || !strings.HasPrefix(out.String(), seg+": 1 column rolled back to s\n") {
		t.Fatalf("rollback of a segmented world: %d %q", code, out.String())
	}
	p, err = segment.Config{Log: slog.New(slog.DiscardHandler)}.Open(seg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.LoadColumn(world.ChunkPos{9, 9}, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("a column of a region made after the snapshot, rolled back: %v", err)
	}
	p.Close()
	if code := runSnapshotDelete(&out, seg, "s"); code != exitOK {
		t.Fatalf("delete in a segmented world: %d", code)
	}
}

// Issue 36 (tools): blaze changes lists the columns changed after a point.
func TestChangesCommand(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir)
	store(t, db, 0, 0, world.Overworld, 1)
	store(t, db, 1, 0, world.Overworld, 2)
	if err := db.Snapshot("s"); err != nil {
		t.Fatal(err)
	}
	store(t, db, 1, 0, world.Overworld, 3)
	store(t, db, -4, 7, world.End, 4)
	db.Close()
	var out bytes.Buffer
	if code := runChanges(&out, dir, "s"); code != exitOK {
		t.Fatalf("changes: %d", code)
	}
	if want := "overworld\t1\t0\nend\t-4\t7\n2 columns changed since s\n"; out.String() != want {
		t.Fatalf("changes printed %q, want %q", out.String(), want)
	}
	if code := runChanges(&out, dir, "yesterday"); code != exitFailed {
		t.Fatalf("changes since no point: %d", code)
	}
	if code := changesCmd([]string{dir}); code != exitUsage {
		t.Fatalf("changes without -since: %d", code)
	}
}

// Issue 36 (tools): blaze rollback puts an area of one dimension back as
// it was, removes the columns made since, leaves everything else, and can
// be undone with the snapshot it takes first.
func TestRollbackCommand(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir)
	store(t, db, 0, 0, world.Overworld, 1)
	store(t, db, 10, 10, world.Overworld, 2)
	store(t, db, 0, 0, world.Nether, 3)
	if err := db.Snapshot("s"); err != nil {
		t.Fatal(err)
	}
	store(t, db, 0, 0, world.Overworld, 11)
	store(t, db, 10, 10, world.Overworld, 12)
	store(t, db, 0, 0, world.Nether, 13)
	store(t, db, 1, 1, world.Overworld, 14)
	db.Close()

	a, err := parseArea("5,5,0,0", "overworld")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := runRollback(&out, dir, "s", a); code != exitOK {
		t.Fatalf("rollback: %d", code)
	}
	m := regexp.MustCompile("-to (before-rollback-[^\\s`]+)").FindStringSubmatch(out.String())
	if !strings.HasPrefix(out.String(), dir+": 2 columns rolled back to s\n") || m == nil {
		t.Fatalf("rollback printed %q", out.String())
	}
	db = openTest(t, dir)
	expect(t, db, 0, 0, world.Overworld, 1)
	expect(t, db, 1, 1, world.Overworld, 0)
	expect(t, db, 10, 10, world.Overworld, 12)
	expect(t, db, 0, 0, world.Nether, 13)
	db.Close()

	// Undone, by the snapshot it named.
	all, _ := parseArea("", "")
	if code := runRollback(&out, dir, m[1], all); code != exitOK {
		t.Fatalf("undo: %d", code)
	}
	db = openTest(t, dir)
	expect(t, db, 0, 0, world.Overworld, 11)
	expect(t, db, 1, 1, world.Overworld, 14)
	db.Close()

	// A point that does not read takes no snapshot and writes nothing.
	if code := runRollback(&out, dir, "nowhere", all); code != exitFailed {
		t.Fatalf("rollback to no point: %d", code)
	}
	db = openTest(t, dir)
	ss, _ := db.Snapshots()
	db.Close()
	if len(ss) != 3 {
		t.Fatalf("%d snapshots after two rollbacks and a refused one: %+v", len(ss), ss)
	}
}

// Issue 36 (tools): the history commands take their flags after the world,
// and refuse a malformed area or dimension.
func TestHistoryArgs(t *testing.T) {
	fs := flag.NewFlagSet("rollback", flag.ContinueOnError)
	to := fs.String("to", "", "")
	ar := fs.String("area", "", "")
	ops, _, ok := parseArgs(fs, []string{"W", "-to", "s", "-area", "1,2,3,4"}, 1)
	if !ok || ops[0] != "W" || *to != "s" || *ar != "1,2,3,4" {
		t.Fatalf("parseArgs: %v %v %q %q", ops, ok, *to, *ar)
	}
	for _, bad := range [][2]string{{"1,2,3", ""}, {"1,2,x,4", ""}, {"", "moon"}} {
		if _, err := parseArea(bad[0], bad[1]); err == nil {
			t.Fatalf("parseArea(%q, %q) accepted", bad[0], bad[1])
		}
	}
	a, _ := parseArea("-3,4,2,-1", "nether")
	if !a.has(provider.Place{Pos: world.ChunkPos{-3, -1}, Dim: world.Nether}) || a.has(provider.Place{Pos: world.ChunkPos{0, 0}, Dim: world.Overworld}) || a.has(provider.Place{Pos: world.ChunkPos{3, 0}, Dim: world.Nether}) {
		t.Fatalf("area %+v", a)
	}
	if code := rollbackCmd([]string{"W", "-area", "1,2"}); code != exitUsage {
		t.Fatalf("rollback without -to: %d", code)
	}
}
