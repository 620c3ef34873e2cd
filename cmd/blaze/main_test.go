package main

import (
	"bytes"
	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A world whose columns were each stored four times, changed: three
// quarters of its log is garbage, as it keeps no history (its history
// floor, kept in the log, says the old versions are beyond it).
func garbageWorld(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler), History: -1}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	storeGarbage(t, db, 16)
	return dir
}

// storeGarbage stores n columns in p, each four times, changed, and closes
// p.
func storeGarbage(t *testing.T, p world.Provider, n int) {
	t.Helper()
	for i := range n {
		col := worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
		for round := range 4 {
			worldtest.ChangeOneBlock(col, round)
			if err := p.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, col); err != nil {
				t.Fatal(err)
			}
			// Each store written: queued, the next would replace it and
			// leave no garbage (issue 42).
			if s, ok := p.(interface{ Sync() error }); ok {
				if err := s.Sync(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCompactThenCheck(t *testing.T) {
	dir := garbageWorld(t)
	log := filepath.Join(dir, "blaze", "chunks.dat")
	levelDat, _ := os.ReadFile(filepath.Join(dir, "level.dat"))
	before, _ := os.Stat(log)
	var out bytes.Buffer
	if code := runCompact(&out, dir); code != exitOK {
		t.Fatalf("compact: status %d: %s", code, out.String())
	}
	after, _ := os.Stat(log)
	if after.Size() > before.Size()/2 {
		t.Fatalf("compaction left %d of %d bytes", after.Size(), before.Size())
	}
	if !strings.Contains(out.String(), "chunks.dat") {
		t.Fatalf("compact printed %q", out.String())
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "level.dat")); !bytes.Equal(now, levelDat) {
		t.Fatal("compact rewrote level.dat")
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK || !strings.Contains(out.String(), "16 columns") {
		t.Fatalf("check after compaction: status %d: %s", code, out.String())
	}

	// Damage in the middle of the log: found, named, status 2.
	b, _ := os.ReadFile(log)
	b[len(b)/2] ^= 0x55
	os.WriteFile(log, b, 0o644)
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitDamaged || !strings.Contains(out.String(), "cannot read column") || !strings.Contains(out.String(), "blaze repair") {
		t.Fatalf("check of a damaged world: status %d: %s", code, out.String())
	}
}

func TestToolsRefuse(t *testing.T) {
	var out bytes.Buffer
	empty := t.TempDir()
	if code := runCompact(&out, empty); code != exitFailed {
		t.Fatalf("compact of an empty directory: status %d", code)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Fatal("compact made a world in an empty directory")
	}
	if code := runCheck(&out, nil, filepath.Join(empty, "missing")); code != exitFailed {
		t.Fatalf("check of a missing directory: status %d", code)
	}
	if code := runInfo(&out, empty); code != exitFailed {
		t.Fatalf("info of an empty directory: status %d", code)
	}
	// A LevelDB world is named as one, with what to do.
	lvl := t.TempDir()
	os.Mkdir(filepath.Join(lvl, "db"), 0o755)
	if _, err := databases(lvl); err == nil || !strings.Contains(err.Error(), "LevelDB world") || !strings.Contains(err.Error(), "blaze convert") {
		t.Fatalf("the tools' error for a LevelDB world: %v", err)
	}
	// A world a server has open.
	dir := garbageWorld(t)
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler)}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if code := runCompact(&out, dir); code != exitFailed {
		t.Fatalf("compact of an open world: status %d", code)
	}
	if code := runCheck(&out, nil, dir); code != exitFailed {
		t.Fatalf("check of an open world: status %d", code)
	}
	if code := runInfo(&out, dir); code != exitFailed {
		t.Fatalf("info of an open world: status %d", code)
	}
	// Repair refuses it before it changes anything, level.dat included,
	// which lies beside the engine's files.
	ldat := filepath.Join(dir, "level.dat")
	if err := os.WriteFile(ldat, []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := runRepair(&out, dir); code != exitFailed {
		t.Fatalf("repair of an open world: status %d", code)
	}
	if b, _ := os.ReadFile(ldat); string(b) != "damaged" {
		t.Fatal("repair of an open world rewrote its level.dat")
	}
}

// segmentedGarbageWorld returns a segmented world of two regions whose
// eight columns were each stored four times, changed.
func segmentedGarbageWorld(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p, err := segment.Config{Log: slog.New(slog.DiscardHandler), SegmentSize: 4, History: -1}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	storeGarbage(t, p, 8)
	return dir
}

// A segmented world is compacted region by region, and checked after.
func TestCompactSegmentedWorld(t *testing.T) {
	dir := segmentedGarbageWorld(t)
	log := filepath.Join(dir, "regions", "0", "r.1.0", "blaze", "chunks.dat")
	before, _ := os.Stat(log)
	var out bytes.Buffer
	if code := runCompact(&out, dir); code != exitOK || !strings.Contains(out.String(), "2 regions") {
		t.Fatalf("compact: status %d: %s", code, out.String())
	}
	if after, _ := os.Stat(log); after.Size() > before.Size()/2 {
		t.Fatalf("region 1 kept %d of %d bytes", after.Size(), before.Size())
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK || !strings.Contains(out.String(), "8 columns") {
		t.Fatalf("check: status %d: %s", code, out.String())
	}
}

// check finds two damaged columns, repair puts one back at its older
// version and removes the other (it had none), and check passes after.
func TestRepairDamagedWorld(t *testing.T) {
	dir := t.TempDir()
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler)}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	br := world.DefaultBlockRegistry
	for i := range 8 {
		if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, worldtest.Synthetic(uint64(i), world.Overworld, br)); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(dir, "blaze", "chunks.dat")
	// appended stores col at pos and returns the middle of the bytes that
	// store appended: its record alone, as col holds no new state.
	appended := func(pos world.ChunkPos, col *chunk.Column) int64 {
		db.Sync() // the provider's: it writes queued stores too (issue 42)
		before, _ := os.Stat(log)
		if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
		db.Sync() // the provider's: it writes queued stores too (issue 42)
		after, _ := os.Stat(log)
		if after.Size() == before.Size() {
			t.Fatal("the store appended nothing")
		}
		return (before.Size() + after.Size()) / 2
	}
	changed := worldtest.Synthetic(0, world.Overworld, br)
	changed.Chunk.SetBlock(3, 100, 3, 0, worldtest.States(br)["minecraft:stone"])
	damage := []int64{
		appended(world.ChunkPos{0, 0}, changed),                                     // an older version exists
		appended(world.ChunkPos{9, 0}, worldtest.Synthetic(0, world.Overworld, br)), // the only version
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	for _, off := range damage {
		b[off] ^= 0x55
	}
	os.WriteFile(log, b, 0o644)

	var out bytes.Buffer
	if code := runCheck(&out, nil, dir); code != exitDamaged {
		t.Fatalf("check before repair: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runRepair(&out, dir); code != exitOK ||
		!strings.Contains(out.String(), "newest intact version") || !strings.Contains(out.String(), "removed") {
		t.Fatalf("repair: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK || !strings.Contains(out.String(), "8 columns") {
		t.Fatalf("check after repair: status %d: %s", code, out.String())
	}
	q, err := provider.Config{Log: slog.New(slog.DiscardHandler), ReadOnly: true, SegmentRoot: true}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := q.LoadColumn(world.ChunkPos{0, 0}, world.Overworld)
	q.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(worldtest.Synthetic(0, world.Overworld, br), got); err != nil {
		t.Fatalf("column 0 is not its older version: %v", err)
	}
	out.Reset()
	if code := runRepair(&out, dir); code != exitOK || !strings.Contains(out.String(), "nothing changed") {
		t.Fatalf("second repair: status %d: %s", code, out.String())
	}
}

// blaze convert exits 0 when it converted everything, 2 when it converted
// what it could read and listed the rest, and 1 when it could not convert.
func TestConvertExitStatus(t *testing.T) {
	src := t.TempDir()
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler)}.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if got := runConvert(src, filepath.Join(t.TempDir(), "out"), convertOptions{quiet: true}); got != exitOK {
		t.Fatalf("an intact world: exit %d", got)
	}
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "something"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := runConvert(src, full, convertOptions{quiet: true}); got != exitFailed {
		t.Fatalf("into a directory that is not empty: exit %d", got)
	}
	log := filepath.Join(src, "blaze", "chunks.dat")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff // inside the middle column's record
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := runConvert(src, filepath.Join(t.TempDir(), "out"), convertOptions{quiet: true}); got != exitDamaged {
		t.Fatalf("a world with a damaged column: exit %d", got)
	}
}

// Issue 35 item 10: a server's open skipped a damaged record, so its
// column is gone (it had no older version), and its close wrote index.dat
// over the damaged bytes. check said "no damage found"; it must exit 2
// naming the damaged stretch and the column, until compaction drops it.
func TestCheckAfterOpenSkippedDamage(t *testing.T) {
	dir := t.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	// The states of column 0 again: the store appends its record alone.
	damagedColumnWorld(t, dir, world.ChunkPos{9, 0}, worldtest.Synthetic(0, world.Overworld, world.DefaultBlockRegistry), 1)
	os.Remove(filepath.Join(dir, "blaze", "index.dat"))

	// A server opens the world: the damage is skipped and column (9, 0)
	// is gone; its close covers the log with index.dat again.
	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Engine().Recovery().Corrupt) != 1 {
		t.Fatalf("recovery %+v", db.Engine().Recovery())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	code := runCheck(&out, nil, dir)
	if code != exitDamaged || !strings.Contains(out.String(), "(9, 0, dim 0) (now without a value)") || !strings.Contains(out.String(), "blaze repair") {
		t.Fatalf("check after the open skipped damage: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runRepair(&out, dir); code != exitOK {
		t.Fatalf("repair: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK {
		t.Fatalf("check after repair: status %d: %s", code, out.String())
	}
}

// Issue 35 item 11: a column whose newest record is damaged no longer stops
// compaction. A server's compaction and close go on around it and report
// it (and still write the dictionary's copy), blaze compact compacts and
// exits 2 naming it, check names it, and repair still finds the older
// version that compaction kept beside it.
func TestCompactAroundDamagedColumn(t *testing.T) {
	dir := t.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	br := world.DefaultBlockRegistry
	changed := worldtest.Synthetic(0, world.Overworld, br)
	changed.Chunk.SetBlock(3, 100, 3, 0, worldtest.States(br)["minecraft:stone"])
	// index.dat covers the damaged record: no open scans it.
	damagedColumnWorld(t, dir, world.ChunkPos{0, 0}, changed, 2)

	// A server: new block states, a compaction, a close.
	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.StoreColumn(world.ChunkPos{7, 7}, world.Nether, worldtest.Synthetic(7, world.Nether, br)); err != nil {
		t.Fatal(err)
	}
	if err := db.Sync(); err != nil { // the store written before the compaction (issue 42)
		t.Fatal(err)
	}
	if err := db.Engine().Compact(); !blazedb.IsDamageReport(err) || !strings.Contains(err.Error(), "(0, 0, dim 0)") {
		t.Fatalf("Compact: %v", err)
	}
	if err := db.Close(); !blazedb.IsDamageReport(err) {
		t.Fatalf("Close: %v", err)
	}

	var out bytes.Buffer
	if code := runCheck(&out, nil, dir); code != exitDamaged || !strings.Contains(out.String(), "(0, 0, dim 0) (still live there") || strings.Contains(out.String(), "not current") {
		t.Fatalf("check: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runCompact(&out, dir); code != exitDamaged || !strings.Contains(out.String(), "(0, 0, dim 0)") || !strings.Contains(out.String(), "blaze repair") {
		t.Fatalf("compact: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runRepair(&out, dir); code != exitOK || !strings.Contains(out.String(), "newest intact version") {
		t.Fatalf("repair: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK {
		t.Fatalf("check after repair: status %d: %s", code, out.String())
	}
	q, err := provider.Config{Log: quiet, ReadOnly: true}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	got, err := q.LoadColumn(world.ChunkPos{0, 0}, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(worldtest.Synthetic(0, world.Overworld, br), got); err != nil {
		t.Fatalf("column (0, 0) is not its older version: %v", err)
	}
}

// Issue 35 item 3: a flipped byte in level.dat is damage to check (status
// 2, naming level.dat), the world still reads with its settings from the
// checksummed copy, and repair writes level.dat back, which check then
// finds whole. Issue 35 item 14: no line says "index.dat was not used ()"
// about a database that did not even open.
func TestCheckAndRepairLevelDat(t *testing.T) {
	dir := garbageWorld(t)
	ld := filepath.Join(dir, "level.dat")
	orig, _ := os.ReadFile(ld)
	b := slices.Clone(orig)
	b[len(b)/2] ^= 0x20
	os.WriteFile(ld, b, 0o644)
	var out bytes.Buffer
	if code := runCheck(&out, nil, dir); code != exitDamaged || !strings.Contains(out.String(), "level.dat") ||
		!strings.Contains(out.String(), "16 columns") || strings.Contains(out.String(), "index.dat was not used") {
		t.Fatalf("check of a damaged level.dat: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runInfo(&out, dir); code != exitOK || !strings.Contains(out.String(), "level.dat:     damaged") {
		t.Fatalf("info of a damaged level.dat: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runRepair(&out, dir); code != exitOK || !strings.Contains(out.String(), "level.dat written again from its checksummed copy") {
		t.Fatalf("repair: status %d: %s", code, out.String())
	}
	if now, _ := os.ReadFile(ld); !bytes.Equal(now, orig) {
		t.Fatal("repair did not write level.dat back as it was")
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK {
		t.Fatalf("check after repair: status %d: %s", code, out.String())
	}

	// Without the copy the world does not open: check names level.dat,
	// not index.dat, and repair writes the default settings, saying so.
	os.Remove(filepath.Join(dir, "level.dat.blaze"))
	os.WriteFile(ld, orig[:len(orig)/2], 0o644)
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitDamaged || !strings.Contains(out.String(), "level.dat") ||
		strings.Contains(out.String(), "index.dat was not used") {
		t.Fatalf("check of a truncated level.dat without a copy: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runRepair(&out, dir); code != exitOK || !strings.Contains(out.String(), "settings are lost") {
		t.Fatalf("repair without a copy: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK || !strings.Contains(out.String(), "16 columns") {
		t.Fatalf("check after repair: status %d: %s", code, out.String())
	}
}

// Issue 35 item 4: with dictionary.dat missing, repair used to delete
// damaged block dictionary entries, calling them columns ("a removed
// column is generated again"). Now it keeps them as lost, says what they
// are, and the world opens.
func TestRepairNamesDictionaryEntries(t *testing.T) {
	dir := garbageWorld(t)
	log := filepath.Join(dir, "blaze", "chunks.dat")
	b, _ := os.ReadFile(log)
	b[300] ^= 0xff // among the first store's dictionary entries, past the edition
	os.WriteFile(log, b, 0o644)
	os.Remove(filepath.Join(dir, "dictionary.dat"))
	var out bytes.Buffer
	if code := runCheck(&out, nil, dir); code != exitDamaged || !strings.Contains(out.String(), "block dictionary entr") {
		t.Fatalf("check: status %d: %s", code, out.String())
	}
	out.Reset()
	code := runRepair(&out, dir)
	if code != exitOK || !strings.Contains(out.String(), "kept as lost") {
		t.Fatalf("repair: status %d: %s", code, out.String())
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "dict/") || (strings.Contains(line, "generated again") && !strings.Contains(line, ": column ")) {
			t.Fatalf("a line that does not say what it is about: %s", line)
		}
	}
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler), ReadOnly: true}.Open(dir)
	if err != nil {
		t.Fatalf("the repaired world does not open: %v", err)
	}
	db.Close()
}

// blaze repair mends a segmented world region by region, its root too:
// the root's repair opened it as a plain world for its block dictionary,
// which refuses the root of a segmented world, so repair failed on every
// segmented world (found by issue 35's damage sweep).
func TestRepairSegmentedWorld(t *testing.T) {
	dir := segmentedGarbageWorld(t)
	var out bytes.Buffer
	if code := runRepair(&out, dir); code != exitOK {
		t.Fatalf("repair: status %d: %s", code, out.String())
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK || !strings.Contains(out.String(), "8 columns") {
		t.Fatalf("check after repair: status %d: %s", code, out.String())
	}
}

// damagedColumnWorld makes a world in dir of four columns, then stores col
// at pos, which appends its record alone, then versions versions of four
// more columns, closes the world (index.dat covers every record) and
// flips a byte in the middle of pos's record.
func damagedColumnWorld(t *testing.T, dir string, pos world.ChunkPos, col *chunk.Column, versions int) {
	t.Helper()
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler)}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	br := world.DefaultBlockRegistry
	for i := range 4 {
		if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, worldtest.Synthetic(uint64(i), world.Overworld, br)); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(dir, "blaze", "chunks.dat")
	size := func() int64 {
		db.Sync() // the provider's: it writes queued stores too (issue 42)
		st, _ := os.Stat(log)
		return st.Size()
	}
	before := size()
	if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	after := size()
	for i := range 4 {
		for v := range versions {
			if err := db.StoreColumn(world.ChunkPos{int32(i), 1}, world.Overworld, worldtest.Synthetic(uint64(i+v), world.Overworld, br)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[(before+after)/2] ^= 0x55
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
