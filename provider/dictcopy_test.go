package provider

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// dictWorld stores n synthetic columns in a new world in dir, one store
// each: the first store's batch holds most of the dictionary.
func dictWorld(t *testing.T, dir string, n int) []*chunk.Column {
	t.Helper()
	db := openDB(t, dir, Config{})
	var cols []*chunk.Column
	for i := range n {
		col := worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
		if err := storeNow(db, world.ChunkPos{int32(i), 0}, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return cols
}

// engineDictionary reads every dictionary record of the world in dir.
func engineDictionary(t *testing.T, dir string) map[int32][]byte {
	t.Helper()
	eng, err := blazedb.Open(filepath.Join(dir, engineDir), blazedb.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	out := map[int32][]byte{}
	err = eng.ReadNamed(dictPrefix, func(n string, v []byte) error {
		id, err := dictID(n)
		out[id] = v
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// engineGeneration returns the generation of the log of the world in dir.
func engineGeneration(t *testing.T, dir string) uint64 {
	t.Helper()
	eng, err := blazedb.Open(filepath.Join(dir, engineDir), blazedb.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	return eng.Stats().Generation
}

// damageFirstRecord flips a byte near the start of the world's log, among
// the dictionary entries of the first store's batch.
// inFirstEntries is an offset in chunks.dat inside the dictionary entries
// of the first column stored: its batch starts at byte 108, after the file
// header and its 68-byte copy, and holds, after its own 28-byte header, the
// world's edition (about 62 bytes), then the entries.
const inFirstEntries = 268

func damageFirstRecord(t *testing.T, dir string) {
	t.Helper()
	flipByte(t, filepath.Join(dir, engineDir, "chunks.dat"), inFirstEntries)
}

// loadAll loads the columns of dictWorld from the from-th on and compares
// each with what was stored.
func loadAll(t *testing.T, db *DB, cols []*chunk.Column, from int) {
	t.Helper()
	for i := from; i < len(cols); i++ {
		got, err := db.LoadColumn(world.ChunkPos{int32(i), 0}, world.Overworld)
		if err != nil {
			t.Fatalf("column %d: %v", i, err)
		}
		if err := worldtest.Compare(cols[i], got); err != nil {
			t.Fatalf("column %d: %v", i, err)
		}
	}
}

// dictionary.dat holds exactly the persisted entries: written when a world
// closes with new ones or a copy that is not current, or opens without
// one (a world made before the copy existed), and not rewritten when
// nothing was added.
func TestDictionaryCopyKeptCurrent(t *testing.T) {
	dir := t.TempDir()
	dictWorld(t, dir, 3)
	name := filepath.Join(dir, dictCopyName)
	readCopy := func() map[int32][]byte {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := parseDictCopy(b)
		if err != nil {
			t.Fatal(err)
		}
		return cp.entries
	}
	want := engineDictionary(t, dir)
	if len(want) == 0 || !maps.EqualFunc(readCopy(), want, bytes.Equal) {
		t.Fatalf("dictionary.dat does not hold the %d entries of the engine", len(want))
	}

	var renames []string
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, n string) error {
		if op == vfstest.OpRename {
			renames = append(renames, filepath.Base(n))
		}
		return nil
	})
	db := openDB(t, dir, Config{FS: fs})
	col, _ := db.LoadColumn(world.ChunkPos{0, 0}, world.Overworld)
	db.StoreColumn(world.ChunkPos{9, 9}, world.Overworld, col) // no new state
	db.Close()
	if slices.Contains(renames, dictCopyName) {
		t.Fatal("dictionary.dat was replaced though no entry was added")
	}

	// A new state: the copy follows at close.
	db = openDB(t, dir, Config{})
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	col.Chunk.SetBlock(0, 0, 0, 0, obsidian)
	if err := db.StoreColumn(world.ChunkPos{9, 9}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if want = engineDictionary(t, dir); !maps.EqualFunc(readCopy(), want, bytes.Equal) {
		t.Fatal("dictionary.dat lacks the entry added")
	}

	// A world without the copy (made before it existed) gets it on
	// opening; one with a damaged copy when it closes.
	os.Remove(name)
	db = openDB(t, dir, Config{})
	if !maps.EqualFunc(readCopy(), want, bytes.Equal) {
		t.Fatal("opening did not write the missing dictionary.dat")
	}
	db.Close()
	b, _ := os.ReadFile(name)
	b[len(b)/2] ^= 1
	os.WriteFile(name, b, 0o644)
	openDB(t, dir, Config{}).Close()
	if !maps.EqualFunc(readCopy(), want, bytes.Equal) {
		t.Fatal("closing did not replace the damaged dictionary.dat")
	}
	// Read-only opens write nothing.
	os.Remove(name)
	openDB(t, dir, Config{ReadOnly: true}).Close()
	if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a read-only open wrote dictionary.dat")
	}
}

// A damaged dictionary record used to make the world refuse to open, and
// repair could only delete it, losing every column that used its states.
// With the copy the world opens, every column loads block for block, and a
// read-write open writes the entries back.
func TestDictionaryRestoredFromCopy(t *testing.T) {
	dir := t.TempDir()
	cols := dictWorld(t, dir, 4)
	want := engineDictionary(t, dir)
	damageFirstRecord(t, dir)
	log := filepath.Join(dir, engineDir, "chunks.dat")
	before, _ := os.ReadFile(log)

	db := openDB(t, dir, Config{ReadOnly: true})
	restored := db.DictionaryRestored()
	if len(restored) == 0 {
		t.Fatal("no dictionary entry restored")
	}
	loadAll(t, db, cols, 0)
	db.Close()
	if after, _ := os.ReadFile(log); !bytes.Equal(before, after) {
		t.Fatal("a read-only open wrote to the log")
	}

	db = openDB(t, dir, Config{})
	if got := db.DictionaryRestored(); !slices.Equal(got, restored) {
		t.Fatalf("restored %v, read-only %v", got, restored)
	}
	loadAll(t, db, cols, 0)
	db.Close()
	db = openDB(t, dir, Config{})
	if got := db.DictionaryRestored(); len(got) != 0 {
		t.Fatalf("entries %v still restored after being written back", got)
	}
	loadAll(t, db, cols, 0)
	// The damaged record is now an old version: repair compacts it away.
	db.Close()
	rep, err := Config{Log: quiet}.Repair(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dictionary) != 0 || len(rep.Keys) != 0 || len(rep.Found) == 0 || !rep.Compacted {
		t.Fatalf("repair: dictionary %v, keys %+v, compacted %v", rep.Dictionary, rep.Keys, rep.Compacted)
	}
	if got := engineDictionary(t, dir); !maps.EqualFunc(got, want, bytes.Equal) {
		t.Fatal("the engine's dictionary after repair is not the one written")
	}
	db = openDB(t, dir, Config{})
	defer db.Close()
	loadAll(t, db, cols, 0)
	if err := db.Engine().Check(); err != nil {
		t.Fatal(err)
	}
}

// Repair writes the dictionary back from the copy before it mends the
// engine, instead of deleting the entries.
func TestRepairRestoresDictionary(t *testing.T) {
	dir := t.TempDir()
	cols := dictWorld(t, dir, 3)
	damageFirstRecord(t, dir)
	rep, err := Config{Log: quiet}.Repair(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dictionary) == 0 || !rep.Compacted {
		t.Fatalf("repair: dictionary %v, compacted %v", rep.Dictionary, rep.Compacted)
	}
	db := openDB(t, dir, Config{})
	defer db.Close()
	if len(db.DictionaryRestored()) != 0 {
		t.Fatal("the dictionary still needs its copy after repair")
	}
	loadAll(t, db, cols, 0)
	if err := db.Engine().Check(); err != nil {
		t.Fatal(err)
	}
}

// Entries lost with a stretch of the log that recovery skipped (index.dat
// gone, so Open scans) come back from the copy too.
func TestDictionaryLostEntriesRestored(t *testing.T) {
	dir := t.TempDir()
	cols := dictWorld(t, dir, 3)
	damageFirstRecord(t, dir)
	os.Remove(filepath.Join(dir, engineDir, "index.dat"))
	db := openDB(t, dir, Config{})
	defer db.Close()
	if len(db.Engine().Recovery().Corrupt) == 0 || len(db.DictionaryRestored()) == 0 {
		t.Fatalf("recovery %+v, restored %v", db.Engine().Recovery(), db.DictionaryRestored())
	}
	// The skipped stretch held the first column too, which has no other
	// version; the rest use the restored states.
	loadAll(t, db, cols, 1)
}

// The copy is used only when it is the world's own and holds what is
// needed; otherwise a damaged entry still keeps the world from opening.
func TestDictionaryCopyRefused(t *testing.T) {
	other := t.TempDir()
	db := openDB(t, other, Config{})
	// A Nether column: the dictionary starts with other states.
	db.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, worldtest.Synthetic(50, world.Nether, world.DefaultBlockRegistry))
	db.Close()

	for name, prepare := range map[string]func(dir string){
		"missing": func(dir string) { os.Remove(filepath.Join(dir, dictCopyName)) },
		"another world's": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(other, dictCopyName))
			os.WriteFile(filepath.Join(dir, dictCopyName), b, 0o644)
		},
		"without the entries": func(dir string) {
			os.WriteFile(filepath.Join(dir, dictCopyName), appendDictCopy(nil, engineGeneration(t, dir), nil), 0o644)
		},
		"damaged": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, dictCopyName))
			b[len(b)/2] ^= 1
			os.WriteFile(filepath.Join(dir, dictCopyName), b, 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			dictWorld(t, dir, 2)
			damageFirstRecord(t, dir)
			prepare(dir)
			_, err := (Config{Log: quiet}).Open(dir)
			if !errors.Is(err, blazedb.ErrCorrupt) {
				t.Fatalf("open: %v", err)
			}
			if name == "damaged" && !strings.Contains(err.Error(), "dictionary.dat does not read (") {
				t.Fatalf("the error does not say why the copy was no help: %v", err)
			}
		})
	}
}

