package prefetch

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
)

// UpdatePlayer runs on every move of every player, in the World's
// transaction: what it costs a moving player, walking and flying, at two
// view radii. The queue is drained after each move, as the workers would
// drain it.
func BenchmarkUpdatePlayer(b *testing.B) {
	for _, r := range []int{8, 16} {
		for _, speed := range []float64{4.3, 30} { // walking, elytra (blocks a second)
			// Along X, and at 20° from it, where a path's chunks change
			// far more often (its points cross borders of both axes).
			for _, heading := range []float64{0, 20} {
				b.Run(fmt.Sprintf("radius=%d/speed=%v/heading=%v", r, speed, heading), func(b *testing.B) {
					pf := unstarted(nil, Options{ViewRadius: r}, 256)
					id := uuid.New()
					pos := mgl64.Vec3{0, 64, 0}
					a := heading * math.Pi / 180
					step := mgl64.Vec3{math.Cos(a), 0, math.Sin(a)}.Mul(speed / 20) // a move a tick
					pf.UpdatePlayer(id, pos, world.Overworld)
					b.ResetTimer()
					for range b.N {
						pos = pos.Add(step)
						// As if the last move came a tick ago.
						pf.players[id].at = time.Now().Add(-50 * time.Millisecond)
						pf.UpdatePlayer(id, pos, world.Overworld)
						for len(pf.queue) > 0 {
							j := <-pf.queue
							delete(pf.queued, chunkKey{j.pos, j.dim})
						}
					}
				})
			}
		}
	}
}

// Teleport runs inside the World's transaction too (HandleTeleport): what
// announcing a teleport costs, queuing the view at the destination, at two
// view radii. The queue is drained after each, untimed, as the workers
// would drain it (run it with -benchtime set to a count).
func BenchmarkTeleport(b *testing.B) {
	for _, r := range []int{8, 16} {
		b.Run(fmt.Sprintf("radius=%d", r), func(b *testing.B) {
			pf := unstarted(nil, Options{ViewRadius: r}, 256)
			id := uuid.New()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				pf.Teleport(id, mgl64.Vec3{float64(i%64) * 1000, 64, 0}, world.Overworld)
				b.StopTimer()
				for len(pf.queue) > 0 {
					j := <-pf.queue
					delete(pf.queued, chunkKey{j.pos, j.dim})
					pf.feedBacklog(time.Now().Add(time.Hour))
				}
				b.StartTimer()
			}
		})
	}
}
