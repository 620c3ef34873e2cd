package metrics

import (
	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/prefetch"
	"github.com/prometheus/client_golang/prometheus"
	"reflect"
)

// Engine gives a database's figures: *blazedb.DB (for a world,
// provider.DB.Engine()).
type Engine interface {
	Stats() blazedb.Stats
}

// Columns gives the column cache's figures: *provider.DB and
// *segment.Provider.
type Columns interface {
	CacheStats() (hits, misses int64)
	ReadyStats() (made, taken int64)
}

// Prefetcher gives the prefetcher's figures: *prefetch.Prefetcher.
type Prefetcher interface {
	Stats() prefetch.Stats
}

// Segments gives the number of regions open: *segment.Provider.
type Segments interface {
	OpenSegments() int
}

// Sources are what a Collector reads at each scrape. Any may be nil, or a
// nil pointer of its type: its metrics are then neither described nor
// collected. The objects must be
// safe to call from any goroutine, as all of the types named above are.
type Sources struct {
	Engine     Engine
	Columns    Columns
	Prefetcher Prefetcher
	Segments   Segments
}

// Collector is a prometheus.Collector of Blaze's figures, read from its
// Sources on each scrape. It is safe for concurrent use.
type Collector struct {
	src   Sources
	descs []*prometheus.Desc
}

// NewCollector returns a Collector of what src provides. It reads nothing
// until it is collected.
func NewCollector(src Sources) *Collector {
	// A nil pointer in an interface (a *prefetch.Prefetcher never made) is
	// no source: its metrics would fail every scrape.
	if absent(src.Engine) {
		src.Engine = nil
	}
	if absent(src.Columns) {
		src.Columns = nil
	}
	if absent(src.Prefetcher) {
		src.Prefetcher = nil
	}
	if absent(src.Segments) {
		src.Segments = nil
	}
	c := &Collector{src: src}
	if src.Engine != nil {
		c.descs = append(c.descs, engineDescs.all()...)
	}
	if src.Columns != nil {
		c.descs = append(c.descs, columnDescs.all()...)
	}
	if src.Prefetcher != nil {
		c.descs = append(c.descs, prefetchDescs.all()...)
	}
	if src.Segments != nil {
		c.descs = append(c.descs, segmentsOpen)
	}
	return c
}

// absent reports whether v is nil, or an interface holding a nil pointer.
func absent(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// Describe sends the description of every metric Collect sends.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect reads the sources and sends their figures.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if e := c.src.Engine; e != nil {
		engineDescs.collect(ch, e.Stats())
	}
	if cols := c.src.Columns; cols != nil {
		hits, misses := cols.CacheStats()
		made, taken := cols.ReadyStats()
		send(ch, columnDescs.hits, counter, float64(hits))
		send(ch, columnDescs.misses, counter, float64(misses))
		send(ch, columnDescs.readyMade, counter, float64(made))
		send(ch, columnDescs.readyTaken, counter, float64(taken))
	}
	if p := c.src.Prefetcher; p != nil {
		s := p.Stats()
		send(ch, prefetchDescs.predicted, counter, float64(s.Predicted))
		send(ch, prefetchDescs.loaded, counter, float64(s.Loaded))
		send(ch, prefetchDescs.dropped, counter, float64(s.Dropped))
		send(ch, prefetchDescs.failed, counter, float64(s.Failed))
		send(ch, prefetchDescs.players, gauge, float64(s.Players))
	}
	if s := c.src.Segments; s != nil {
		send(ch, segmentsOpen, gauge, float64(s.OpenSegments()))
	}
}

const (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
)

func send(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("blaze_"+name, help, labels, nil)
}

// engineMetrics are the metrics of blazedb.Stats, one or two per field.
type engineMetrics struct {
	keys, generation, logBytes, liveBytes, garbageBytes, damagedKeys *prometheus.Desc
	appends, appendBytes, elided, reads, notFound                    *prometheus.Desc
	cacheHits, cacheMisses, cacheEvictions, cacheBytes, cacheEntries *prometheus.Desc
	fsyncs, fsyncSeconds                                             *prometheus.Desc
	compactions, compactSeconds, compactCopied, checkpoints          *prometheus.Desc
}

