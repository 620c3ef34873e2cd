package main

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/worldmap"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
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
