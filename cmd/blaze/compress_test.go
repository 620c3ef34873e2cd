package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// smallWorld is the smallest of the real test worlds.
func smallWorld(t *testing.T) string {
	t.Helper()
	for _, w := range worldtest.Worlds(t) {
		if strings.Contains(w, "example3") {
			return w
		}
	}
	t.Skip("example3-1.19 is not among the test worlds")
	return ""
}

// columnsOf reads every column of the Blaze world in dir, and the codecs
// of their frames.
func columnsOf(t *testing.T, dir string) (map[provider.Place]*chunk.Column, map[blazedb.Compression]int) {
	t.Helper()
	db, err := provider.Config{ReadOnly: true}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	places, err := db.Columns()
	if err != nil {
		t.Fatal(err)
	}
	cols := map[provider.Place]*chunk.Column{}
	for _, pl := range places {
		if cols[pl], err = db.LoadColumn(pl.Pos, pl.Dim); err != nil {
			t.Fatal(err)
		}
	}
	codecs, err := db.FrameCodecs()
	if err != nil {
		t.Fatal(err)
	}
	return cols, codecs
}

// Issue 38 item 4: blaze convert -compression chooses the codec of the
// Blaze world it makes, and blaze compact -recompress -compression zstd
// brings a world converted with LZ4 to zstd (every frame that any codec
// shrinks), reading the same, column for column.
func TestConvertCompressionAndRecompress(t *testing.T) {
	src := smallWorld(t)
	dir := filepath.Join(t.TempDir(), "w")
	if code := run([]string{"convert", src, dir, "-q", "-compression", "lz4"}); code != exitOK {
		t.Fatalf("convert: status %d", code)
	}
	before, codecs := columnsOf(t, dir)
	if len(before) == 0 || codecs[blazedb.CompressionLZ4] == 0 || codecs[blazedb.CompressionZstd] != 0 {
		t.Fatalf("converted with lz4: %d columns, frames %v", len(before), codecs)
	}

	if code := run([]string{"compact", dir, "-compression", "zstd"}); code != exitUsage {
		t.Fatalf("compact -compression without -recompress: status %d, want %d", code, exitUsage)
	}
	if code := run([]string{"compact", dir}); code != exitOK {
		t.Fatalf("compact: status %d", code)
	}
	if _, codecs := columnsOf(t, dir); codecs[blazedb.CompressionZstd] != 0 {
		t.Fatalf("compact without -recompress changed codecs: %v", codecs)
	}

	if code := run([]string{"compact", "-recompress", "-compression", "zstd", dir}); code != exitOK {
		t.Fatalf("compact -recompress: status %d", code)
	}
	after, codecs := columnsOf(t, dir)
	if codecs[blazedb.CompressionLZ4] != 0 || codecs[blazedb.CompressionZstd] == 0 {
		t.Fatalf("after compact -recompress -compression zstd: frames %v", codecs)
	}
	if len(after) != len(before) {
		t.Fatalf("%d columns after, %d before", len(after), len(before))
	}
	for pl, col := range before {
		if err := colcmp.Compare(col, after[pl]); err != nil {
			t.Fatalf("column %v (%v) after recompression: %v", pl.Pos, pl.Dim, err)
		}
	}
	if code := run([]string{"check", "-q", dir}); code != exitOK {
		t.Fatalf("check after recompression: status %d", code)
	}

	// Straight to zstd, and -compression refused where it means nothing.
	z := filepath.Join(t.TempDir(), "z")
	if code := run([]string{"convert", "-q", "-compression", "zstd", src, z}); code != exitOK {
		t.Fatalf("convert -compression zstd: status %d", code)
	}
	if _, codecs := columnsOf(t, z); codecs[blazedb.CompressionLZ4] != 0 || codecs[blazedb.CompressionZstd] == 0 {
		t.Fatalf("converted with zstd: frames %v", codecs)
	}
	if code := run([]string{"convert", "-q", "-compression", "zstd", z, filepath.Join(t.TempDir(), "l")}); code != exitFailed {
		t.Fatalf("-compression to a LevelDB world: status %d, want %d", code, exitFailed)
	}
	if code := run([]string{"convert", "-q", "-compression", "brotli", src, filepath.Join(t.TempDir(), "b")}); code != exitUsage {
		t.Fatalf("unknown codec: status %d, want %d", code, exitUsage)
	}
}

// Issue 41 item 2: blaze compact packs every column in one frame of its
// codec; -archive packs them in zstd; -unpack brings them back to frames
// of -compression, as servers store them; each reads the same, column for
// column, and an archived world checks clean.
func TestCompactArchiveAndUnpack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	db := openTest(t, dir)
	for i := range 3 {
		store(t, db, int32(i), 0, world.Overworld, uint64(i))
	}
	store(t, db, 0, 0, world.Nether, 3)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := columnsOf(t, dir)
	for _, c := range []struct {
		args   []string
		codec  blazedb.Compression // of every frame (or stored raw)
		packed bool                // one frame a column

	}{
		{[]string{"compact", "-q"}, blazedb.CompressionLZ4, true},
		{[]string{"compact", "-q", "-archive"}, blazedb.CompressionZstd, true},
		{[]string{"compact", "-q", "-unpack", "-compression", "lz4"}, blazedb.CompressionLZ4, false},
	} {
		if code := run(append(c.args, dir)); code != exitOK {
			t.Fatalf("%v: status %d", c.args, code)
		}
		after, codecs := columnsOf(t, dir)
		for k := range codecs {
			if k != c.codec && k != blazedb.CompressionNone {
				t.Fatalf("%v: frames %v", c.args, codecs)
			}
		}
		if packed := codecs[c.codec]+codecs[blazedb.CompressionNone] == len(after); packed != c.packed {
			t.Fatalf("%v: frames %v for %d columns", c.args, codecs, len(after))
		}
		if len(after) != len(before) {
			t.Fatalf("%v: %d columns after, %d before", c.args, len(after), len(before))
		}
		for pl, col := range before {
			if err := colcmp.Compare(col, after[pl]); err != nil {
				t.Fatalf("%v: column %v (%v): %v", c.args, pl.Pos, pl.Dim, err)
			}
		}
		if c.codec == blazedb.CompressionZstd { // once: check reads every column again
			if code := run([]string{"check", "-q", dir}); code != exitOK {
				t.Fatalf("check after %v: status %d", c.args, code)
			}
		}
	}
	if code := run([]string{"compact", "-archive", "-unpack", dir}); code != exitUsage {
		t.Fatalf("-archive with -unpack: status %d, want %d", code, exitUsage)
	}
}
