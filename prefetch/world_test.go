package prefetch

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
)

// loadRecorder is a provider that has no columns (the World generates
// them) and records the order in which the World asked for them.
type loadRecorder struct {
	world.NopProvider
	mu     sync.Mutex
	loaded []world.ChunkPos
}

func (r *loadRecorder) LoadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error) {
	r.mu.Lock()
	r.loaded = append(r.loaded, pos)
	r.mu.Unlock()
	return r.NopProvider.LoadColumn(pos, dim)
}

// The prefetcher predicts what Dragonfly's own World loads. A real World
// with a world.Loader, as a player's session has, follows a player walking
// straight at several headings, at several radii: every chunk the World
// loads after the first view was predicted before the World asked for it,
// nothing was predicted after the World had loaded it, and what was
// predicted and never loaded lies on the path ahead of where the walk
// stops.
func TestPredictsWhatDragonflysWorldLoads(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, r := range []int{4, 8, 16} {
		for _, deg := range []float64{0, 20, 45, 70, 161} {
			t.Run(fmt.Sprintf("radius=%d/heading=%v", r, deg), func(t *testing.T) {
				rec := &loadRecorder{}
				w := world.Config{Provider: rec, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
				defer w.Close()
				l := world.NewLoader(r, w, world.NopViewer{})
				pf := unstarted(nil, Options{ViewRadius: r}, 1<<16)
				id := uuid.New()
				dir := mgl64.Vec3{math.Cos(deg * math.Pi / 180), 0, math.Sin(deg * math.Pi / 180)}
				const speed = 5.6 // blocks a second: sprinting
				pos := mgl64.Vec3{1000.5, 64, -700.5}
				predictedAt := map[world.ChunkPos]int{}
				loadedAt := map[world.ChunkPos]int{}
				for move := 0; move < 20*20; move++ { // 20 s, a move a tick
					if tr := pf.players[id]; tr != nil {
						tr.at = time.Now().Add(-50 * time.Millisecond) // a tick ago
					}
					pf.UpdatePlayer(id, pos, world.Overworld)
					for len(pf.queue) > 0 {
						j := <-pf.queue
						delete(pf.queued, chunkKey{j.pos, j.dim})
						if at, ok := loadedAt[j.pos]; ok {
							t.Fatalf("move %d predicted %v, which the World loaded at move %d and holds", move, j.pos, at)
						}
						if _, ok := predictedAt[j.pos]; !ok {
							predictedAt[j.pos] = move
						}
					}
					rec.loaded = rec.loaded[:0]
					<-w.Do(func(tx *world.Tx) {
						l.Move(tx, pos)
						l.Load(tx, 1<<20)
					}).Done()
					for _, c := range rec.loaded {
						loadedAt[c] = move
						if _, ok := predictedAt[c]; !ok && move > 0 {
							t.Fatalf("move %d: the World loaded %v, which was not predicted", move, c)
						}
					}
					if move == 0 && len(rec.loaded) == 0 {
						t.Fatal("the World loaded nothing: the test shows nothing")
					}
					pos = pos.Add(dir.Mul(speed / 20))
				}
				// What was predicted and not loaded lies ahead, within the
				// lookahead and a step of the path: in view of a point on it.
				ahead := speed*pf.opts.Lookahead.Seconds() + 8
				unused := 0
				for c := range predictedAt {
					if _, ok := loadedAt[c]; ok {
						continue
					}
					unused++
					onPath := false
					for d := 0.0; d <= ahead+16 && !onPath; d += 0.5 {
						onPath = sees(chunkOf(pos.Add(dir.Mul(d))), c, int32(r))
					}
					if !onPath {
						t.Fatalf("predicted %v, which the World never loaded and which is not on the path ahead", c)
					}
				}
				t.Logf("the World loaded %d chunks; %d were predicted, %d of them never loaded", len(loadedAt), len(predictedAt), unused)
			})
		}
	}
}
