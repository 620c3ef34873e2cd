package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 35 item 1: a cleanly closed world whose chunks.dat lost its second
// half. check used to exit 0 saying that nothing promised was lost, and a
// server's open cut the rest as a torn tail. Now check exits 2 naming the
// lost columns, a server's open refuses, and repair names each column it
// gives up.
func TestCheckAndRepairNameDurableLoss(t *testing.T) {
	dir, conf := closedColumnsWorld(t, 56)
	log := filepath.Join(dir, "blaze", "chunks.dat")
	b, _ := os.ReadFile(log)
	if err := os.WriteFile(log, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	code := runCheck(&out, nil, dir)
	text := out.String()
	if code != exitDamaged || strings.Contains(text, "nothing promised is lost") || !strings.Contains(text, "DURABLE DATA LOST") ||
		!strings.Contains(text, "lost: column (55, 7, dim 0)") {
		t.Fatalf("check: status %d:\n%s", code, text)
	}
	out.Reset()
	if code := runInfo(&out, dir); code != exitOK || !strings.Contains(out.String(), "DURABLE DATA LOST") || strings.Contains(out.String(), "torn tail") {
		t.Fatalf("info: status %d:\n%s", code, out.String())
	}
	if _, err := conf.Open(dir); err == nil || !strings.Contains(err.Error(), "durable data lost") {
		t.Fatalf("a server's open of the damaged world: %v", err)
	}

	out.Reset()
	if code := runRepair(&out, dir); code != exitOK {
		t.Fatalf("repair: status %d:\n%s", code, out.String())
	}
	if text := out.String(); !strings.Contains(text, "given up: column (55, 7, dim 0)") || strings.Contains(text, "no damage found") {
		t.Fatalf("repair:\n%s", text)
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK {
		t.Fatalf("check after repair: status %d:\n%s", code, out.String())
	}
}

// Issue 35 item 2: one flipped bit in the header of chunks.dat made the
// world unopenable, check recommended repair, and repair failed too. Now
// check names the damage (status 2) and that nothing is lost, a server
// opens the world, and repair writes the header again.
func TestCheckAndRepairMendHeader(t *testing.T) {
	dir := garbageWorld(t)
	log := filepath.Join(dir, "blaze", "chunks.dat")
	b, _ := os.ReadFile(log)
	b[17] ^= 0x08 // in the generation
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := runCheck(&out, nil, dir); code != exitDamaged || !strings.Contains(out.String(), "header") || !strings.Contains(out.String(), "16 columns") {
		t.Fatalf("check: status %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := runInfo(&out, dir); code != exitOK || !strings.Contains(out.String(), "header:") {
		t.Fatalf("info: status %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := runRepair(&out, dir); code != exitOK || !strings.Contains(out.String(), "written again") {
		t.Fatalf("repair: status %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK {
		t.Fatalf("check after repair: status %d:\n%s", code, out.String())
	}
}

// Issue 35 item 2: with both copies of the header zeroed, check reports
// damage (not a foreign file) and repair rebuilds the header from the
// records.
func TestRepairRebuildsZeroedHeader(t *testing.T) {
	dir := garbageWorld(t)
	log := filepath.Join(dir, "blaze", "chunks.dat")
	b, _ := os.ReadFile(log)
	clear(b[:108])
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := runCheck(&out, nil, dir); code != exitDamaged || !strings.Contains(out.String(), "header") {
		t.Fatalf("check: status %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := runRepair(&out, dir); code != exitOK || !strings.Contains(out.String(), "rebuilt") {
		t.Fatalf("repair: status %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK || !strings.Contains(out.String(), "16 columns") {
		t.Fatalf("check after repair: status %d:\n%s", code, out.String())
	}
}

// Issue 35 item 1: a world whose chunks.dat was removed, or cut to fewer
// bytes than its header, while index.dat shows it held every column. A
// server's open used to make a new, empty log (removed) and generate every
// column again, or the world was unopenable and unrepairable ("no Blaze
// signature"). Now check exits 2 naming every column lost, a server's open
// refuses, repair names each column it gives up, and check then passes and
// a server opens the world.
func TestCheckAndRepairNameGoneLog(t *testing.T) {
	for _, how := range []string{"removed", "cut to 0 bytes", "cut to 20 bytes"} {
		t.Run(how, func(t *testing.T) {
			dir, conf := closedColumnsWorld(t, 8)
			log := filepath.Join(dir, "blaze", "chunks.dat")
			b, _ := os.ReadFile(log)
			var err error
			switch how {
			case "removed":
				err = os.Remove(log)
			case "cut to 0 bytes":
				err = os.WriteFile(log, nil, 0o644)
			default:
				err = os.WriteFile(log, b[:20], 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}

			var out bytes.Buffer
			code := runCheck(&out, nil, dir)
			text := out.String()
			if code != exitDamaged || !strings.Contains(text, "DURABLE DATA LOST") {
				t.Fatalf("check: status %d:\n%s", code, text)
			}
			t.Log(text)
			for i := range 8 {
				if want := fmt.Sprintf("lost: column (%d, 7, dim 0)", i); !strings.Contains(text, want) {
					t.Fatalf("check does not say %q:\n%s", want, text)
				}
			}
			if _, err := conf.Open(dir); !errors.Is(err, blazedb.ErrDurableLoss) {
				t.Fatalf("a server's open of the damaged world: %v", err)
			}

			out.Reset()
			if code := runRepair(&out, dir); code != exitOK {
				t.Fatalf("repair: status %d:\n%s", code, out.String())
			}
			text = out.String()
			t.Log(text)
			for i := range 8 {
				if want := fmt.Sprintf("given up: column (%d, 7, dim 0)", i); !strings.Contains(text, want) {
					t.Fatalf("repair does not say %q:\n%s", want, text)
				}
			}
			out.Reset()
			if code := runCheck(&out, nil, dir); code != exitOK {
				t.Fatalf("check after repair: status %d:\n%s", code, out.String())
			}
			db, err := conf.Open(dir)
			if err != nil {
				t.Fatalf("a server's open after repair: %v", err)
			}
			col := worldtest.Synthetic(99, world.Overworld, world.DefaultBlockRegistry)
			if err := db.StoreColumn(world.ChunkPos{0, 7}, world.Overworld, col); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Issue 35 items 1 and 4: a compacted log keeps the named records after
// the columns, so a log cut short loses block dictionary entries; check
// and repair name each as the block dictionary entry it is, not as a
// record by its key, and repair takes them back from dictionary.dat.
func TestCheckAndRepairNameLostDictionaryEntries(t *testing.T) {
	dir := t.TempDir()
	conf := provider.Config{Log: slog.New(slog.DiscardHandler)}
	db, err := conf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		col := worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
		if err := db.StoreColumn(world.ChunkPos{int32(i), 7}, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Sync(); err != nil { // the stores written before the compaction (issue 42)
		t.Fatal(err)
	}
	if err := db.Engine().Compact(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "blaze", "chunks.dat")
	b, _ := os.ReadFile(log)
	at := bytes.Index(b, []byte("dict/"))
	if at < 28 {
		t.Fatal("no dictionary entry in the log")
	}
	if err := os.WriteFile(log, b[:at-28], 0o644); err != nil { // from the first entry's record on
		t.Fatal(err)
	}

	var out bytes.Buffer
	code := runCheck(&out, nil, dir)
	if text := out.String(); code != exitDamaged || !strings.Contains(text, "lost: block dictionary entry") || strings.Contains(text, `"dict/`) {
		t.Fatalf("check: status %d:\n%s", code, text)
	}
	out.Reset()
	if code := runRepair(&out, dir); code != exitOK || !strings.Contains(out.String(), "given up: block dictionary entry") || strings.Contains(out.String(), `"dict/`) {
		t.Fatalf("repair: status %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := runCheck(&out, nil, dir); code != exitOK {
		t.Fatalf("check after repair: status %d:\n%s", code, out.String())
	}
}

// closedColumnsWorld returns a cleanly closed world of n synthetic columns
// at (i, 7) in the overworld, and the Config a server would open it with.
func closedColumnsWorld(t *testing.T, n int) (string, provider.Config) {
	t.Helper()
	dir := t.TempDir()
	conf := provider.Config{Log: slog.New(slog.DiscardHandler)}
	db, err := conf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		col := worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
		if err := db.StoreColumn(world.ChunkPos{int32(i), 7}, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, conf
}
