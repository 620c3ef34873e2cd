package demo

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// scrape fetches url and returns the value of each unlabelled sample, and
// of blaze_engine_keys by kind, from Prometheus' text format.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET %s: Content-Type %q, not Prometheus' text format", url, ct)
	}
	out := map[string]float64{}
	for _, m := range sample.FindAllStringSubmatch(string(body), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("%q: %v", m[0], err)
		}
		out[m[1]] = v
	}
	return out
}

var sample = regexp.MustCompile(`(?m)^((?:blaze|go|process)_[a-z_]+(?:\{kind="[a-z]+"\})?) (\S+)$`)

// Issue 38 item 7: with Config.Metrics the demo serves Prometheus' /metrics
// over loopback: Blaze's figures, which follow the world (a store shows in
// the next scrape), and the Go runtime's and the process's; when the server
// closes, Serve stops serving them.
func TestDemoServesMetrics(t *testing.T) {
	r, err := Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "w"), Offline: true, Log: quiet,
		Metrics: "127.0.0.1:0"}.New()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- r.Serve() }()
	addr := r.MetricsAddr()
	if addr == nil || !strings.HasPrefix(addr.String(), "127.0.0.1:") {
		t.Fatalf("metrics address %v", addr)
	}
	url := "http://" + addr.String() + "/metrics"

	before := scrape(t, url)
	for _, name := range []string{`blaze_engine_keys{kind="chunk"}`, "blaze_engine_log_bytes", "blaze_column_cache_hits_total",
		"blaze_ready_copies_made_total", "blaze_prefetch_players", "go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := before[name]; !ok {
			t.Errorf("%s not served", name)
		}
	}
	col := worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry)
	if err := r.World.StoreColumn(world.ChunkPos{1000, 1000}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	if err := r.World.Sync(); err != nil { // the engine's figures count the store once written (issue 42)
		t.Fatal(err)
	}
	after := scrape(t, url)
	for _, name := range []string{`blaze_engine_keys{kind="chunk"}`, "blaze_engine_appends_total", "blaze_engine_log_bytes"} {
		if after[name] <= before[name] {
			t.Errorf("%s: %v before a store, %v after", name, before[name], after[name])
		}
	}

	if err := r.Server.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return after Close")
	}
	if c, err := net.DialTimeout("tcp", addr.String(), time.Second); err == nil {
		c.Close()
		t.Fatal("metrics still served after the server closed")
	}
}

// Issue 38 item 7: an address /metrics cannot be served on fails New
// before the world is opened, so the world stays free for a server that
// can.
func TestDemoMetricsAddressTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := filepath.Join(t.TempDir(), "w")
	r, err := Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet, Metrics: taken.Addr().String()}.New()
	if err == nil {
		closeUnserved(r)
		r.StopMetrics()
		t.Fatal("served metrics on a taken address")
	}
	if !strings.Contains(err.Error(), "cannot serve metrics on "+taken.Addr().String()) {
		t.Fatal(err)
	}
	r, err = Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet, Metrics: "127.0.0.1:0"}.New()
	if err != nil {
		t.Fatal(err)
	}
	closeUnserved(r)
	if err := r.StopMetrics(); err != nil {
		t.Fatal(err)
	}
	if err := r.StopMetrics(); err != nil {
		t.Fatal("a second StopMetrics:", err)
	}
}
