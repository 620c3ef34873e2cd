package main

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/worldmap"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Issue 38 item 8: `blaze render WORLD OUT.png` draws a real world (one of
// ../shared/testdata/worlds, converted to Blaze) as a PNG of one pixel per
// block column, north up: every stored column is drawn, nearly every
// block column in a known block's colour, and the world is not written.
func TestRenderRealWorld(t *testing.T) {
	var src string
	for _, w := range worldtest.Worlds(t) {
		if strings.Contains(w, "example3") {
			src = w
		}
	}
	if src == "" {
		t.Skip("example3-1.19 is not among the test worlds")
	}
	dir := filepath.Join(t.TempDir(), "w")
	if _, err := convert.Convert(worldtest.UnpackTemp(t, src), dir, convert.Options{}); err != nil {
		t.Fatal(err)
	}
	before := listing(t, dir)
	out := filepath.Join(t.TempDir(), "map.png")
	var stdout bytes.Buffer
	if code := runRender(&stdout, dir, out, world.Overworld); code != exitOK {
		t.Fatalf("status %d: %s", code, stdout.String())
	}
	if after := listing(t, dir); after != before {
		t.Fatalf("render changed the world:\n%s\nthen\n%s", before, after)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if !strings.Contains(stdout.String(), "map.png: ") || b.Dx() == 0 || b.Dx()%16 != 0 || b.Dy()%16 != 0 {
		t.Fatalf("%v: %s", b, stdout.String())
	}
	opaque, known := 0, 0
	palette := map[[3]uint8]bool{}
	for _, name := range []string{"grass_block", "water", "sand", "stone", "dirt", "oak_leaves", "oak_log", "snow", "ice", "lava", "clay", "gravel", "netherrack", "obsidian", "quartz_block", "mycelium", "crimson_nylium", "warped_nylium", "gold_block", "terracotta"} {
		c := worldmap.Colour(name)
		for _, f := range []float64{1, 220.0 / 255, 180.0 / 255} {
			palette[[3]uint8{uint8(float64(c.R) * f), uint8(float64(c.G) * f), uint8(float64(c.B) * f)}] = true
		}
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			if a == 0 {
				continue
			}
			opaque++
			if palette[[3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}] {
				known++
			}
		}
	}
	t.Logf("%s%d pixels drawn, %d in palette colours", stdout.String(), opaque, known)
	if opaque == 0 || known < opaque*9/10 {
		t.Fatalf("%d pixels drawn, %d of them in palette colours", opaque, known)
	}
}

// listing names every file under dir with its size and time.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %v\n", p, fi.Size(), fi.ModTime())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// historyWorld is what the render tests write a world through: a plain
// world's provider.DB or a segmented one's segment.Provider.
type historyWorld interface {
	StoreColumn(pos world.ChunkPos, dim world.Dimension, col *chunk.Column) error
	Snapshot(name string) error
	Close() error
}

// pixels reads the PNG file path.
func pixels(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// samePicture reports whether a and b are the same size with the same
// pixels.
func samePicture(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			if color.NRGBAModel.Convert(a.At(x, y)) != color.NRGBAModel.Convert(b.At(x, y)) {
				return false
			}
		}
	}
	return true
}

