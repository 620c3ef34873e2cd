package prefetch

import (
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/world"
)

// Every Blaze provider is a Source.
var (
	_ Source = (*provider.DB)(nil)
	_ Source = (*segment.Provider)(nil)
	_ Source = (*overlay.Provider)(nil)
)

// source is a world the prefetcher can serve.
type source interface {
	world.Provider
	Source
}

// storeStrip stores the columns x in [0, n), z in [-3, 3] into p, as
// strip does.
func storeStrip(t *testing.T, p world.Provider, n int) {
	t.Helper()
	for x := 0; x < n; x++ {
		for z := -3; z <= 3; z++ {
			if err := p.StoreColumn(world.ChunkPos{int32(x), int32(z)}, world.Overworld,
				worldtest.Synthetic(uint64(x*7+z+3), world.Overworld, world.DefaultBlockRegistry)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A segmented world and an arena are warmed ahead of a walking player as
// a plain world is, and an area pins through them: the World's loads of
// the chunks ahead take ready copies.
func TestServesEveryBlazeProvider(t *testing.T) {
	// Each opens a world of the strip, with nothing cached, and returns a
	// check of what the prefetcher did in it after the loads.
	opens := map[string]func(t *testing.T) (source, func(t *testing.T)){
		"segmented": func(t *testing.T) (source, func(t *testing.T)) {
			dir, conf := t.TempDir(), segment.Config{SegmentSize: 2, Log: quiet}
			p, err := conf.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			storeStrip(t, p, 6)
			p.Close()
			if p, err = conf.Open(dir); err != nil { // every region closed
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			return p, func(t *testing.T) {
				// Regions of two chunks: x = 0 to 4 lie in three, two of
				// which only the prefetcher had reason to open.
				if n := p.OpenSegments(); n < 3 {
					t.Fatalf("%d regions open, want the three the player walks into", n)
				}
			}
		},
		"arena": func(t *testing.T) (source, func(t *testing.T)) {
			tp := strip(t, 6, provider.Config{})
			o, err := overlay.Config{Log: quiet}.Open(tp, filepath.Join(t.TempDir(), "arena"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { o.Shutdown() })
			return o, func(t *testing.T) {
				if made, taken := tp.ReadyStats(); made < 9 || taken != 2 {
					t.Fatalf("the template made %d ready copies and handed out %d, want at least 9 and 2", made, taken)
				}
			}
		},
	}
	for name, open := range opens {
		t.Run(name, func(t *testing.T) {
			p, check := open(t)
			pf := New(p, Options{ViewRadius: 1})
			defer pf.Close()
			walkTheStrip(pf)
			if s := pf.Stats(); s.Loaded < 9 || s.Failed != 0 {
				t.Fatalf("the prefetcher warmed %d columns, %d failed", s.Loaded, s.Failed)
			}
			for x := int32(3); x <= 4; x++ {
				if _, err := p.LoadColumn(world.ChunkPos{x, 0}, world.Overworld); err != nil {
					t.Fatal(err)
				}
			}
			check(t)
			if err := pf.PinArea(world.ChunkPos{10, 0}, 2, world.Overworld); err != nil {
				t.Fatal(err)
			}
			pf.UnpinArea(world.ChunkPos{10, 0}, 2, world.Overworld)
		})
	}
}
