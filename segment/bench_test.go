package segment

import (
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// BenchmarkSegmentVsPlain: the same stores and loads through segments (64
// columns over 8 regions) and through one plain provider.
func BenchmarkSegmentVsPlain(b *testing.B) {
	cols := make([]*chunk.Column, 64)
	for i := range cols {
		cols[i] = worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
	}
	pos := func(i int) world.ChunkPos { return world.ChunkPos{int32(i%8) * 32, int32(i / 8)} }
	open := map[string]func(b *testing.B, dir string) world.Provider{
		"plain": func(b *testing.B, dir string) world.Provider {
			p, err := provider.Config{Log: quiet}.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			return p
		},
		"segment": func(b *testing.B, dir string) world.Provider {
			p, err := Config{Log: quiet}.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			return p
		},
	}
	for _, name := range []string{"plain", "segment"} {
		b.Run(name+"/store-changed", func(b *testing.B) {
			p := open[name](b, b.TempDir())
			defer p.Close()
			for i, c := range cols {
				p.StoreColumn(pos(i), world.Overworld, c)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				c := cols[i%len(cols)]
				worldtest.ChangeOneBlock(c, i)
				if err := p.StoreColumn(pos(i%len(cols)), world.Overworld, c); err != nil {
					b.Fatal(err)
				}
			}
		})
		dir := b.TempDir()
		p := open[name](b, dir)
		for i, c := range cols {
			p.StoreColumn(pos(i), world.Overworld, c)
		}
		b.Run(name+"/load-hot", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := p.LoadColumn(pos(i%len(cols)), world.Overworld); err != nil {
					b.Fatal(err)
				}
			}
		})
		p.Close()
		b.Run(name+"/load-cold", func(b *testing.B) {
			p := open[name](b, dir)
			for i := 0; b.Loop(); i++ {
				if i%len(cols) == 0 && i > 0 {
					b.StopTimer()
					p.Close()
					p = open[name](b, dir)
					b.StartTimer()
				}
				if _, err := p.LoadColumn(pos(i%len(cols)), world.Overworld); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			p.Close()
		})
	}
}
