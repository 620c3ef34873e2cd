package segment

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// A world keeps the segment size it was made with: a zero SegmentSize
// opens it with its own, another size is refused before anything is
// written, and every column loads where it was stored.
func TestSegmentSizeKept(t *testing.T) {
	dir := t.TempDir()
	p := openSeg(t, dir, Config{SegmentSize: 4})
	at := world.ChunkPos{5, -3} // region 1,-1 with 4; 0,-1 with the default 32
	if err := p.StoreColumn(at, world.Overworld, col(1, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{32, 8} {
		if _, err := (Config{Log: quiet, SegmentSize: size}).Open(dir); !errors.Is(err, blazedb.ErrInvalidOptions) {
			t.Fatalf("open with SegmentSize %d: %v, want ErrInvalidOptions", size, err)
		}
	}
	for _, size := range []int{0, 4} {
		p := openSeg(t, dir, Config{SegmentSize: size})
		got, err := p.LoadColumn(at, world.Overworld)
		if err != nil {
			t.Fatalf("SegmentSize %d: %v", size, err)
		}
		if err := worldtest.Compare(col(1, world.Overworld), got); err != nil {
			t.Fatal(err)
		}
		p.Close()
	}
	// A new world opened with zero gets the default, and keeps it.
	dir = t.TempDir()
	openSeg(t, dir, Config{}).Close()
	if _, err := (Config{Log: quiet, SegmentSize: 4}).Open(dir); !errors.Is(err, blazedb.ErrInvalidOptions) {
		t.Fatalf("a default world opened with SegmentSize 4: %v", err)
	}
	if _, err := (Config{Log: quiet, SegmentSize: -1}).Open(dir); !errors.Is(err, blazedb.ErrInvalidOptions) {
		t.Fatalf("SegmentSize -1: %v", err)
	}
}

// A world whose layout record was lost to damage (the damage sweep flips
// its bytes; repair drops the record) is opened with the size given, once
// its columns are found where that size puts them, and records it; with a
// size that puts them elsewhere it is refused. Issue 37 had refused such a
// world as one from before the record existed, which lost it to repair.
func TestSegmentSizeOfWorldWithoutLayout(t *testing.T) {
	dir := t.TempDir()
	p := openSeg(t, dir, Config{SegmentSize: 4})
	at := world.ChunkPos{5, 0}
	if err := p.StoreColumn(at, world.Overworld, col(1, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	p.Close()
	forget := func() { // as repair does with a damaged record
		root, err := provider.Config{Log: quiet, SegmentRoot: true}.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := root.Engine().DeleteNamed(layoutName); err != nil {
			t.Fatal(err)
		}
		if err := root.Close(); err != nil {
			t.Fatal(err)
		}
	}
	forget()
	if _, err := (Config{Log: quiet}).Open(dir); !errors.Is(err, blazedb.ErrInvalidOptions) {
		t.Fatalf("a world of size 4 without its record opened with the default: %v, want ErrInvalidOptions", err)
	}
	p = openSeg(t, dir, Config{SegmentSize: 4})
	if _, err := p.LoadColumn(at, world.Overworld); err != nil {
		t.Fatal(err)
	}
	p.Close()
	// Recorded now: the default would have been refused above.
	p = openSeg(t, dir, Config{})
	if _, err := p.LoadColumn(at, world.Overworld); err != nil {
		t.Fatal(err)
	}
}

func TestParseLayout(t *testing.T) {
	for _, size := range []int{1, 4, 32, 127, 128, maxSegmentSize} {
		if got, err := parseLayout(encodeLayout(size)); err != nil || got != size {
			t.Errorf("size %d reads back as %d, %v", size, got, err)
		}
	}
	for _, c := range []struct {
		in   []byte
		want error
	}{
		{[]byte("BZS\x02\x20"), blazedb.ErrVersion},
		{[]byte("BZS\x00\x20"), blazedb.ErrCorrupt},
		{[]byte("BZS\x01"), blazedb.ErrCorrupt},
		{[]byte("BZS\x01\x00"), blazedb.ErrCorrupt},         // size 0
		{[]byte("BZS\x01\xa0\x00"), blazedb.ErrCorrupt},     // 32, not in its shortest form
		{[]byte("BZS\x01\x20\x00"), blazedb.ErrCorrupt},     // a byte after it
		{[]byte("BZS\x01\x81\x80\x40"), blazedb.ErrCorrupt}, // above the largest size
		{[]byte("BZD\x01\x20"), blazedb.ErrCorrupt},
		{nil, blazedb.ErrCorrupt},
	} {
		if _, err := parseLayout(c.in); !errors.Is(err, c.want) {
			t.Errorf("parseLayout(%q): %v, want %v", c.in, err, c.want)
		}
	}
}

// FuzzParseLayout: parseLayout never panics, and what it accepts encodes
// back to the same bytes.
func FuzzParseLayout(f *testing.F) {
	f.Add(encodeLayout(32))
	f.Add([]byte("BZS\x02\x20"))
	f.Fuzz(func(t *testing.T, b []byte) {
		size, err := parseLayout(b)
		if err != nil {
			return
		}
		if size < 1 || size > maxSegmentSize || string(encodeLayout(size)) != string(b) {
			t.Fatalf("accepted %q as %d", b, size)
		}
	})
}

// A segmented world's root is refused to a plain provider, and a plain
// world to segments: each would find none of the other's columns, and a
// World would generate them again.
func TestPlainAndSegmentedWorldsKeptApart(t *testing.T) {
	seg := t.TempDir()
	p := openSeg(t, seg, Config{})
	if err := p.StoreColumn(world.ChunkPos{1, 1}, world.Overworld, col(1, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	p.Close()
	for _, c := range []provider.Config{{Log: quiet}, {Log: quiet, ReadOnly: true}} {
		if _, err := c.Open(seg); !errors.Is(err, provider.ErrSegmentedWorld) {
			t.Fatalf("plain provider (%+v) over a segmented world: %v, want ErrSegmentedWorld", c, err)
		}
	}
	for _, c := range []provider.Config{{Log: quiet, ReadOnly: true, SegmentRoot: true}, {Log: quiet, SegmentRoot: true}} {
		db, err := c.Open(seg)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		db.Close()
	}

	plain := t.TempDir()
	db, err := provider.Config{Log: quiet}.Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.StoreColumn(world.ChunkPos{1, 1}, world.Overworld, col(1, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ldat, err := os.Stat(filepath.Join(plain, "level.dat"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Config{Log: quiet}).Open(plain); !errors.Is(err, ErrPlainWorld) {
		t.Fatalf("segments over a plain world: %v, want ErrPlainWorld", err)
	}
	if after, err := os.Stat(filepath.Join(plain, "level.dat")); err != nil || !os.SameFile(after, ldat) {
		t.Fatalf("the refused open replaced level.dat (%v)", err)
	}
	if names, _ := os.ReadDir(plain); slices.ContainsFunc(names, func(e os.DirEntry) bool { return e.Name() == "regions" }) {
		t.Fatal("the refused open made regions/")
	}
	// The world opens as it was.
	db, err = provider.Config{Log: quiet}.Open(plain)
	if err != nil {
		t.Fatalf("the plain world after the refusal: %v", err)
	}
	defer db.Close()
	if _, err := db.LoadColumn(world.ChunkPos{1, 1}, world.Overworld); err != nil {
		t.Fatal(err)
	}
}
