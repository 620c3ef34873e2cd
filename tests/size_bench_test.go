package tests

import (
	"io/fs"
	"math"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/df-mc/goleveldb/leveldb/opt"
	"github.com/df-mc/goleveldb/leveldb/util"
)

// Issue 41: how many bytes each provider keeps of the same worlds, after
// each has compacted everything, and how fast those columns load cold.
// BenchmarkSize reports, per world and contender, the storage files' bytes
// and their ratio to mcdb's (disk; both measured in the same run), the cold
// load of every column (load-cold), and then the levers of size_levers_test.go
// measured over the records of Blaze unpacked (lever/...). Blaze by default
// packs at compaction (provider.Packing): blaze-unpacked is Blaze before.
//
//	go test ./tests -run '^$' -bench '^BenchmarkSize$' -benchtime 1x
//
// The storage files are every file of the world but level.dat and
// levelname.txt, which both providers write in Dragonfly's own format.

// sizeWorld is a set of columns with their places.
type sizeWorld struct {
	name string
	cols []worldtest.Column
}

// sizeWorlds are the worlds BenchmarkSize measures: the three real worlds
// of ../shared, the synthetic realistic columns of BenchmarkLoadColumn, a
// 24×24 superflat arena (flatArena) and a 32×32 skyblock-style void map
// with a few islands (voidMap).
func sizeWorlds(b *testing.B) []sizeWorld {
	at := func(cols []*chunk.Column, side int) []worldtest.Column {
		out := make([]worldtest.Column, len(cols))
		for i, c := range cols {
			out[i] = worldtest.Column{Pos: world.ChunkPos{int32(i % side), int32(i / side)}, Dim: world.Overworld, Col: c}
		}
		return out
	}
	// The real worlds side by side: they share positions.
	var real []worldtest.Column
	for i, path := range worldtest.Worlds(b) {
		cols, err := worldtest.ReadAll(worldtest.UnpackTemp(b, path), world.DefaultBlockRegistry)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range cols {
			c.Pos[0] += int32(i) * 1024
			real = append(real, c)
		}
	}
	return []sizeWorld{
		{"real", real},
		{"synthetic", at(realistic(benchColumns), 64)},
		{"flat24", at(flatArena(), 24)},
		{"void32", voidMap()},
	}
}

// voidMap returns a 32×32 skyblock-style map: air everywhere but five
// floating islands of stone, dirt and grass, each with an oak tree, some
// of them across the border of two or four columns. Deterministic.
func voidMap() []worldtest.Column {
	const side = 32
	br := world.DefaultBlockRegistry
	st := worldtest.States(br)
	r := world.Overworld.Range()
	cols := make([]*chunk.Chunk, side*side)
	for i := range cols {
		cols[i] = chunk.New(br, r)
	}
	set := func(x, y, z int, rid uint32) {
		if x < 0 || z < 0 || x >= side*16 || z >= side*16 {
			return
		}
		cols[(z/16)*side+x/16].SetBlock(uint8(x%16), int16(y), uint8(z%16), 0, rid)
	}
	islands := []struct{ x, z, y, radius int }{
		{64, 64, 64, 7}, {200, 88, 70, 5}, {120, 256, 60, 9}, {400, 400, 80, 6}, {300, 176, 66, 4},
	}
	for _, is := range islands {
		// A cone: grass on top, dirt below, then stone narrowing downwards.
		for depth := 0; depth <= is.radius; depth++ {
			rad := is.radius - depth
			rid := st["minecraft:stone"]
			switch {
			case depth == 0:
				rid = st["minecraft:grass_block"]
			case depth < 3:
				rid = st["minecraft:dirt"]
			}
			for dx := -rad; dx <= rad; dx++ {
				for dz := -rad; dz <= rad; dz++ {
					if dx*dx+dz*dz <= rad*rad {
						set(is.x+dx, is.y-depth, is.z+dz, rid)
					}
				}
			}
		}
		for h := 1; h <= 5; h++ {
			set(is.x, is.y+h, is.z, st["minecraft:oak_log"])
		}
		for dx := -2; dx <= 2; dx++ {
			for dz := -2; dz <= 2; dz++ {
				for h := 4; h <= 6; h++ {
					if dx != 0 || dz != 0 || h == 6 {
						set(is.x+dx, is.y+h, is.z+dz, st["minecraft:oak_leaves"])
					}
				}
			}
		}
	}
	out := make([]worldtest.Column, len(cols))
	for i, c := range cols {
		out[i] = worldtest.Column{Pos: world.ChunkPos{int32(i % side), int32(i / side)}, Dim: world.Overworld, Col: &chunk.Column{Chunk: c}}
	}
	return out
}

// storageSize is the bytes of every regular file under dir but level.dat
// and levelname.txt at its top.
func storageSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if rel, _ := filepath.Rel(dir, path); rel == "level.dat" || rel == "levelname.txt" {
			return nil
		}
		if st, err := d.Info(); err == nil {
			n += st.Size()
		}
		return nil
	})
	return n
}

