// Package metrics exports Blaze's figures in Prometheus' text format,
// through github.com/prometheus/client_golang.
//
// A Collector holds the objects whose counters it reports (Sources) and
// reads them only when it is scraped: it starts no goroutine, polls
// nothing and keeps no copy of any figure, so an idle server pays nothing
// and a scrape sees the values of that moment. Every figure comes from a
// stats call that is cheap enough to make every tick (blazedb.DB.Stats,
// provider.DB.CacheStats and ReadyStats, prefetch.Prefetcher.Stats,
// segment.Provider.OpenSegments).
//
// The names, all under the blaze_ namespace:
//
//	blaze_engine_*          blazedb.Stats of one database (keys, bytes,
//	                        appends, reads, cache, fsyncs, compactions)
//	blaze_column_cache_*    the provider's column cache: hot and cold loads
//	blaze_ready_copies_*    ready copies Prefetch made and LoadColumn took
//	blaze_prefetch_*        prefetch.Stats
//	blaze_segments_open     regions of a segmented world open now
//
// Counters restart from zero when the object they come from is opened
// again, as Prometheus counters may. A Collector has no labels of its own:
// register one per world with prometheus.WrapRegistererWith to tell them
// apart.
//
// Collector is safe for concurrent use: Prometheus may scrape it from
// several goroutines at once, beside the server's own calls.
package metrics
