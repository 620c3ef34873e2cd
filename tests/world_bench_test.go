package tests

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// The tiled world: the real columns of ../shared repeated over a grid of
// tiledSide x tiledSide chunks, stored once per provider under
// build/benchdata (never committed) and reused by later runs.
const tiledSide = 100

var tiledOnce sync.Map

// tiled returns the directory of the tiled world stored by contender c.
func tiled(b *testing.B, c contender) string { return tiledN(b, c, tiledSide) }

// tiledFormat is written into each cached world's "complete" marker; a
// cache with another marker is rebuilt. Change it whenever a provider's
// on-disk format changes, or benchmarks would measure the old format.
const tiledFormat = "blaze column record v2"

// tiledN is tiled with side x side columns.
func tiledN(b *testing.B, c contender, side int) string {
	root, _ := os.Getwd()
	dir := filepath.Join(root, "..", "build", "benchdata", fmt.Sprintf("tiled-%d-%s", side*side, c.name))
	if mark, err := os.ReadFile(filepath.Join(dir, "complete")); err == nil && string(mark) == tiledFormat {
		return dir
	}
	if _, loaded := tiledOnce.LoadOrStore(dir, true); loaded {
		return dir
	}
	os.RemoveAll(dir)
	cols := realWorld(b)
	p := c.open(b, dir)
	for x := 0; x < side; x++ {
		for z := 0; z < side; z++ {
			col := cols[(x*side+z)%len(cols)]
			if col.Dim != world.Overworld {
				continue
			}
			if err := p.StoreColumn(world.ChunkPos{int32(x), int32(z)}, world.Overworld, col.Col); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := p.Close(); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "complete"), []byte(tiledFormat), 0o644)
	return dir
}

// coldContenders are the providers compared on reopened worlds: Blaze in
// its default mode and mcdb.
var coldContenders = []contender{contenders[0], zstdContender, contenders[2]}

// BenchmarkArea11x11 loads the 121 columns around a random point of the
// tiled world right after opening it: what a player joining sees.
func BenchmarkArea11x11(b *testing.B) {
	for _, c := range coldContenders {
		dir := tiled(b, c)
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			for b.Loop() {
				b.StopTimer()
				p := c.open(b, dir)
				cx, cz := int32(5+rng.IntN(tiledSide-10)), int32(5+rng.IntN(tiledSide-10))
				b.StartTimer()
				for dx := int32(-5); dx <= 5; dx++ {
					for dz := int32(-5); dz <= 5; dz++ {
						if _, err := p.LoadColumn(world.ChunkPos{cx + dx, cz + dz}, world.Overworld); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.StopTimer()
				p.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkWalk2000 is a player's walk: 2,000 column loads along a snaking
// path through the tiled world, each column loaded once, after opening it.
func BenchmarkWalk2000(b *testing.B) {
	var path []world.ChunkPos
	for x := 0; len(path) < 2000; x++ {
		for i := 0; i < tiledSide && len(path) < 2000; i++ {
			z := i
			if x%2 == 1 {
				z = tiledSide - 1 - i
			}
			path = append(path, world.ChunkPos{int32(x), int32(z)})
		}
	}
	for _, c := range coldContenders {
		dir := tiled(b, c)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				p := c.open(b, dir)
				b.StartTimer()
				for _, pos := range path {
					if _, err := p.LoadColumn(pos, world.Overworld); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				p.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkOpen10k opens and closes the tiled world of 10,000 columns,
// reporting the heap it holds once open.
func BenchmarkOpen10k(b *testing.B) { benchOpen(b, tiledSide) }

// BenchmarkOpen100k is BenchmarkOpen10k with 99,856 columns (316 x 316):
// how opening grows with the world. Building the worlds takes minutes the
// first time.
func BenchmarkOpen100k(b *testing.B) { benchOpen(b, 316) }

func benchOpen(b *testing.B, side int) {
	for _, c := range coldContenders {
		dir := tiledN(b, c, side)
		b.Run(c.name, func(b *testing.B) {
			var held float64
			for b.Loop() {
				// The collections measure the heap; they are not timed.
				var before, after runtime.MemStats
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&before)
				b.StartTimer()
				p := c.open(b, dir)
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				held = float64(after.HeapAlloc) - float64(before.HeapAlloc)
				b.StartTimer()
				p.Close()
			}
			b.ReportMetric(held/(1<<20), "heap-MiB")
		})
	}
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if st, err := d.Info(); err == nil {
				n += st.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkDiskSize reports the bytes each provider uses for the tiled
// world, and for Blaze after every column was stored a second time
// (changed) and after compaction.
func BenchmarkDiskSize(b *testing.B) {
	for _, c := range coldContenders {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
			}
			b.ReportMetric(0, "ns/op") // only the size means anything
			b.ReportMetric(float64(dirSize(tiled(b, c)))/(1<<20), "disk-MiB")
		})
	}
	b.Run("blaze-balanced/rewritten-then-compacted", func(b *testing.B) {
		src := tiled(b, contenders[0])
		dir := b.TempDir()
		copyDir(b, src, dir)
		p, err := provider.Config{Log: quiet}.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		for x := int32(0); x < tiledSide; x++ {
			for z := int32(0); z < tiledSide; z++ {
				col, err := p.LoadColumn(world.ChunkPos{x, z}, world.Overworld)
				if err != nil {
					continue
				}
				worldtest.ChangeOneBlock(col, 0)
				p.StoreColumn(world.ChunkPos{x, z}, world.Overworld, col)
			}
		}
		p.Sync() // the provider's: it writes the queued stores too
		rewritten := dirSize(dir)
		for b.Loop() {
		}
		if err := p.Engine().Compact(); err != nil {
			b.Fatal(err)
		}
		compacted := dirSize(dir)
		p.Close()
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(rewritten)/(1<<20), "rewritten-MiB")
		b.ReportMetric(float64(compacted)/(1<<20), "compacted-MiB")
	})
}

func copyDir(b *testing.B, from, to string) {
	skip := func(name string) bool { return name == "LOCK" || name == "complete" }
	if err := fsutil.CopyTree(from, to, skip); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLoadDuringCompaction measures cold loads (engine and column
// caches off) while compactions of the whole tiled world run back to back,
// against the same loads with the engine idle. It reports p50 and p99.
func BenchmarkLoadDuringCompaction(b *testing.B) {
	src := tiled(b, contenders[0])
	for _, busy := range []bool{false, true} {
		name := "idle"
		if busy {
			name = "compacting"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			copyDir(b, src, dir)
			p, err := provider.Config{Log: quiet, CacheBytes: -1, ColumnCacheBytes: -1, Durability: blazedb.DurabilityBalanced}.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			stop := make(chan struct{})
			var wg sync.WaitGroup
			compactions := 0
			if busy {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						if p.Engine().Compact() == nil {
							compactions++
						}
					}
				}()
			}
			var lat []time.Duration
			rng := rand.New(rand.NewPCG(3, 4))
			for b.Loop() {
				pos := world.ChunkPos{int32(rng.IntN(tiledSide)), int32(rng.IntN(tiledSide))}
				t0 := time.Now()
				if _, err := p.LoadColumn(pos, world.Overworld); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			close(stop)
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			if busy && compactions == 0 {
				b.Log("no compaction completed during the run")
			}
		})
	}
}

// rssKiB reads a field (VmRSS, VmHWM) of /proc/self/status, in KiB.
func rssKiB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field+":") {
			var v float64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, field+":")), "%f", &v)
			return v
		}
	}
	return 0
}