// storeCompacted stores cols with c into a new world in dir, compacts all
// of it (Blaze's Compact; for mcdb a full LevelDB compaction with the
// options mcdb opens it with), closes it and returns its storage bytes.
func storeCompacted(b *testing.B, c contender, dir string, cols []worldtest.Column) int64 {
	p := c.open(b, dir)
	for _, col := range cols {
		if err := p.StoreColumn(col.Pos, col.Dim, col.Col); err != nil {
			b.Fatal(err)
		}
	}
	if db, ok := p.(*provider.DB); ok {
		// The store queue (issue 42) writes stores after StoreColumn
		// returns: written first, or they land after the compaction.
		if err := db.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := db.Engine().Compact(); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		b.Fatal(err)
	}
	if c.name == "mcdb" {
		compactLevelDB(b, filepath.Join(dir, "db"))
	}
	return storageSize(dir)
}

// compactLevelDB compacts every level of the LevelDB database in dir, as
// mcdb opens it (mcdb.Config.Open: 16 KiB blocks, the default compression),
// then opens it once more: goleveldb deletes the tables a compaction made
// obsolete in the background, and a Close can leave some of them, which
// the next open deletes (checkAndCleanFiles): without that second open
// the 3.3 MB of one world measured 4.1 to 6.4 MB.
func compactLevelDB(b *testing.B, dir string) {
	o := &opt.Options{BlockSize: 16 * opt.KiB}
	ldb, err := leveldb.OpenFile(dir, o)
	if err != nil {
		b.Fatal(err)
	}
	if err := ldb.CompactRange(util.Range{}); err != nil {
		b.Fatal(err)
	}
	if err := ldb.Close(); err != nil {
		b.Fatal(err)
	}
	if ldb, err = leveldb.OpenFile(dir, o); err != nil {
		b.Fatal(err)
	}
	if err := ldb.Close(); err != nil {
		b.Fatal(err)
	}
}

// unpackedContender is Blaze with compaction's packing off: the records as
// stores write them, Blaze before issue 41's packing, which the levers
// read.
var unpackedContender = contender{"blaze-unpacked", func(b *testing.B, dir string) store {
	db, err := provider.Config{Log: quiet, Packing: provider.PackingOff}.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return db
}}

// archiveContender is Blaze whose compaction packs in zstd's best
// (provider.PackingArchive), for worlds kept rather than played.
var archiveContender = contender{"blaze-archive", func(b *testing.B, dir string) store {
	db, err := provider.Config{Log: quiet, Packing: provider.PackingArchive}.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return db
}}

// sizeContenders are the providers BenchmarkSize measures: Blaze by
// default (compaction packs cold columns, issue 41), unpacked (Blaze
// before), archived, with zstd (packed in zstd's best too), and mcdb.
var sizeContenders = []contender{contenders[0], unpackedContender, archiveContender, zstdContender, contenders[2]}

// BenchmarkSize is issue 41's size table: see the top of this file.
func BenchmarkSize(b *testing.B) {
	for _, w := range sizeWorlds(b) {
		sizes := map[string]int64{}
		dirs := map[string]string{}
		for _, c := range sizeContenders {
			dirs[c.name] = filepath.Join(b.TempDir(), c.name)
			sizes[c.name] = storeCompacted(b, c, dirs[c.name], w.cols)
		}
		cold := map[string]float64{}
		for _, c := range sizeContenders {
			b.Run(w.name+"/"+c.name+"/disk", func(b *testing.B) {
				for b.Loop() {
				}
				b.ReportMetric(0, "ns/op") // only the size means anything
				b.ReportMetric(float64(sizes[c.name]), "storage-bytes")
				b.ReportMetric(float64(sizes[c.name])/float64(sizes["mcdb"]), "ratio-mcdb")
			})
			b.Run(w.name+"/"+c.name+"/load-cold", func(b *testing.B) {
				cold[c.name] = loadAllCold(b, c, dirs[c.name], w.cols)
			})
		}
		b.Run(w.name+"/lever", func(b *testing.B) {
			benchLevers(b, w, dirs["blaze-unpacked"], sizes, cold["blaze-unpacked"])
		})
	}
}

// loadAllCold loads every column of cols from the world c stored in dir,
// right after opening it, and returns (and reports) the time per column,
// and (cpu-ns/column, Linux) the CPU time the loading thread spent per
// column, which other jobs on the machine disturb far less.
func loadAllCold(b *testing.B, c contender, dir string, cols []worldtest.Column) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var loads int
	var spent, cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		p := c.open(b, dir)
		b.StartTimer()
		start, cpuStart := time.Now(), threadCPU()
		for _, col := range cols {
			if _, err := p.LoadColumn(col.Pos, col.Dim); err != nil {
				b.Fatal(err)
			}
		}
		spent += time.Since(start)
		cpu += threadCPU() - cpuStart
		loads += len(cols)
		b.StopTimer()
		p.Close()
		b.StartTimer()
	}
	ns := float64(spent.Nanoseconds()) / math.Max(1, float64(loads))
	b.ReportMetric(ns, "ns/column")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/math.Max(1, float64(loads)), "cpu-ns/column")
	}
	return ns
}