var engineDescs = engineMetrics{
	keys:         desc("engine_keys", "Live keys: kind chunk (columns and what belongs to them) or named (dictionary, players, settings).", "kind"),
	generation:   desc("engine_generation", "Generation of chunks.dat: one more at each compaction."),
	logBytes:     desc("engine_log_bytes", "Size of chunks.dat."),
	liveBytes:    desc("engine_live_bytes", "Bytes of chunks.dat in records that hold live values."),
	garbageBytes: desc("engine_garbage_bytes", "Bytes of chunks.dat a compaction would reclaim."),
	damagedKeys:  desc("engine_damaged_keys", "Live keys whose record is damaged and carried by compaction until repaired (blaze repair)."),

	appends:     desc("engine_appends_total", "Records handed to the operating system."),
	appendBytes: desc("engine_append_bytes_total", "Bytes of records handed to the operating system."),
	elided:      desc("engine_elided_writes_total", "Puts of an unchanged value and deletes of missing keys, which appended nothing."),
	reads:       desc("engine_reads_total", "Get, GetNamed and View calls."),
	notFound:    desc("engine_reads_not_found_total", "Reads of missing keys, answered from the index without I/O."),

	cacheHits:      desc("engine_cache_hits_total", "Reads served by the engine's value cache."),
	cacheMisses:    desc("engine_cache_misses_total", "Reads the engine's value cache could not serve."),
	cacheEvictions: desc("engine_cache_evictions_total", "Values evicted from the engine's value cache."),
	cacheBytes:     desc("engine_cache_bytes", "Bytes charged against the engine's cache budget."),
	cacheEntries:   desc("engine_cache_entries", "Values in the engine's cache."),

	fsyncs:       desc("engine_fsyncs_total", "Fsyncs of chunks.dat."),
	fsyncSeconds: desc("engine_fsync_seconds_total", "Time spent in fsyncs of chunks.dat."),

	compactions:    desc("engine_compactions_total", "Compactions completed."),
	compactSeconds: desc("engine_compaction_seconds_total", "Time spent compacting."),
	compactCopied:  desc("engine_compaction_written_bytes_total", "Bytes written by compactions."),
	checkpoints:    desc("engine_checkpoints_total", "Rewrites of index.dat while open."),
}

func (m *engineMetrics) all() []*prometheus.Desc {
	return []*prometheus.Desc{m.keys, m.generation, m.logBytes, m.liveBytes, m.garbageBytes, m.damagedKeys,
		m.appends, m.appendBytes, m.elided, m.reads, m.notFound,
		m.cacheHits, m.cacheMisses, m.cacheEvictions, m.cacheBytes, m.cacheEntries,
		m.fsyncs, m.fsyncSeconds, m.compactions, m.compactSeconds, m.compactCopied, m.checkpoints}
}

func (m *engineMetrics) collect(ch chan<- prometheus.Metric, s blazedb.Stats) {
	send(ch, m.keys, gauge, float64(s.ChunkKeys), "chunk")
	send(ch, m.keys, gauge, float64(s.NamedKeys), "named")
	send(ch, m.generation, gauge, float64(s.Generation))
	send(ch, m.logBytes, gauge, float64(s.LogBytes))
	send(ch, m.liveBytes, gauge, float64(s.LiveBytes))
	send(ch, m.garbageBytes, gauge, float64(s.GarbageBytes))
	send(ch, m.damagedKeys, gauge, float64(s.DamagedKeys))
	send(ch, m.appends, counter, float64(s.Appends))
	send(ch, m.appendBytes, counter, float64(s.AppendBytes))
	send(ch, m.elided, counter, float64(s.Elided))
	send(ch, m.reads, counter, float64(s.Reads))
	send(ch, m.notFound, counter, float64(s.NotFound))
	send(ch, m.cacheHits, counter, float64(s.CacheHits))
	send(ch, m.cacheMisses, counter, float64(s.CacheMisses))
	send(ch, m.cacheEvictions, counter, float64(s.CacheEvictions))
	send(ch, m.cacheBytes, gauge, float64(s.CacheBytes))
	send(ch, m.cacheEntries, gauge, float64(s.CacheEntries))
	send(ch, m.fsyncs, counter, float64(s.Fsyncs))
	send(ch, m.fsyncSeconds, counter, s.FsyncTime.Seconds())
	send(ch, m.compactions, counter, float64(s.Compactions))
	send(ch, m.compactSeconds, counter, s.CompactTime.Seconds())
	send(ch, m.compactCopied, counter, float64(s.CompactCopied))
	send(ch, m.checkpoints, counter, float64(s.Checkpoints))
}

type columnMetrics struct{ hits, misses, readyMade, readyTaken *prometheus.Desc }

var columnDescs = columnMetrics{
	hits:       desc("column_cache_hits_total", "LoadColumn calls served from the provider's column cache."),
	misses:     desc("column_cache_misses_total", "LoadColumn calls that read and decoded the column from the engine."),
	readyMade:  desc("ready_copies_made_total", "Ready copies of columns made by Prefetch for the next LoadColumn."),
	readyTaken: desc("ready_copies_taken_total", "Ready copies handed out by LoadColumn; the rest were wasted."),
}

func (m *columnMetrics) all() []*prometheus.Desc {
	return []*prometheus.Desc{m.hits, m.misses, m.readyMade, m.readyTaken}
}

type prefetchMetrics struct{ predicted, loaded, dropped, failed, players *prometheus.Desc }

var prefetchDescs = prefetchMetrics{
	predicted: desc("prefetch_predicted_total", "Chunks predicted ahead of players and queued."),
	loaded:    desc("prefetch_loaded_total", "Chunks the prefetcher read into the cache."),
	dropped:   desc("prefetch_dropped_total", "Predictions dropped: queue full, stale or already queued."),
	failed:    desc("prefetch_failed_total", "Prefetches whose read failed (the World's own load reports the error)."),
	players:   desc("prefetch_players", "Players the prefetcher follows now."),
}

func (m *prefetchMetrics) all() []*prometheus.Desc {
	return []*prometheus.Desc{m.predicted, m.loaded, m.dropped, m.failed, m.players}
}

var segmentsOpen = desc("segments_open", "Regions of a segmented world open now.")
