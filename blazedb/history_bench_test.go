package blazedb

import (
	"runtime"
	"testing"
	"time"
)

// Issue 36: what history costs. A busy world: busyColumns columns change
// every save; Dragonfly saves a changed column every 10 minutes
// (world.Config.SaveInterval), so an hour is savesPerHour rounds of stores
// of every changed column, each a new version that the history keeps.
const (
	busyColumns  = 1000
	savesPerHour = 6
)

// busyHour writes an hour of saves of the changed columns, values shaped
// like encoded columns (12 KiB, about 3:1), each round changing a few
// bytes of every column, as placed and broken blocks do.
func busyHour(b *testing.B, db *DB, hour int) {
	b.Helper()
	for round := range savesPerHour {
		for i := range busyColumns {
			v := chunkLike(i, benchValue)
			v[(hour*savesPerHour+round)%len(v)] ^= 0x5a
			v[len(v)/2] = byte(hour*savesPerHour + round)
			if err := db.Put(Key{X: int32(i % 40), Z: int32(i / 40)}, v); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkHistoryCost reports the bytes the history keeps per changed
// column per hour on that world (disk-B/col/h: log bytes after a compaction
// with history, less those after one without, per column, per hour), and
// how long each compaction takes (ns/op is the compaction with history on).
func BenchmarkHistoryCost(b *testing.B) {
	const hours = 2
	for _, h := range []time.Duration{-1, DefaultHistory} {
		name := "history=off"
		if h > 0 {
			name = "history=" + h.String()
		}
		b.Run(name, func(b *testing.B) {
			db := benchDB(b, Options{Durability: DurabilityFast, DisableAutoCompaction: true, History: h})
			for hour := range hours {
				busyHour(b, db, hour)
			}
			for b.Loop() {
				if err := db.Compact(); err != nil {
					b.Fatal(err)
				}
			}
			st := db.Stats()
			b.ReportMetric(float64(st.LogBytes), "log-B")
			b.ReportMetric(float64(st.HistoryBytes)/busyColumns/hours, "history-B/col/h")
			b.ReportMetric(float64(st.LiveBytes)/busyColumns, "live-B/col")
		})
	}
}

// BenchmarkHistoryMemory reports the heap the history index holds per
// version it knows (chunk keys with six versions each).
func BenchmarkHistoryMemory(b *testing.B) {
	const keys, versions = 100_000, 6
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ix := newIndex()
		ix.hist = newHistory()
		seq := uint64(0)
		for range versions {
			for i := range keys {
				k := rkey{chunk: Key{X: int32(i % 1000), Z: int32(i / 1000)}}
				ix.putAt(k, entry{off: int64(seq) * 8000, size: 8000}, seq)
				seq++
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		n := ix.hist.count
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "B/version")
		b.ReportMetric(float64(n), "versions")
		runtime.KeepAlive(ix)
	}
}

// BenchmarkGetAt reads a column as it was half an hour back, from the
// file (no cache): what a View pays per column over a present cold read.
func BenchmarkGetAt(b *testing.B) {
	db := benchDB(b, Options{CacheBytes: -1, DisableAutoCompaction: true})
	busyHour(b, db, 0)
	mid := uint64(busyColumns * savesPerHour / 2)
	b.SetBytes(benchValue)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := Key{X: int32(i % 40), Z: int32(i % busyColumns / 40)}
		if _, err := db.GetAt(k, mid); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHistoryTrim is the time writers wait while the history of an
// hour of that world is trimmed (once a minute at most, when the floor
// has moved): here to the half hour.
func BenchmarkHistoryTrim(b *testing.B) {
	db := benchDB(b, Options{Durability: DurabilityFast, DisableAutoCompaction: true})
	busyHour(b, db, 0)
	h := db.idx.hist
	b.ReportMetric(float64(h.count), "versions")
	for b.Loop() {
		h.trimmed(h.next / 2)
	}
}

// BenchmarkHistoryClone is what a history of 100,000 changed keys adds to
// the instant writers wait while compaction, a checkpoint or a backup
// clones the index.
func BenchmarkHistoryClone(b *testing.B) {
	h := newHistory()
	for i := range 100_000 {
		k := rkey{chunk: Key{X: int32(i % 1000), Z: int32(i / 1000)}}
		h.note(k, entry{}, false, version{seq: uint64(i), off: int64(i) * 100, size: 100})
	}
	b.ReportAllocs()
	for b.Loop() {
		h.clone()
	}
}
