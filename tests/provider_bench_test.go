package tests

import (
	"io"
	"log/slog"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/dragonfly/server/world/mcdb"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// store is what both providers offer the benchmarks.
type store interface {
	world.Provider
}

type contender struct {
	name string
	open func(b *testing.B, dir string) store
}

var contenders = []contender{
	{"blaze-balanced", func(b *testing.B, dir string) store { return openBlaze(b, dir, blazedb.DurabilityBalanced) }},
	{"blaze-fast", func(b *testing.B, dir string) store { return openBlaze(b, dir, blazedb.DurabilityFast) }},
	{"mcdb", openMcdb},
}

func openBlaze(b testing.TB, dir string, d blazedb.Durability) store {
	db, err := provider.Config{Log: quiet, Durability: d}.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return db
}

func openMcdb(b *testing.B, dir string) store {
	db, err := mcdb.Config{Log: quiet}.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// realistic returns n synthetic realistic overworld columns.
func realistic(n int) []*chunk.Column {
	cols := make([]*chunk.Column, n)
	for i := range cols {
		cols[i] = worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
	}
	return cols
}

func pos(i int) world.ChunkPos { return world.ChunkPos{int32(i % 64), int32(i / 64)} }

const benchColumns = 256

func BenchmarkStoreColumn(b *testing.B) {
	cols := realistic(benchColumns)
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	for _, c := range contenders {
		b.Run(c.name+"/new", func(b *testing.B) {
			p := c.open(b, b.TempDir())
			defer p.Close()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := p.StoreColumn(world.ChunkPos{int32(i), 7}, world.Overworld, cols[i%len(cols)]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/changed", func(b *testing.B) {
			p := c.open(b, b.TempDir())
			defer p.Close()
			for i, col := range cols {
				p.StoreColumn(pos(i), world.Overworld, col)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				col := cols[i%len(cols)]
				col.Chunk.SetBlock(uint8(i%16), int16(i%300-60), uint8(i/16%16), 0, obsidian) // one block changed
				if err := p.StoreColumn(pos(i%len(cols)), world.Overworld, col); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/unchanged", func(b *testing.B) {
			p := c.open(b, b.TempDir())
			defer p.Close()
			for i, col := range cols {
				p.StoreColumn(pos(i), world.Overworld, col)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := p.StoreColumn(pos(i%len(cols)), world.Overworld, cols[i%len(cols)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLoadColumn(b *testing.B) {
	cols := realistic(benchColumns)
	for _, c := range contenders {
		dir := b.TempDir()
		p := c.open(b, dir)
		for i, col := range cols {
			if err := p.StoreColumn(pos(i), world.Overworld, col); err != nil {
				b.Fatal(err)
			}
		}
		p.Close()
		b.Run(c.name+"/hot", func(b *testing.B) {
			p := c.open(b, dir)
			defer p.Close()
			for i := range cols {
				p.LoadColumn(pos(i), world.Overworld)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := p.LoadColumn(pos(i%len(cols)), world.Overworld); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/cold", func(b *testing.B) {
			// Every load is the first of its column since the world was
			// opened; the world is reopened (untimed) when all were loaded.
			p := c.open(b, dir)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%len(cols) == 0 && i > 0 {
					b.StopTimer()
					p.Close()
					p = c.open(b, dir)
					b.StartTimer()
				}
				if _, err := p.LoadColumn(pos(i%len(cols)), world.Overworld); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			p.Close()
		})
		b.Run(c.name+"/missing", func(b *testing.B) {
			p := c.open(b, dir)
			defer p.Close()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				p.LoadColumn(world.ChunkPos{int32(i), 1000}, world.Overworld)
			}
		})
	}
}

// BenchmarkCodecFloor measures the work no provider can avoid on the same
// columns: Dragonfly's own encoders and decoders and Chunk.Clone. Each
// provider figure reads as a multiple of these.
func BenchmarkCodecFloor(b *testing.B) {
	cols := realistic(benchColumns) // the same columns as the provider benchmarks
	br := world.DefaultBlockRegistry
	r := world.Overworld.Range()
	net := make([][]byte, len(cols))
	disk := make([]chunk.SerialisedData, len(cols))
	for i, c := range cols {
		d := chunk.Encode(c.Chunk, chunk.NetworkEncoding)
		for _, s := range d.SubChunks {
			net[i] = append(net[i], s...)
		}
		net[i] = append(net[i], d.Biomes...)
		disk[i] = chunk.Encode(c.Chunk, chunk.DiskEncoding)
	}
	b.Run("Chunk.Clone", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			cols[i%len(cols)].Chunk.Clone()
		}
	})
	b.Run("NetworkEncode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			chunk.Encode(cols[i%len(cols)].Chunk, chunk.NetworkEncoding)
		}
	})
	b.Run("NetworkDecode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := chunk.NetworkDecode(br, net[i%len(cols)], len(cols[0].Chunk.Sub()), r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DiskEncode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			chunk.Encode(cols[i%len(cols)].Chunk, chunk.DiskEncoding)
		}
	})
	b.Run("DiskDecode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := chunk.DiskDecode(br, disk[i%len(cols)], r); err != nil {
				b.Fatal(err)
			}
		}
	})
	sizes := 0
	for _, n := range net {
		sizes += len(n)
	}
	b.Run("info", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(float64(sizes)/float64(len(net)), "network-bytes/column")
	})
}

// realWorld returns the columns of the real worlds in ../shared.
func realWorld(b *testing.B) []worldtest.Column {
	var all []worldtest.Column
	for _, path := range worldtest.Worlds(b) {
		cols, err := worldtest.ReadAll(worldtest.UnpackTemp(b, path), world.DefaultBlockRegistry)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, cols...)
	}
	return all
}

// BenchmarkRealWorld stores and loads the 183 columns of the three real
// worlds with each provider.
func BenchmarkRealWorld(b *testing.B) {
	cols := realWorld(b)
	for _, c := range contenders {
		b.Run(c.name+"/store", func(b *testing.B) {
			p := c.open(b, b.TempDir())
			defer p.Close()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				col := cols[i%len(cols)]
				// A new position every time: a store that must write.
				if err := p.StoreColumn(world.ChunkPos{col.Pos[0] + int32(i/len(cols))*64, col.Pos[1]}, col.Dim, col.Col); err != nil {
					b.Fatal(err)
				}
			}
		})
		dir := b.TempDir()
		p := c.open(b, dir)
		for _, col := range cols {
			p.StoreColumn(col.Pos, col.Dim, col.Col)
		}
		p.Close()
		b.Run(c.name+"/load-cold", func(b *testing.B) {
			p := c.open(b, dir)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%len(cols) == 0 && i > 0 {
					b.StopTimer()
					p.Close()
					p = c.open(b, dir)
					b.StartTimer()
				}
				col := cols[i%len(cols)]
				if _, err := p.LoadColumn(col.Pos, col.Dim); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			p.Close()
		})
	}
}