// BenchmarkLoadAll10k opens the tiled world and loads every column once,
// as a server walking the whole map would, reporting how far the process's
// peak RSS rose above its RSS before opening (the peak is reset through
// /proc/self/clear_refs; Linux only). Only a first pass in a fresh process
// says anything about memory (later passes reuse what the Go runtime kept),
// so the metric is the first pass's: run one contender per process, e.g.
// -bench 'LoadAll10k/mcdb$' -benchtime 1x.
func BenchmarkLoadAll10k(b *testing.B) {
	for _, c := range coldContenders {
		dir := tiled(b, c)
		b.Run(c.name, func(b *testing.B) {
			peak := -1.0
			for b.Loop() {
				b.StopTimer()
				// Memory the runtime kept from earlier benchmarks would
				// hide the growth: return it to the OS first.
				debug.FreeOSMemory()
				os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
				before := rssKiB("VmRSS")
				b.StartTimer()
				p := c.open(b, dir)
				for x := int32(0); x < tiledSide; x++ {
					for z := int32(0); z < tiledSide; z++ {
						if _, err := p.LoadColumn(world.ChunkPos{x, z}, world.Overworld); err != nil {
							b.Fatal(err)
						}
					}
				}
				p.Close()
				b.StopTimer()
				if peak < 0 {
					peak = rssKiB("VmHWM") - before
				}
				b.StartTimer()
			}
			b.ReportMetric(peak/1024, "peakRSS-MiB")
		})
	}
}

// BenchmarkBackup10k backs up the open tiled world of 10,000 columns
// (provider.DB.Backup: a durable copy of its files). mcdb has no online
// backup, so there is no contender to compare with, and benchtable, which
// pairs contenders, leaves it out.
func BenchmarkBackup10k(b *testing.B) {
	dir := tiled(b, contenders[0])
	p := openBlaze(b, dir, blazedb.DurabilityBalanced).(*provider.DB)
	defer p.Close()
	b.SetBytes(dirSize(dir))
	out := b.TempDir()
	for b.Loop() {
		bdir := filepath.Join(out, "backup")
		if err := p.Backup(bdir); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(bdir)
		b.StartTimer()
	}
}
