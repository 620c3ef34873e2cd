package tests

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/blazeworld/blaze/prefetch"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
)

// A movement trace: where each player is at each game tick (20 a second).
type trace struct {
	name    string
	players int
	speed   float64 // blocks per second
	ticks   int
	// teleportEvery > 0 moves the player far away every that many ticks.
	teleportEvery int
}

var traces = []trace{
	{"walk", 1, 4.3, 400, 0},
	{"sprint", 1, 5.6, 400, 0},
	{"elytra", 1, 30, 400, 0},
	{"teleports", 1, 5.6, 400, 100},
	{"many-players", 6, 5.6, 400, 0},
}

// replayTick is the real time of one game tick in the replay: five times
// faster than the game, which leaves the prefetcher less time, not more.
const replayTick = 10 * time.Millisecond

// viewRadius is the radius in chunks the simulated World loads around a
// player, and the prefetcher's ViewRadius: the prefetcher's default (a
// client asks for its render distance, which Dragonfly caps at 32 unless
// configured otherwise).
const viewRadius = 8

// inView reports whether the World loads chunk c for a player in chunk at,
// as Dragonfly's world.Loader decides: the distance between them, rounded
// to the nearest whole, at most viewRadius (a disc, not a square).
func inView(at, c world.ChunkPos) bool {
	dx, dz := float64(c[0]-at[0]), float64(c[1]-at[1])
	return int32(math.Round(math.Sqrt(dx*dx+dz*dz))) <= viewRadius
}

// BenchmarkPrefetchTraces replays traces over the tiled world, loading
// what a World would load around each player every tick, with and without
// prefetching, and reports the hit rate, the LoadColumn p50/p99 and the
// share of prefetched columns never used.
func BenchmarkPrefetchTraces(b *testing.B) {
	dir := tiled(b, contenders[0])
	for _, tr := range traces {
		for _, with := range []bool{false, true} {
			mode := "without"
			if with {
				mode = "with"
			}
			b.Run(tr.name+"/"+mode, func(b *testing.B) {
				var hitRate, wasted float64
				var lat []time.Duration
				for b.Loop() {
					p, err := provider.Config{Log: quiet}.Open(dir)
					if err != nil {
						b.Fatal(err)
					}
					var pf *prefetch.Prefetcher
					if with {
						// The replay runs faster than the game: three seconds of
						// game time ahead, as the default promises.
						pf = prefetch.New(p, prefetch.Options{ViewRadius: viewRadius, Lookahead: 3 * time.Second * replayTick / (50 * time.Millisecond)})
					}
					l, hits, misses := replay(b, p, pf, tr)
					lat = append(lat, l...)
					hitRate = float64(hits) / float64(hits+misses)
					if pf != nil {
						pf.Close()
						if made, taken := p.ReadyStats(); made > 0 {
							wasted = float64(made-taken) / float64(made)
						}
					}
					p.Close()
				}
				slices.Sort(lat)
				b.ReportMetric(0, "ns/op") // a replay's length is the trace's, not a cost
				b.ReportMetric(100*hitRate, "hit-%")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				if with {
					b.ReportMetric(100*wasted, "wasted-%")
				}
			})
		}
	}
}

// replay runs one trace and returns the latency of every LoadColumn and
// the column cache's hits and misses.
func replay(b *testing.B, p *provider.DB, pf *prefetch.Prefetcher, tr trace) ([]time.Duration, int64, int64) {
	type player struct {
		id  uuid.UUID
		pos mgl64.Vec3
		dir mgl64.Vec3
	}
	// The World loads a column once, whichever player it came near, and
	// (in a replay this short) unloads nothing.
	loaded := map[world.ChunkPos]bool{}
	var ps []*player
	for i := 0; i < tr.players; i++ {
		a := float64(i) * 2 * math.Pi / float64(max(tr.players, 1))
		ps = append(ps, &player{id: uuid.New(), pos: mgl64.Vec3{float64(tiledSide*16) / 4, 64, float64(tiledSide*16)/4 + float64(i)*40},
			dir: mgl64.Vec3{math.Cos(a/4 + 0.3), 0, math.Sin(a/4 + 0.3)}})
	}
	var h0, m0 int64
	var lat []time.Duration
	step := tr.speed / 20
	inWorld := func(c world.ChunkPos) bool { return c[0] >= 0 && c[1] >= 0 && c[0] < tiledSide && c[1] < tiledSide }
	for tick := 0; tick < tr.ticks; tick++ {
		for _, pl := range ps {
			if tr.teleportEvery > 0 && tick > 0 && tick%tr.teleportEvery == 0 {
				pl.pos = mgl64.Vec3{float64((tick*37)%(tiledSide*12) + 100), 64, float64((tick*53)%(tiledSide*12) + 100)}
			}
			pl.pos = pl.pos.Add(pl.dir.Mul(step))
			// Stay inside the tiled world: turn back at its edges.
			if c := (world.ChunkPos{int32(pl.pos[0]) >> 4, int32(pl.pos[2]) >> 4}); c[0] < viewRadius+6 || c[0] > tiledSide-viewRadius-6 {
				pl.dir[0] = -pl.dir[0]
			} else if c[1] < viewRadius+6 || c[1] > tiledSide-viewRadius-6 {
				pl.dir[2] = -pl.dir[2]
			}
			if pf != nil {
				pf.UpdatePlayer(pl.id, pl.pos, world.Overworld)
			}
			c := world.ChunkPos{int32(pl.pos[0]) >> 4, int32(pl.pos[2]) >> 4}
			for dx := int32(-viewRadius); dx <= viewRadius; dx++ {
				for dz := int32(-viewRadius); dz <= viewRadius; dz++ {
					q := world.ChunkPos{c[0] + dx, c[1] + dz}
					if loaded[q] || !inWorld(q) || !inView(c, q) {
						continue
					}
					loaded[q] = true
					t0 := time.Now()
					if _, err := p.LoadColumn(q, world.Overworld); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
			}
		}
		if tick == 0 {
			// The first view is loaded before anyone moved: no prefetcher
			// can have it, so the hit rate counts from here.
			h0, m0 = p.CacheStats()
			lat = lat[:0]
		}
		time.Sleep(replayTick)
	}
	h1, m1 := p.CacheStats()
	return lat, h1 - h0, m1 - m0
}