// parseDictCopy refuses a copy whose entries are not in increasing order
// of id (a repeated id would make one entry hide another), an id beyond
// the dictionary's, bytes after the entries, another signature or version.
func TestParseDictCopyRefuses(t *testing.T) {
	type entry struct {
		id uint64
		v  string
	}
	file := func(sig string, version byte, trailing string, entries ...entry) []byte {
		b := append([]byte(sig), version)
		if version == dictCopyVersion {
			b = binary.LittleEndian.AppendUint64(b, 77)
		}
		b = binary.AppendUvarint(b, uint64(len(entries)))
		for _, e := range entries {
			b = binary.AppendUvarint(b, e.id)
			b = binary.AppendUvarint(b, uint64(len(e.v)))
			b = append(b, e.v...)
		}
		b = append(b, trailing...)
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	}
	if cp, err := parseDictCopy(file(dictCopySignature, dictCopyVersion, "", entry{1, "a"}, entry{5, "b"})); err != nil ||
		len(cp.entries) != 2 || !cp.hasLineage || cp.lineage != 77 {
		t.Fatalf("a valid copy: %+v, %v", cp, err)
	}
	for name, b := range map[string][]byte{
		"repeated id":  file(dictCopySignature, dictCopyVersion, "", entry{1, "a"}, entry{1, "b"}),
		"decreasing":   file(dictCopySignature, dictCopyVersion, "", entry{5, "a"}, entry{1, "b"}),
		"id too large": file(dictCopySignature, dictCopyVersion, "", entry{maxDictID + 1, "a"}),
		"trailing":     file(dictCopySignature, dictCopyVersion, "x", entry{1, "a"}),
		"signature":    file("XYZ", dictCopyVersion, "", entry{1, "a"}),
		"version":      file(dictCopySignature, dictCopyVersion+1, "", entry{1, "a"}),
		// Issue 37: version 1, without a lineage, was never released.
		"version 1": file(dictCopySignature, 1, "", entry{1, "a"}),
	} {
		if _, err := parseDictCopy(b); !errors.Is(err, ErrColumnCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A version 2 file too short for its lineage (the fuzzer's first find).
	b := append([]byte(dictCopySignature), dictCopyVersion, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	if _, err := parseDictCopy(b); !errors.Is(err, ErrColumnCorrupt) || !strings.Contains(err.Error(), "no lineage") {
		t.Errorf("no lineage: %v", err)
	}
}

// FuzzParseDictCopy: bad bytes give an error, never a panic, and what
// parses survives encoding and parsing again. Each input is tried as it is and
// with a valid checksum appended, so that the fuzzer reaches the entries.
func FuzzParseDictCopy(f *testing.F) {
	for _, b := range [][]byte{
		appendDictCopy(nil, 0, nil),
		appendDictCopy(nil, 1<<62, map[int32][]byte{0: []byte("a"), 7: {1, 2, 3}, 300: nil}),
	} {
		f.Add(b[:len(b)-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := binary.LittleEndian.AppendUint32(nil, crc32.Checksum(body, castagnoli))
		for _, b := range [][]byte{body, append(slices.Clip(body), sum...)} {
			cp, err := parseDictCopy(b)
			if err != nil {
				if !errors.Is(err, ErrColumnCorrupt) {
					t.Fatalf("error not wrapping ErrColumnCorrupt: %v", err)
				}
				continue
			}
			// Varints may be longer than needed; the entries are the same.
			again, err := parseDictCopy(appendDictCopy(nil, cp.lineage, cp.entries))
			if err != nil || !maps.EqualFunc(again.entries, cp.entries, bytes.Equal) || again.lineage != cp.lineage || !again.hasLineage {
				t.Fatalf("%d entries parsed do not survive encoding: %v", len(cp.entries), err)
			}
		}
	})
}

// A crash at any filesystem operation while a world writes its dictionary
// back from the copy, or writes the copy, leaves a world that opens with
// every column: the copy is written only after the engine has made the
// entries durable, and the write back can run again.
func TestDictionaryCopyCrashSafe(t *testing.T) {
	cols := make([]*chunk.Column, 3)
	for i := range cols {
		cols[i] = worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
	}
	store := func(db *DB) {
		for i, c := range cols {
			if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	verify := func(k int, fs vfs.FS, what string) {
		db, err := Config{FS: fs, Log: quiet}.Open("/w")
		if err != nil {
			t.Fatalf("%s, crash at %d: reopen: %v", what, k, err)
		}
		defer db.Close()
		for i, c := range cols {
			got, err := db.LoadColumn(world.ChunkPos{int32(i), 0}, world.Overworld)
			if err == nil {
				err = worldtest.Compare(c, got)
			}
			if err != nil {
				t.Fatalf("%s, crash at %d: column %d: %v", what, k, i, err)
			}
		}
	}

	// Writing the copy at close, after stores that added entries.
	closeCrashes := 0
	for k := 1; ; k++ {
		mem := vfstest.NewMem()
		db, err := Config{FS: mem, Log: quiet, Durability: blazedb.DurabilitySafe}.Open("/w")
		if err != nil {
			t.Fatal(err)
		}
		store(db)
		mem.CrashAfter(k)
		db.Close()
		crashed := mem.Crashed()
		verify(k, mem.CrashClone(rand.New(rand.NewPCG(uint64(k), 1)), 0.5), "close")
		if !crashed {
			if _, err := vfs.ReadFile(mem, "/w/"+dictCopyName); err != nil {
				t.Fatalf("no copy after a close: %v", err)
			}
			break
		}
		closeCrashes++
	}

	// Writing damaged entries back from the copy.
	base := vfstest.NewMem()
	db, err := Config{FS: base, Log: quiet}.Open("/w")
	if err != nil {
		t.Fatal(err)
	}
	store(db)
	db.Close()
	f, err := base.OpenReadWrite("/w/" + engineDir + "/chunks.dat")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, inFirstEntries)
	f.WriteAt([]byte{b[0] ^ 0xff}, inFirstEntries)
	f.Sync()
	f.Close()
	crashes := 0
	for k := 1; ; k++ {
		mem := base.CrashClone(nil, 0)
		mem.CrashAfter(k)
		if db, err := (Config{FS: mem, Log: quiet}).Open("/w"); err == nil {
			if !mem.Crashed() && len(db.DictionaryRestored()) == 0 {
				t.Fatal("the damage hit no dictionary entry")
			}
			db.Close()
		}
		crashed := mem.Crashed()
		verify(k, mem.CrashClone(rand.New(rand.NewPCG(uint64(k), 2)), 0.5), "write back")
		if !crashed {
			break
		}
		crashes++
	}
	if crashes < 3 || closeCrashes < 3 {
		t.Fatalf("only %d and %d crash points", closeCrashes, crashes)
	}
}

// A copy of another world's dictionary is never used, even when no entry
// of it can be compared with the engine's (here the damaged stretch held
// every entry): its lineage, the generation of the log it was written
// beside, gives it away. Lost entries are then not restored, and the
// columns that used them fail to load instead of loading another world's
// states; damaged ones keep the world from opening.
func TestDictionaryCopyOfAnotherLineage(t *testing.T) {
	other := t.TempDir()
	db := openDB(t, other, Config{})
	db.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, worldtest.Synthetic(50, world.Overworld, world.DefaultBlockRegistry))
	db.Close()
	foreign, err := os.ReadFile(filepath.Join(other, dictCopyName))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("lost", func(t *testing.T) {
		dir := t.TempDir()
		cols := dictWorld(t, dir, 3)
		damageFirstRecord(t, dir)
		os.Remove(filepath.Join(dir, engineDir, "index.dat"))
		os.WriteFile(filepath.Join(dir, dictCopyName), foreign, 0o644)
		db := openDB(t, dir, Config{})
		defer db.Close()
		if len(db.Engine().Recovery().Corrupt) == 0 {
			t.Fatalf("recovery skipped nothing: %+v", db.Engine().Recovery())
		}
		if r := db.DictionaryRestored(); len(r) != 0 {
			t.Fatalf("entries %v restored from another world's copy", r)
		}
		for i := 1; i < len(cols); i++ { // the first was in the skipped stretch
			got, err := db.LoadColumn(world.ChunkPos{int32(i), 0}, world.Overworld)
			if err == nil && worldtest.Compare(got, cols[i]) != nil {
				t.Fatalf("column %d loaded with other states than it was stored with", i)
			}
			if !errors.Is(err, ErrColumnCorrupt) || !errors.Is(err, ErrUnknownState) || !strings.Contains(err.Error(), "missing from the dictionary") {
				t.Fatalf("column %d, whose entries are lost: %v, want damage to an unknown state", i, err)
			}
		}
	})
	t.Run("damaged", func(t *testing.T) {
		dir := t.TempDir()
		dictWorld(t, dir, 2)
		damageFirstRecord(t, dir)
		os.WriteFile(filepath.Join(dir, dictCopyName), foreign, 0o644)
		_, err := Config{Log: quiet}.Open(dir)
		if !errors.Is(err, blazedb.ErrCorrupt) || !strings.Contains(err.Error(), "not this world's") {
			t.Fatalf("open with a damaged entry and another world's copy: %v", err)
		}
	})
}

// sameLineage takes the copy's own generation and the later ones a
// compaction moves the log to, and nothing before it or far past it; no
// copy (no file) has no lineage to check.
func TestSameLineage(t *testing.T) {
	c := dictCopy{lineage: 1 << 40, hasLineage: true}
	for gen, want := range map[uint64]bool{1 << 40: true, 1<<40 + 5: true, 1<<40 + maxLineageGap - 1: true,
		1<<40 - 1: false, 1<<40 + maxLineageGap: false, 0: false, 1 << 62: false} {
		if got := c.sameLineage(gen); got != want {
			t.Errorf("copy at %d, engine at %d: %v, want %v", c.lineage, gen, got, want)
		}
	}
	if !(dictCopy{}).sameLineage(12345) {
		t.Error("no copy refused")
	}
}

// Issue 35 item 4: dictionary.dat used to be written only when a world
// closed, so the entries a session added had no second copy until then: a
// crash, and then one damaged byte in the record holding them, lost them
// and every column using them (the world did not even open). Now the copy
// follows the entries while the world is open, off the store's path (a
// writer goroutine, or Maintain), so that a crash leaves it current.
func TestDictionaryCopyCurrentWhileOpen(t *testing.T) {
	for _, external := range []bool{false, true} {
		t.Run(fmt.Sprintf("ExternalMaintenance=%v", external), func(t *testing.T) {
			dir := t.TempDir()
			dictWorld(t, dir, 1)
			db := openDB(t, dir, Config{ExternalMaintenance: external})
			col, want := storeNewState(t, db)
			var newID int32 = -1
			for id := range want {
				newID = max(newID, id)
			}
			current := func() bool {
				b, err := os.ReadFile(filepath.Join(dir, dictCopyName))
				if err != nil {
					return false
				}
				cp, err := parseDictCopy(b)
				return err == nil && maps.EqualFunc(cp.entries, want, bytes.Equal)
			}
			for deadline := time.Now().Add(5 * time.Second); !current(); {
				if external {
					if err := db.Maintain(); err != nil {
						t.Fatal(err)
					}
				}
				if time.Now().After(deadline) {
					t.Fatal("dictionary.dat did not take the entry added while the world is open")
				}
				time.Sleep(10 * time.Millisecond)
			}
			// A compaction writes index.dat, which then covers the new
			// entry's record: opening reads it, not scans it.
			if err := db.Engine().Compact(); err != nil {
				t.Fatal(err)
			}
			// A crash: nothing more is written. Then the new entry's
			// record goes bad.
			db.Discard()
			log := filepath.Join(dir, engineDir, "chunks.dat")
			b, _ := os.ReadFile(log)
			at := bytes.Index(b, want[newID])
			if at < 0 {
				t.Fatal("the new entry is not in the log")
			}
			b[at+len(want[newID])/2] ^= 0x40
			os.WriteFile(log, b, 0o644)
			db = openDB(t, dir, Config{})
			defer db.Close()
			if !slices.Contains(db.DictionaryRestored(), newID) {
				t.Fatalf("entry %d not restored: %v", newID, db.DictionaryRestored())
			}
			got, err := db.LoadColumn(world.ChunkPos{5, 5}, world.Overworld)
			if err == nil {
				err = worldtest.Compare(col, got)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Issue 35 item 4: with dictionary.dat missing, repair used to delete the
// damaged dictionary entries, so every column using them became
// unreadable for good, and a later state could take a deleted id and make
// those columns load with the wrong blocks. Now repair keeps each as a
// lost entry: the world opens, the columns using it fail loudly (naming
// the entry) and are never overwritten, no new state takes its id, and
// putting back a dictionary.dat that holds it (from a backup) restores
// every column.
func TestRepairKeepsLostDictionaryEntries(t *testing.T) {
	dir := t.TempDir()
	cols := dictWorld(t, dir, 4)
	backup, err := os.ReadFile(filepath.Join(dir, dictCopyName))
	if err != nil {
		t.Fatal(err)
	}
	damageFirstRecord(t, dir)
	os.Remove(filepath.Join(dir, dictCopyName))
	rep, err := Config{Log: quiet}.Repair(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.DictionaryLost) == 0 {
		t.Fatalf("no entry kept as lost: %+v", rep)
	}
	for _, k := range rep.Keys {
		if k.Named && strings.HasPrefix(k.Name, dictPrefix) && !k.Restored {
			t.Fatalf("repair deleted %s", DescribeRecord(k.Name))
		}
	}
	db := openDB(t, dir, Config{})
	failed := 0
	for i := 1; i < len(cols); i++ {
		got, err := db.LoadColumn(world.ChunkPos{int32(i), 0}, world.Overworld)
		if err == nil {
			if err := worldtest.Compare(cols[i], got); err != nil {
				t.Fatalf("column %d loaded wrong: %v", i, err)
			}
			continue
		}
		failed++
		if !errors.Is(err, ErrUnknownState) || !errors.Is(err, ErrColumnCorrupt) || !strings.Contains(err.Error(), "block dictionary entry") {
			t.Fatalf("column %d: %v", i, err)
		}
		// Quarantined: a store over it is refused.
		if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, worldtest.Synthetic(99, world.Overworld, world.DefaultBlockRegistry)); err == nil {
			t.Fatalf("column %d, whose entry is lost, was overwritten", i)
		}
	}
	if failed == 0 {
		t.Fatal("no column used a lost entry: the test needs one")
	}
	// A new state takes a new id, never a lost one.
	col := worldtest.Synthetic(7, world.Overworld, world.DefaultBlockRegistry)
	col.Chunk.SetBlock(0, 0, 0, 0, worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"])
	if err := db.StoreColumn(world.ChunkPos{30, 30}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	eng := engineDictionary(t, dir)
	for _, id := range rep.DictionaryLost {
		if string(eng[id]) != lostEntry {
			t.Fatalf("entry %d no longer marked lost", id)
		}
	}

	// The copy from a backup brings every column back.
	os.WriteFile(filepath.Join(dir, dictCopyName), backup, 0o644)
	db = openDB(t, dir, Config{})
	if got := db.DictionaryRestored(); !slices.Equal(got, rep.DictionaryLost) {
		t.Fatalf("restored %v, lost %v", got, rep.DictionaryLost)
	}
	loadAll(t, db, cols, 1)
	db.Close()
	db = openDB(t, dir, Config{})
	defer db.Close()
	loadAll(t, db, cols, 1)
}

// DescribeRecord names the kind of thing a named record holds, so that no
// message calls a dictionary entry or a player spawn a column (issue 35
// item 4).
func TestDescribeRecord(t *testing.T) {
	for name, want := range map[string]string{
		"dict/1a": "block dictionary entry 26",
		"player/00000000-0000-0000-0000-000000000001": "player spawn 00000000-0000-0000-0000-000000000001",
		editionName: "the world's edition",
		"other":     `record "other"`,
	} {
		if got := DescribeRecord(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// BenchmarkStoreAddingEntry times stores that each add a block dictionary
// entry (a column holding a state the world has not seen), the stores
// whose entries dictionary.dat must follow (issue 35 item 4): the store
// only wakes the copy's writer, which syncs the log and writes the copy
// off its path. Run it for fewer stores than the registry has states
// (-benchtime 2000x).
func BenchmarkStoreAddingEntry(b *testing.B) {
	br := world.DefaultBlockRegistry
	br.Finalize()
	db, err := Config{Log: quiet}.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	col := worldtest.Synthetic(0, world.Overworld, br)
	if err := db.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, col); err != nil {
		b.Fatal(err)
	}
	n := uint32(br.BlockCount())
	added := int64(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if uint32(i) >= n {
			b.Fatalf("more stores than the registry's %d states", n)
		}
		before := db.eng.Stats().NamedKeys
		col.Chunk.SetBlock(0, 0, 0, 0, uint32(i))
		if err := db.StoreColumn(world.ChunkPos{int32(i + 1), 0}, world.Overworld, col); err != nil {
			b.Fatal(err)
		}
		added += int64(db.eng.Stats().NamedKeys - before)
	}
	b.ReportMetric(float64(added)/float64(b.N), "entries/op")
}

// Issue 35 item 4, with item 11: once compaction carries a damaged live
// record, every Sync reports it. The writer that keeps dictionary.dat
// current syncs before it writes the copy, and took that report for a
// failed sync: the copy stopped following new entries for as long as the
// damage stayed, so one more fault could lose them.
func TestDictionaryCopyCurrentBesideCarriedDamage(t *testing.T) {
	dir := t.TempDir()
	dictWorld(t, dir, 4)
	// Damage column (1, 0)'s record, which index.dat covers: no open
	// scans it, so it stays live, and compaction carries it.
	log := filepath.Join(dir, engineDir, "chunks.dat")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x55
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}

	db := openDB(t, dir, Config{})
	if err := db.Engine().Compact(); !blazedb.IsDamageReport(err) {
		t.Fatalf("Compact over a damaged live record: %v, want a damage report", err)
	}
	_, want := storeNewState(t, db)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(dir, dictCopyName))
		if err == nil {
			if cp, err := parseDictCopy(b); err == nil && maps.EqualFunc(cp.entries, want, bytes.Equal) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("dictionary.dat did not take the entry added beside a carried damaged record")
		}
	}
	if err := db.Sync(); !blazedb.IsDamageReport(err) {
		t.Fatalf("Sync: %v, want only the damage report", err)
	}
}

// Issue 35 items 1 and 4: a compacted log puts the named records
// (dictionary entries among them) after the columns, so a log cut short
// loses entries whose columns survive. Repair accepts the durable loss,
// and must take the entries it cost from dictionary.dat, as an open that
// sees the loss does: before, it left them out of the engine, the next
// open (which no longer saw a loss) did not look for them, and its Close
// wrote dictionary.dat again without them.
func TestRepairRestoresDictionaryLostWithDurableBytes(t *testing.T) {
	dir := t.TempDir()
	cols := dictWorld(t, dir, 3)
	eng, err := blazedb.Open(filepath.Join(dir, engineDir), blazedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(eng.Compact(), eng.Close()); err != nil {
		t.Fatal(err)
	}
	copyBefore, err := os.ReadFile(filepath.Join(dir, dictCopyName))
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, engineDir, "chunks.dat")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, []byte(dictPrefix))
	if at < 0 {
		t.Fatal("no dictionary record in the log")
	}
	if err := os.Truncate(log, int64(at-28)); err != nil { // the record's header before its key
		t.Fatal(err)
	}
	if _, err := (Config{Log: quiet}).Open(dir); !errors.Is(err, blazedb.ErrDurableLoss) {
		t.Fatalf("open of the cut log: %v, want ErrDurableLoss", err)
	}
	rep, err := (Config{Log: quiet}).Repair(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dictionary) == 0 || len(rep.Lost) == 0 {
		t.Fatalf("repair: restored entries %v, lost keys %v", rep.Dictionary, rep.Lost)
	}
	db := openDB(t, dir, Config{})
	loadAll(t, db, cols, 0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := engineDictionary(t, dir); len(got) == 0 {
		t.Fatal("the engine holds no dictionary entry after repair")
	}
	if b, err := os.ReadFile(filepath.Join(dir, dictCopyName)); err != nil || len(b) < len(copyBefore) {
		t.Fatalf("dictionary.dat shrank from %d to %d bytes (%v)", len(copyBefore), len(b), err)
	}
}

// Issue 35 item 4: dictionary.dat, written while the world is open, and
// a compaction after it: Close wrote the copy again only when entries had
// changed, so it kept the earlier generation, and blaze check on the
// cleanly closed world said dictionary.dat was not current (the writer
// racing a server's compaction made TestCompactAroundDamagedColumn fail
// now and then). Close writes it beside the generation it closes at.
func TestDictionaryCopyCurrentAfterCompaction(t *testing.T) {
	dir := t.TempDir()
	dictWorld(t, dir, 1)
	db := openDB(t, dir, Config{ExternalMaintenance: true})
	storeNewState(t, db)
	if err := db.Maintain(); err != nil { // writes dictionary.dat
		t.Fatal(err)
	}
	if !db.DictionaryCopyCurrent() {
		t.Fatal("dictionary.dat not written by Maintain")
	}
	if err := db.Engine().Compact(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro := openDB(t, dir, Config{ReadOnly: true})
	defer ro.Close()
	if !ro.DictionaryCopyCurrent() {
		t.Fatal("dictionary.dat is not current after a clean close")
	}
}

// storeNewState stores at (5, 5) a column holding a block state that
// dictWorld's columns do not, so that the store adds a dictionary entry,
// and returns the column and every persisted entry after the store.
func storeNewState(t *testing.T, db *DB) (*chunk.Column, map[int32][]byte) {
	t.Helper()
	col := worldtest.Synthetic(0, world.Overworld, world.DefaultBlockRegistry)
	col.Chunk.SetBlock(0, 0, 0, 0, worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"])
	if err := db.StoreColumn(world.ChunkPos{5, 5}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	want := map[int32][]byte{}
	db.dict.mu.Lock()
	maps.Copy(want, db.dict.persistedEntries())
	db.dict.mu.Unlock()
	return col, want
}
