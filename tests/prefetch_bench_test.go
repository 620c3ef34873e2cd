package tests

import (
	"cmp"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/prefetch"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
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
	// perTick > 0 makes the World load at most that many chunks a tick
	// for each player after the first view, nearest first, as a
	// Dragonfly session does (four); 0 loads all that came into view.
	perTick int
	// announce tells the prefetcher of each teleport before it happens,
	// as prefetch.Handler's HandleTeleport does.
	announce bool
}

var traces = []trace{
	{"walk", 1, 4.3, 400, 0, 0, false},
	{"sprint", 1, 5.6, 400, 0, 0, false},
	{"elytra", 1, 30, 400, 0, 0, false},
	{"teleports", 1, 5.6, 400, 100, 0, false},
	{"many-players", 6, 5.6, 400, 0, 0, false},
	// Teleports where the World loads four chunks a tick, as Dragonfly
	// does, told of beforehand or not.
	{"teleports-4-a-tick", 1, 5.6, 400, 100, 4, false},
	{"teleports-announced", 1, 5.6, 400, 100, 4, true},
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

func chunkDist2(a, b world.ChunkPos) int64 {
	dx, dz := int64(a[0]-b[0]), int64(a[1]-b[1])
	return dx*dx + dz*dz
}

// replayWorld is a world a replay runs over, opened with nothing cached:
// its provider, and what its column caches counted (nil where the world
// cannot tell).
type replayWorld struct {
	p interface {
		world.Provider
		prefetch.Source
	}
	cache func() (hits, misses int64) // LoadColumn from the column cache, or not
	ready func() (made, taken int64)  // ready copies made by Prefetch, and taken
	close func()
}

// plainWorld opens the tiled world as one provider.DB.
func plainWorld(b *testing.B) replayWorld {
	p, err := provider.Config{Log: quiet}.Open(tiled(b, contenders[0]))
	if err != nil {
		b.Fatal(err)
	}
	return replayWorld{p: p, cache: p.CacheStats, ready: p.ReadyStats, close: func() { p.Close() }}
}

// BenchmarkPrefetchTraces replays traces over the tiled world, loading
// what a World would load around each player every tick, with and without
// prefetching, and reports the hit rate, the LoadColumn p50/p99 and the
// share of prefetched columns never used.
func BenchmarkPrefetchTraces(b *testing.B) { replayTraces(b, traces, plainWorld) }

// replayTraces runs each trace over worlds open returns, without and with
// a prefetcher, and reports what BenchmarkPrefetchTraces does, leaving out
// the figures the world cannot tell.
func replayTraces(b *testing.B, traces []trace, open func(b *testing.B) replayWorld) {
	for _, tr := range traces {
		for _, with := range []bool{false, true} {
			mode := "without"
			if with {
				mode = "with"
			}
			b.Run(tr.name+"/"+mode, func(b *testing.B) {
				var hitRate, wasted float64
				var lat []time.Duration
				var w replayWorld
				for b.Loop() {
					w = open(b)
					var pf *prefetch.Prefetcher
					if with {
						// The replay runs faster than the game: three seconds of
						// game time ahead, as the default promises, and a
						// teleport's view paced at the default's rate in game
						// time.
						speedup := int(50 * time.Millisecond / replayTick)
						pf = prefetch.New(w.p, prefetch.Options{ViewRadius: viewRadius, Lookahead: 3 * time.Second * replayTick / (50 * time.Millisecond), TeleportRate: 100 * speedup})
					}
					l, hits, misses := replay(b, w, pf, tr)
					lat = append(lat, l...)
					hitRate = float64(hits) / float64(hits+misses)
					if pf != nil {
						pf.Close()
						if w.ready != nil {
							if made, taken := w.ready(); made > 0 {
								wasted = float64(made-taken) / float64(made)
							}
						}
					}
					w.close()
				}
				slices.Sort(lat)
				b.ReportMetric(0, "ns/op") // a replay's length is the trace's, not a cost
				if w.cache != nil {
					b.ReportMetric(100*hitRate, "hit-%")
				}
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				if with && w.ready != nil {
					b.ReportMetric(100*wasted, "wasted-%")
				}
			})
		}
	}
}

// replay runs one trace and returns the latency of every LoadColumn and
// the column cache's hits and misses (zero where w cannot tell).
func replay(b *testing.B, w replayWorld, pf *prefetch.Prefetcher, tr trace) ([]time.Duration, int64, int64) {
	p := w.p
	stats := w.cache
	if stats == nil {
		stats = func() (int64, int64) { return 0, 0 }
	}
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
				if tr.announce && pf != nil {
					pf.Teleport(pl.id, pl.pos, world.Overworld)
				}
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
			var toLoad []world.ChunkPos
			for dx := int32(-viewRadius); dx <= viewRadius; dx++ {
				for dz := int32(-viewRadius); dz <= viewRadius; dz++ {
					q := world.ChunkPos{c[0] + dx, c[1] + dz}
					if !loaded[q] && inWorld(q) && inView(c, q) {
						toLoad = append(toLoad, q)
					}
				}
			}
			if tr.perTick > 0 && tick > 0 && len(toLoad) > tr.perTick {
				slices.SortStableFunc(toLoad, func(a, b world.ChunkPos) int {
					return cmp.Compare(chunkDist2(a, c), chunkDist2(b, c))
				})
				toLoad = toLoad[:tr.perTick]
			}
			for _, q := range toLoad {
				loaded[q] = true
				t0 := time.Now()
				if _, err := p.LoadColumn(q, world.Overworld); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
		}
		if tick == 0 {
			// The first view is loaded before anyone moved: no prefetcher
			// can have it, so the hit rate counts from here.
			h0, m0 = stats()
			lat = lat[:0]
		}
		time.Sleep(replayTick)
	}
	h1, m1 := stats()
	return lat, h1 - h0, m1 - m0
}

// segmentedContender stores the tiled world in regions of 32 x 32 chunks
// (segment's default), 16 of them.
var segmentedContender = contender{"blaze-segmented", func(b *testing.B, dir string) store {
	p, err := segment.Config{Log: quiet}.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return p
}}

// BenchmarkPrefetchSegmentsAndArenas replays the traces over the tiled
// world segmented, where a player also crosses into regions that are
// closed, and as an arena's template under an empty overlay.
func BenchmarkPrefetchSegmentsAndArenas(b *testing.B) {
	b.Run("segmented", func(b *testing.B) {
		dir := tiled(b, segmentedContender)
		replayTraces(b, traces, func(b *testing.B) replayWorld {
			p, err := segment.Config{Log: quiet}.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			return replayWorld{p: p, cache: p.CacheStats, ready: p.ReadyStats, close: func() { p.Close() }}
		})
	})
	b.Run("arena", func(b *testing.B) {
		dir := tiled(b, contenders[0])
		replayTraces(b, traces, func(b *testing.B) replayWorld {
			tp, err := provider.Config{Log: quiet, ReadOnly: true}.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			o, err := overlay.Config{Log: quiet}.Open(tp, filepath.Join(b.TempDir(), "arena"))
			if err != nil {
				b.Fatal(err)
			}
			return replayWorld{p: o, cache: tp.CacheStats, ready: tp.ReadyStats, close: func() { o.Shutdown(); tp.Close() }}
		})
	})
}
