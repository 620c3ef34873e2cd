package demo

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// getMap fetches the map at base+"/map.png" and returns it, or nil with
// the status when it is not served.
func getMap(t *testing.T, base string) (image.Image, int) {
	t.Helper()
	resp, err := http.Get(base + "/map.png")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode
	}
	if ct := resp.Header.Get("Content-Type"); ct != "image/png" {
		t.Fatalf("/map.png: Content-Type %q", ct)
	}
	img, err := png.Decode(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return img, resp.StatusCode
}

// Issue 38 item 8: beside /metrics the demo serves a page with a map of
// the world (/map.png, drawn at each request), which a real headless
// browser (Debian's chromium) loads and shows at the map's size; a world
// with no columns yet has no map, and the page says so.
func TestDemoMapPageInABrowser(t *testing.T) {
	r, err := Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "w"), Offline: true, Log: quiet,
		Metrics: "127.0.0.1:0"}.New()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		closeUnserved(r)
		r.StopMetrics()
	}()
	base := "http://" + r.MetricsAddr().String()
	if _, status := getMap(t, base); status != http.StatusNotFound {
		t.Fatalf("a world with no columns: /map.png status %d", status)
	}
	for x := range int32(3) {
		col := worldtest.Synthetic(uint64(x), world.Overworld, world.DefaultBlockRegistry)
		if err := r.World.StoreColumn(world.ChunkPos{x - 1, 2}, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
	}
	img, status := getMap(t, base)
	if status != http.StatusOK || img.Bounds().Dx() != 48 || img.Bounds().Dy() != 16 {
		t.Fatalf("/map.png: status %d, %v", status, img)
	}

	browser, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no chromium on PATH: .ci/run installs Debian's chromium, so CI checks the page in a browser")
		}
		t.Skip("no chromium on PATH (Debian's chromium package): the page is not checked in a browser")
	}
	dom := func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// As root, Chromium runs only without its sandbox.
		out, err := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
			"--disable-dev-shm-usage", "--no-first-run", "--user-data-dir="+t.TempDir(),
			"--virtual-time-budget=10000", "--dump-dom", base+"/").Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return string(out)
	}
	got := dom()
	if want := fmt.Sprintf(`data-map="%dx%d"`, img.Bounds().Dx(), img.Bounds().Dy()); !strings.Contains(got, want) {
		t.Fatalf("the browser did not show the map (%s):\n%s", want, got)
	}
	if !strings.Contains(got, `href="/metrics"`) {
		t.Fatalf("the page does not link /metrics:\n%s", got)
	}
}

// Issue 38 item 8: in arena mode the map is the template's, with the
// match's changed chunks read from the overlay and outlined.
func TestDemoArenaMapOutlinesChanges(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "template")
	db, err := provider.Config{Log: quiet}.Open(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	for x := range int32(2) {
		if err := db.StoreColumn(world.ChunkPos{x, 0}, world.Overworld, worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "arena"), ArenaTemplate: tmpl, Offline: true, Log: quiet,
		Metrics: "127.0.0.1:0"}.New()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		r.StopMetrics()
		r.Prefetcher.Close()
		r.Arena.Shutdown()
		r.World.Close()
	}()
	if err := r.Arena.StoreColumn(world.ChunkPos{1, 0}, world.Overworld, worldtest.Synthetic(2, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	img, status := getMap(t, "http://"+r.MetricsAddr().String())
	if status != http.StatusOK || img.Bounds().Dx() != 32 || img.Bounds().Dy() != 16 {
		t.Fatalf("/map.png: status %d, %v", status, img)
	}
	outline := color.NRGBAModel.Convert(color.NRGBA{255, 0, 255, 255})
	for _, p := range []image.Point{{16, 0}, {31, 15}, {16, 8}} {
		if c := color.NRGBAModel.Convert(img.At(p.X, p.Y)); c != outline {
			t.Errorf("(%d, %d) on the changed chunk's edge: %v", p.X, p.Y, c)
		}
	}
	for _, p := range []image.Point{{0, 0}, {15, 15}, {20, 8}} {
		if c := color.NRGBAModel.Convert(img.At(p.X, p.Y)); c == outline {
			t.Errorf("(%d, %d) outlined, off the changed chunk's edge", p.X, p.Y)
		}
	}
}