// Issue 38 item 8: blaze render -at POINT draws the world as it was at a
// point of its history, a snapshot's name or an RFC 3339 time as blaze
// changes and rollback read them: after blocks change, the map of now
// differs from the map -at the snapshot, and that one is the map made at
// the time. A plain world and a segmented one, where a region made after
// the snapshot had nothing then.
func TestRenderAt(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(t *testing.T, dir string) historyWorld
	}{
		{"plain", func(t *testing.T, dir string) historyWorld { return openTest(t, dir) }},
		{"segmented", func(t *testing.T, dir string) historyWorld {
			p, err := segment.Config{Log: slog.New(slog.DiscardHandler), SegmentSize: 4}.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "w")
			pics := t.TempDir()
			render := func(name, at string) image.Image {
				t.Helper()
				out := filepath.Join(pics, name)
				var stdout bytes.Buffer
				if code := runRenderWith(&stdout, dir, out, renderOptions{dim: world.Overworld, at: at}); code != exitOK {
					t.Fatalf("render -at %q: status %d", at, code)
				}
				if at != "" && at != "now" && !strings.Contains(stdout.String(), " at "+at) {
					t.Errorf("render -at %q printed %q", at, stdout.String())
				}
				return pixels(t, out)
			}
			w := c.open(t, dir)
			for x := range int32(6) {
				if err := w.StoreColumn(world.ChunkPos{x, 0}, world.Overworld, synth(uint64(x+1), world.Overworld)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			then := render("then.png", "")
			w = c.open(t, dir)
			if err := w.Snapshot("before-the-match"); err != nil {
				t.Fatal(err)
			}
			// A time is read to within a second (blazedb.DB.SeqAt), and
			// RFC 3339 cuts it to the second.
			time.Sleep(2100 * time.Millisecond)
			moment := time.Now()
			time.Sleep(1100 * time.Millisecond)
			for _, x := range []int32{1, 4} {
				if err := w.StoreColumn(world.ChunkPos{x, 0}, world.Overworld, synth(uint64(x+20), world.Overworld)); err != nil {
					t.Fatal(err)
				}
			}
			// A column (and, segmented, a region) made since.
			if err := w.StoreColumn(world.ChunkPos{9, 0}, world.Overworld, synth(30, world.Overworld)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			now := render("now.png", "")
			if samePicture(now, then) {
				t.Fatal("the map of now is the map made before the changes")
			}
			if !samePicture(render("at-now.png", "now"), now) {
				t.Error("render -at now is not the map of now")
			}
			for _, at := range []string{"before-the-match", moment.UTC().Format(time.RFC3339)} {
				if got := render("at.png", at); !samePicture(got, then) {
					t.Errorf("render -at %s: %v, not the map made at the time (%v)", at, got.Bounds(), then.Bounds())
				}
			}
			// The command line, -at after the operands.
			out, errOut, code := blaze(t, "render", dir, filepath.Join(pics, "cli.png"), "-at", "before-the-match")
			if code != exitOK || !samePicture(pixels(t, filepath.Join(pics, "cli.png")), then) {
				t.Errorf("blaze render DIR OUT -at SNAPSHOT: status %d, %q, %q", code, out, errOut)
			}
			if code := runRenderWith(io.Discard, dir, filepath.Join(pics, "x.png"), renderOptions{dim: world.Overworld, at: "no-such-point"}); code != exitFailed {
				t.Errorf("render -at a point that is none: status %d", code)
			}
		})
	}
}

// Issue 38 item 8: blaze render of an arena overlay draws the columns its
// match changed, outlined, over its template's map with -template; alone
// without. -at an overlay, and -template for a world that is no overlay,
// are refused.
func TestRenderArena(t *testing.T) {
	tdir := filepath.Join(t.TempDir(), "template")
	tw := openTest(t, tdir)
	for x := range int32(3) {
		store(t, tw, x, 0, world.Overworld, 1)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	tmpl, err := provider.Config{Log: slog.New(slog.DiscardHandler), ReadOnly: true}.Open(tdir)
	if err != nil {
		t.Fatal(err)
	}
	odir := filepath.Join(t.TempDir(), "arena")
	o, err := overlay.Config{Log: slog.New(slog.DiscardHandler)}.Open(tmpl, odir)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.StoreColumn(world.ChunkPos{1, 0}, world.Overworld, synth(7, world.Overworld)); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(o.Shutdown(), tmpl.Close()); err != nil {
		t.Fatal(err)
	}
	pics := t.TempDir()
	var stdout bytes.Buffer
	if code := runRenderWith(&stdout, odir, filepath.Join(pics, "arena.png"), renderOptions{dim: world.Overworld, template: tdir}); code != exitOK {
		t.Fatalf("render an arena: status %d", code)
	}
	if !strings.Contains(stdout.String(), "1 column changed by the arena's match, outlined") {
		t.Errorf("render an arena printed %q", stdout.String())
	}
	if code := runRender(io.Discard, tdir, filepath.Join(pics, "template.png"), world.Overworld); code != exitOK {
		t.Fatalf("render the template: status %d", code)
	}
	arena, plain := pixels(t, filepath.Join(pics, "arena.png")), pixels(t, filepath.Join(pics, "template.png"))
	if arena.Bounds() != plain.Bounds() || arena.Bounds().Dx() != 48 {
		t.Fatalf("the arena's map %v, the template's %v", arena.Bounds(), plain.Bounds())
	}
	outline := color.NRGBA{255, 0, 255, 255}
	at := func(img image.Image, x, y int) color.NRGBA {
		return color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
	}
	for _, p := range []image.Point{{16, 0}, {31, 15}, {16, 8}, {24, 15}} {
		if c := at(arena, p.X, p.Y); c != outline {
			t.Errorf("(%d, %d) on the changed chunk's edge: %v", p.X, p.Y, c)
		}
	}
	differs := false
	for y := 1; y < 15; y++ {
		for x := 17; x < 31; x++ {
			differs = differs || at(arena, x, y) != at(plain, x, y)
		}
	}
	for y := range 16 {
		for _, x := range []int{0, 8, 15, 32, 40, 47} {
			if at(arena, x, y) != at(plain, x, y) {
				t.Fatalf("(%d, %d), off the changed chunk: %v, the template's %v", x, y, at(arena, x, y), at(plain, x, y))
			}
		}
	}
	if !differs {
		t.Error("the changed chunk is drawn as the template's, not the match's")
	}

	// Without -template: the changes alone, outlined.
	stdout.Reset()
	if code := runRenderWith(&stdout, odir, filepath.Join(pics, "changes.png"), renderOptions{dim: world.Overworld}); code != exitOK {
		t.Fatalf("render an arena without its template: status %d", code)
	}
	if img := pixels(t, filepath.Join(pics, "changes.png")); img.Bounds().Dx() != 16 || at(img, 0, 0) != outline || !strings.Contains(stdout.String(), "from chunk (1, 0)") {
		t.Errorf("the changes alone: %v, %v; %s", img.Bounds(), at(img, 0, 0), stdout.String())
	}
	if code := runRenderWith(io.Discard, odir, filepath.Join(pics, "x.png"), renderOptions{dim: world.Overworld, at: "s"}); code != exitFailed {
		t.Errorf("render -at of an arena overlay: status %d", code)
	}
	if code := runRenderWith(io.Discard, tdir, filepath.Join(pics, "x.png"), renderOptions{dim: world.Overworld, template: tdir}); code != exitFailed {
		t.Errorf("render -template of a world that is no overlay: status %d", code)
	}
}
