package blazedb

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
)

// chunkLike returns a payload shaped like an encoded chunk column: runs of
// repeated palette indices with some noise, about 3:1 compressible.
func chunkLike(i, size int) []byte { return value(i, size) }

const benchValue = 12 << 10

func benchDB(b *testing.B, o Options) *DB {
	b.Helper()
	o.Logger = quiet
	db, err := Open(b.TempDir(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

func BenchmarkPut(b *testing.B) {
	vals := make([][]byte, 64)
	for i := range vals {
		vals[i] = chunkLike(i, benchValue)
	}
	for _, mode := range []Durability{DurabilityFast, DurabilityBalanced, DurabilitySafe} {
		b.Run(mode.String(), func(b *testing.B) {
			db := benchDB(b, Options{Durability: mode, DisableAutoCompaction: true})
			b.SetBytes(benchValue)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := db.Put(Key{X: int32(i), Z: int32(i >> 8)}, vals[i%len(vals)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPutCodec(b *testing.B) {
	v := chunkLike(1, benchValue)
	for _, c := range []Compression{CompressionNone, CompressionLZ4, CompressionSnappy, CompressionZstd} {
		b.Run(fmt.Sprint(c.codec()), func(b *testing.B) {
			db := benchDB(b, Options{Durability: DurabilityFast, Compression: c, DisableAutoCompaction: true})
			b.SetBytes(benchValue)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				v[0] = byte(i) // defeat elision
				if err := db.Put(Key{X: int32(i)}, v); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(db.Stats().LogBytes)/float64(b.N), "disk-B/op")
		})
	}
}

// BenchmarkPutSafeConcurrent: 8 writers, Safe (one fsync each) against
// SafeBatch (group commit).
func BenchmarkPutSafeConcurrent(b *testing.B) {
	v := chunkLike(1, 4096)
	for _, mode := range []Durability{DurabilitySafe, DurabilitySafeBatch} {
		b.Run(mode.String(), func(b *testing.B) {
			db := benchDB(b, Options{Durability: mode, DisableAutoCompaction: true})
			var n atomic.Int64
			b.SetParallelism(4) // 8 goroutines on 2 cores
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				val := append([]byte(nil), v...)
				for pb.Next() {
					i := n.Add(1)
					val[0] = byte(i)
					if err := db.Put(Key{X: int32(i)}, val); err != nil {
						b.Error(err)
						return
					}
				}
			})
			st := db.Stats()
			b.ReportMetric(float64(st.Appends)/float64(max(st.Fsyncs, 1)), "writes/fsync")
		})
	}
}

func BenchmarkPutUnchanged(b *testing.B) {
	db := benchDB(b, Options{})
	v := chunkLike(1, benchValue)
	db.Put(Key{}, v)
	b.SetBytes(benchValue)
	b.ReportAllocs()
	for b.Loop() {
		if err := db.Put(Key{}, v); err != nil {
			b.Fatal(err)
		}
	}
	if db.Stats().Appends != 1 {
		b.Fatal("unchanged puts appended")
	}
}

func BenchmarkApplyBatch16(b *testing.B) {
	db := benchDB(b, Options{Durability: DurabilityFast, DisableAutoCompaction: true})
	vals := make([][]byte, 16)
	for i := range vals {
		vals[i] = chunkLike(i, benchValue)
	}
	b.SetBytes(16 * benchValue)
	b.ReportAllocs()
	var batch Batch
	for i := 0; b.Loop(); i++ {
		batch.Reset()
		for j, v := range vals {
			v[0] = byte(i)
			batch.Put(Key{X: int32(i), Z: int32(j)}, v)
		}
		if err := db.Apply(&batch); err != nil {
			b.Fatal(err)
		}
	}
}

func fill(b *testing.B, db *DB, n int) []Key {
	keys := make([]Key, n)
	for i := range keys {
		keys[i] = Key{X: int32(i % 100), Z: int32(i / 100)}
		if err := db.Put(keys[i], chunkLike(i, benchValue)); err != nil {
			b.Fatal(err)
		}
	}
	return keys
}

func BenchmarkGet(b *testing.B) {
	// cold-raw reads values stored raw into a buffer it reuses, as the
	// provider reads its records (which compress their own parts).
	for _, c := range []struct {
		name  string
		cache int64
		comp  Compression
	}{{"hot", 0, 0}, {"cold", -1, 0}, {"cold-raw", -1, CompressionNone}} {
		b.Run(c.name, func(b *testing.B) {
			db := benchDB(b, Options{CacheBytes: c.cache, Compression: c.comp})
			keys := fill(b, db, 2000)
			b.SetBytes(benchValue)
			b.ReportAllocs()
			var buf []byte
			for i := 0; b.Loop(); i++ {
				var err error
				if c.comp == CompressionNone {
					buf, err = db.GetAppend(keys[i%len(keys)], buf[:0])
				} else {
					_, err = db.Get(keys[i%len(keys)])
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("missing", func(b *testing.B) {
		db := benchDB(b, Options{})
		fill(b, db, 100)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			db.Get(Key{X: int32(i), Z: 1 << 20})
		}
	})
}

// BenchmarkCompact reports compaction throughput over the live bytes.
func BenchmarkCompact(b *testing.B) {
	db := benchDB(b, Options{Durability: DurabilityFast, DisableAutoCompaction: true})
	fill(b, db, 2000)
	fill(b, db, 2000) // half the log is garbage
	b.SetBytes(db.Stats().LiveBytes)
	for b.Loop() {
		if err := db.Compact(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen: reopening 20,000 keys with index.dat and by scanning.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	db, err := Open(dir, Options{Logger: quiet, Durability: DurabilityFast, CompactMinBytes: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	v := chunkLike(1, 2048)
	for i := 0; i < 20000; i++ {
		v[0] = byte(i)
		db.Put(Key{X: int32(i % 150), Z: int32(i / 150)}, v)
	}
	db.Close()
	for _, useIndex := range []bool{true, false} {
		b.Run(fmt.Sprintf("index=%v", useIndex), func(b *testing.B) {
			for b.Loop() {
				if !useIndex {
					os.Remove(dir + "/" + indexName)
				}
				db, err := Open(dir, Options{Logger: quiet, ReadOnly: !useIndex})
				if err != nil {
					b.Fatal(err)
				}
				if db.Recovery().IndexLoaded != useIndex {
					b.Fatal("unexpected index use")
				}
				db.Close()
			}
		})
	}
}

// BenchmarkIndexMemory reports the heap the index holds per chunk key.
func BenchmarkIndexMemory(b *testing.B) {
	const n = 1_000_000
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ix := newIndex()
		for i := 0; i < n; i++ {
			ix.put(rkey{chunk: Key{Dim: int32(i % 3), X: int32(i % 1000), Z: int32(i / 1000)}}, entry{off: int64(i) * 8000, size: 8000})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/key")
		runtime.KeepAlive(ix)
	}
}
