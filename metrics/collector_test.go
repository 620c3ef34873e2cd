package metrics

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/prefetch"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// values gathers reg and returns each sample's value by name, with its
// labels in braces when it has any.
func values(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range m.GetLabel() {
				name += "{" + l.GetName() + "=" + l.GetValue() + "}"
			}
			out[name] = value(mf.GetType(), m)
		}
	}
	return out
}

func value(t dto.MetricType, m *dto.Metric) float64 {
	if t == dto.MetricType_COUNTER {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// Issue 38 item 7: a Collector over a real world reads the engine's, the
// column cache's, the ready copies' and the prefetcher's figures at each
// scrape, so that stores, loads, prefetches and a compaction show in the
// next scrape; and the metrics pass Prometheus' lint.
func TestCollectorFollowsARealWorld(t *testing.T) {
	// A world of n columns, written and opened again, so that its column
	// cache starts cold.
	const n = 5
	dir := t.TempDir()
	store := func(db *provider.DB, from int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			col := worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
			if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, col); err != nil {
				t.Fatal(err)
			}
		}
		// Stores are written off the caller's goroutine (issue 42); the
		// engine's figures show them once Sync has written them.
		if err := db.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	store(db, 0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = (provider.Config{Log: quiet}).Open(dir); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pf := prefetch.New(db, prefetch.Options{ViewRadius: 2})
	defer pf.Close()
	c := NewCollector(Sources{Engine: db.Engine(), Columns: db, Prefetcher: pf})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)

	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
	if n := testutil.CollectAndCount(c); n != 22+1+4+5 { // engine_keys has two samples
		t.Fatalf("%d samples", n)
	}
	before := values(t, reg)
	if before["blaze_engine_keys{kind=chunk}"] != n || before["blaze_engine_appends_total"] != 0 || before["blaze_column_cache_hits_total"] != 0 {
		t.Fatalf("a world of %d columns just opened: %v", n, before)
	}

	store(db, n)
	stored := values(t, reg)
	if stored["blaze_engine_keys{kind=chunk}"] != 2*n || stored["blaze_engine_keys{kind=named}"] == 0 {
		t.Errorf("keys after %d more stores: %v chunk, %v named", n, stored["blaze_engine_keys{kind=chunk}"], stored["blaze_engine_keys{kind=named}"])
	}
	for _, name := range []string{"blaze_engine_appends_total", "blaze_engine_append_bytes_total", "blaze_engine_log_bytes", "blaze_engine_live_bytes"} {
		if stored[name] <= before[name] {
			t.Errorf("%s: %v before the stores, %v after", name, before[name], stored[name])
		}
	}
	if got := stored["blaze_engine_log_bytes"]; got != float64(db.Engine().Stats().LogBytes) {
		t.Errorf("log bytes %v, engine says %d", got, db.Engine().Stats().LogBytes)
	}

	// A cold load, a hot one, a prefetch and the load that takes its copy.
	if _, err := db.LoadColumn(world.ChunkPos{0, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if _, err := db.LoadColumn(world.ChunkPos{0, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Prefetch(world.ChunkPos{1, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if _, err := db.LoadColumn(world.ChunkPos{1, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	hits, misses := db.CacheStats()
	if hits == 0 || misses == 0 {
		t.Fatalf("cache stats %d hits, %d misses: the loads did not reach both", hits, misses)
	}
	if err := db.Engine().Compact(); err != nil {
		t.Fatal(err)
	}

	var want strings.Builder
	want.WriteString(`
# HELP blaze_column_cache_hits_total LoadColumn calls served from the provider's column cache.
# TYPE blaze_column_cache_hits_total counter
blaze_column_cache_hits_total ` + itoa(hits) + `
# HELP blaze_column_cache_misses_total LoadColumn calls that read and decoded the column from the engine.
# TYPE blaze_column_cache_misses_total counter
blaze_column_cache_misses_total ` + itoa(misses) + `
# HELP blaze_ready_copies_made_total Ready copies of columns made by Prefetch for the next LoadColumn.
# TYPE blaze_ready_copies_made_total counter
blaze_ready_copies_made_total 1
# HELP blaze_ready_copies_taken_total Ready copies handed out by LoadColumn; the rest were wasted.
# TYPE blaze_ready_copies_taken_total counter
blaze_ready_copies_taken_total 1
# HELP blaze_engine_compactions_total Compactions completed.
# TYPE blaze_engine_compactions_total counter
blaze_engine_compactions_total 1
# HELP blaze_prefetch_players Players the prefetcher follows now.
# TYPE blaze_prefetch_players gauge
blaze_prefetch_players 0
`)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want.String()),
		"blaze_column_cache_hits_total", "blaze_column_cache_misses_total", "blaze_ready_copies_made_total",
		"blaze_ready_copies_taken_total", "blaze_engine_compactions_total", "blaze_prefetch_players"); err != nil {
		t.Error(err)
	}
	after := values(t, reg)
	if after["blaze_engine_generation"] != stored["blaze_engine_generation"]+1 || after["blaze_engine_compaction_written_bytes_total"] == 0 {
		t.Errorf("after a compaction: generation %v (was %v), %v bytes written",
			after["blaze_engine_generation"], stored["blaze_engine_generation"], after["blaze_engine_compaction_written_bytes_total"])
	}
	// A player walking east: the chunks ahead of it are predicted (and
	// the prefetcher's workers read them, beside the scrapes).
	player := uuid.New()
	for i := range 20 {
		pf.UpdatePlayer(player, mgl64.Vec3{8 + float64(i)*2, 64, 8}, world.Overworld)
		time.Sleep(5 * time.Millisecond)
	}
	stats := pf.Stats()
	walked := values(t, reg)
	if walked["blaze_prefetch_players"] != 1 {
		t.Errorf("%v players followed, want 1", walked["blaze_prefetch_players"])
	}
	if stats.Predicted == 0 || walked["blaze_prefetch_predicted_total"] < float64(stats.Predicted) {
		t.Errorf("prefetch: %d predicted, scraped %v", stats.Predicted, walked["blaze_prefetch_predicted_total"])
	}
}

// Issue 38 item 7: the same figures over HTTP, as Prometheus scrapes them,
// for a segmented world: the regions open, and the column cache summed over
// them, change with a store and a load in a region.
func TestScrapeSegmentedWorldOverHTTP(t *testing.T) {
	p, err := segment.Config{Log: quiet}.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(Sources{Columns: p, Segments: p}))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	expect := func(open int, hits, misses int64) {
		t.Helper()
		want := `
# HELP blaze_segments_open Regions of a segmented world open now.
# TYPE blaze_segments_open gauge
blaze_segments_open ` + itoa(int64(open)) + `
# HELP blaze_column_cache_hits_total LoadColumn calls served from the provider's column cache.
# TYPE blaze_column_cache_hits_total counter
blaze_column_cache_hits_total ` + itoa(hits) + `
# HELP blaze_column_cache_misses_total LoadColumn calls that read and decoded the column from the engine.
# TYPE blaze_column_cache_misses_total counter
blaze_column_cache_misses_total ` + itoa(misses) + `
`
		if err := testutil.ScrapeAndCompare(srv.URL, strings.NewReader(want),
			"blaze_segments_open", "blaze_column_cache_hits_total", "blaze_column_cache_misses_total"); err != nil {
			t.Error(err)
		}
	}
	expect(0, 0, 0)
	col := worldtest.Synthetic(7, world.Overworld, world.DefaultBlockRegistry)
	if err := p.StoreColumn(world.ChunkPos{100, 100}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	if _, err := p.LoadColumn(world.ChunkPos{100, 100}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	hits, misses := p.CacheStats()
	if hits+misses != 1 || p.OpenSegments() != 1 {
		t.Fatalf("one load in one region: %d hits, %d misses, %d regions open", hits, misses, p.OpenSegments())
	}
	expect(1, hits, misses)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A source given as a nil pointer of its type, as a server without a
// prefetcher passes its *prefetch.Prefetcher, is no source: every scrape
// used to fail on it.
func TestCollectorTakesTypedNilAsNone(t *testing.T) {
	var pf *prefetch.Prefetcher
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(Sources{Prefetcher: pf}))
	if _, err := reg.Gather(); err != nil {
		t.Fatalf("a scrape with a nil *prefetch.Prefetcher: %v", err)
	}
}
