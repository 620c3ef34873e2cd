package prefetch

import (
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
)

// A teleport queues the whole view around where the player is about to
// appear, nearest first, but for what another player there sees; what was
// predicted before goes stale.
func TestTeleportQueuesTheViewThere(t *testing.T) {
	pf := unstarted(nil, Options{ViewRadius: 8}, 1000)
	id, other := uuid.New(), uuid.New()
	pf.UpdatePlayer(id, mgl64.Vec3{8, 64, 8}, world.Overworld)
	pf.players[id].at = time.Now().Add(-50 * time.Millisecond)
	pf.UpdatePlayer(id, mgl64.Vec3{9.5, 64, 8}, world.Overworld)
	before := len(pf.queue)
	if before == 0 {
		t.Fatal("nothing predicted before the teleport")
	}
	to := mgl64.Vec3{5000, 64, 5000}
	pf.UpdatePlayer(other, mgl64.Vec3{5000 + 16*12, 64, 5000}, world.Overworld) // twelve chunks east
	pf.Teleport(id, to, world.Overworld)
	pf.feedBacklog(time.Now().Add(time.Hour)) // the view's later chunks too
	dest := chunkOf(to)
	var got []world.ChunkPos
	stale := 0
	for len(pf.queue) > 0 {
		j := <-pf.queue
		if j.gen != pf.players[id].gen {
			stale++
			continue
		}
		got = append(got, j.pos)
	}
	if stale != before {
		t.Errorf("%d jobs from before the teleport, %d left of the old generation", before, stale)
	}
	seen := map[world.ChunkPos]bool{}
	for i, c := range got {
		if !sees(dest, c, 8) {
			t.Fatalf("%v queued, out of the view at %v", c, dest)
		}
		if sees(chunkOf(mgl64.Vec3{5000 + 16*12, 64, 5000}), c, 8) {
			t.Fatalf("%v queued, which the other player sees", c)
		}
		if i > 0 && dist2(c, dest) < dist2(got[i-1], dest) {
			t.Fatalf("%v queued after %v, which is further away", c, got[i-1])
		}
		seen[c] = true
	}
	want := 0
	for _, c := range viewAround(nil, dest, 8) {
		if !sees(chunkOf(mgl64.Vec3{5000 + 16*12, 64, 5000}), c, 8) {
			want++
			if !seen[c] {
				t.Errorf("%v in view at %v was not queued", c, dest)
			}
		}
	}
	if len(viewAround(nil, dest, 8)) != 225 || want == 225 || want != len(got) {
		t.Fatalf("view of %d chunks, %d not seen by the other player, %d queued", len(viewAround(nil, dest, 8)), want, len(got))
	}
}

// Against Dragonfly's own World: a player sprints, then teleports, and the
// World's loader (four chunks a tick, as a session loads them) loads the
// view there. Every chunk it loads there was queued before it asked.
func TestTeleportQueuesWhatDragonflysWorldLoads(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec := &loadRecorder{}
	w := world.Config{Provider: rec, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer w.Close()
	const r = 8
	l := world.NewLoader(r, w, world.NopViewer{})
	pf := unstarted(nil, Options{ViewRadius: r}, 1000)
	id := uuid.New()
	pos := mgl64.Vec3{100.5, 64, 100.5}
	queued := map[world.ChunkPos]bool{}
	tick := func(n int) {
		pf.feedBacklog(time.Now().Add(time.Hour)) // paced in real time, the test is faster
		for len(pf.queue) > 0 {
			j := <-pf.queue
			delete(pf.queued, chunkKey{j.pos, j.dim})
			queued[j.pos] = true
		}
		rec.mu.Lock()
		rec.loaded = rec.loaded[:0]
		rec.mu.Unlock()
		<-w.Do(func(tx *world.Tx) {
			l.Move(tx, pos)
			l.Load(tx, n)
		}).Done()
	}
	for range 40 { // two seconds of sprinting
		if tr := pf.players[id]; tr != nil {
			tr.at = time.Now().Add(-50 * time.Millisecond)
		}
		pf.UpdatePlayer(id, pos, world.Overworld)
		tick(1 << 20)
		pos[0] += 5.6 / 20
	}
	pos = mgl64.Vec3{-3000.5, 64, 2000.5}
	pf.Teleport(id, pos, world.Overworld)
	loads := 0
	for range 100 {
		pf.UpdatePlayer(id, pos, world.Overworld)
		tick(4)
		for _, c := range rec.loaded {
			loads++
			if !queued[c] {
				t.Fatalf("the World loaded %v after the teleport, which was not queued", c)
			}
		}
	}
	if loads < 200 {
		t.Fatalf("the World loaded %d chunks after the teleport: the test shows nothing", loads)
	}
}

// A teleport's view is queued 32 chunks at once, then at the TeleportRate,
// nearest first, so that its ready copies do not all wait in the cache at
// once.
func TestTeleportPacesTheView(t *testing.T) {
	pf := unstarted(nil, Options{ViewRadius: 8, TeleportRate: 100}, 1000)
	before := time.Now()
	pf.Teleport(uuid.New(), mgl64.Vec3{800, 64, 800}, world.Overworld)
	after := time.Now()
	if len(pf.queue) != teleportBurst {
		t.Fatalf("%d queued at once, want %d", len(pf.queue), teleportBurst)
	}
	if next := pf.feedBacklog(before); len(pf.queue) != teleportBurst || next.Before(before.Add(10*time.Millisecond)) {
		t.Fatalf("%d queued before the next was due, which is due at %v after the teleport", len(pf.queue), next.Sub(before))
	}
	pf.feedBacklog(after.Add(100 * time.Millisecond)) // ten more are due, at 100 a second
	if len(pf.queue) != teleportBurst+10 {
		t.Fatalf("%d queued a tenth of a second on, want %d", len(pf.queue), teleportBurst+10)
	}
	if next := pf.feedBacklog(after.Add(time.Hour)); len(pf.queue) != 225 || !next.IsZero() {
		t.Fatalf("%d queued an hour on, of a view of 225 (next due %v)", len(pf.queue), next)
	}
}

// Two players' views share the backlog in the order their chunks fall
// due: the second's first chunks go in among the first's later ones.
func TestTeleportBacklogInOrderDue(t *testing.T) {
	pf := unstarted(nil, Options{ViewRadius: 8}, 1000)
	pf.Teleport(uuid.New(), mgl64.Vec3{800, 64, 800}, world.Overworld)
	time.Sleep(20 * time.Millisecond)
	pf.Teleport(uuid.New(), mgl64.Vec3{-800, 64, 800}, world.Overworld)
	if !slices.IsSortedFunc(pf.backlog, func(a, b pending) int { return a.due.Compare(b.due) }) {
		t.Fatal("the backlog is not in the order its jobs fall due")
	}
	if first := pf.backlog[0].pos; first[0] < 0 {
		t.Fatalf("the backlog starts with %v, of the second view", first)
	}
	if len(pf.backlog) != 2*(225-teleportBurst) {
		t.Fatalf("%d in the backlog, want both views less their first %d", len(pf.backlog), teleportBurst)
	}
}

// A view larger than the queue's room is queued whole, nearest first, as
// the workers free room; a later teleport drops what is left of it.
func TestTeleportBacklogFeedsTheQueue(t *testing.T) {
	pf := unstarted(nil, Options{ViewRadius: 8}, 50)
	id := uuid.New()
	to := mgl64.Vec3{800, 64, 800}
	pf.Teleport(id, to, world.Overworld)
	var got []world.ChunkPos
	for len(pf.queue) > 0 { // a worker's loop: take a job, then feed (all due by then)
		j := <-pf.queue
		delete(pf.queued, chunkKey{j.pos, j.dim})
		got = append(got, j.pos)
		pf.feedBacklog(time.Now().Add(time.Hour))
	}
	if want := viewAround(nil, chunkOf(to), 8); !slices.Equal(got, want) {
		t.Fatalf("queued %d chunks of the view's %d, or out of order", len(got), len(want))
	}
	pf.Teleport(id, to.Add(mgl64.Vec3{5000, 0, 0}), world.Overworld)
	if len(pf.backlog) == 0 {
		t.Fatal("the second view left nothing in the backlog: the test shows nothing")
	}
	pf.Teleport(id, to, world.Overworld)
	if len(pf.backlog) == 0 {
		t.Fatal("the third view left nothing in the backlog: the test shows nothing")
	}
	for _, j := range pf.backlog {
		if !sees(chunkOf(to), j.pos, 8) {
			t.Fatalf("%v, of the view left behind, is still in the backlog", j.pos)
		}
	}
}

// countingSource counts the prefetches a Prefetcher asks for.
type countingSource struct{ n atomic.Int64 }

func (c *countingSource) Prefetch(world.ChunkPos, world.Dimension) (bool, error) {
	c.n.Add(1)
	return true, nil
}
func (c *countingSource) Pin(world.ChunkPos, world.Dimension) error { return nil }
func (c *countingSource) Unpin(world.ChunkPos, world.Dimension)     {}

// A teleport's view is needed whichever way the player goes next: a sharp
// turn after it makes the path's predictions stale, not the view's.
func TestTurnKeepsTheTeleportsView(t *testing.T) {
	src := &countingSource{}
	pf := unstarted(src, Options{}, 1000)
	id := uuid.New()
	pos := mgl64.Vec3{800, 64, 800}
	pf.Teleport(id, pos, world.Overworld)
	pf.feedBacklog(time.Now().Add(time.Hour))
	view := len(pf.queue)
	for _, dx := range []float64{0.3, 0.3, -0.3} { // on, then back: a sharp turn
		pf.players[id].at = time.Now().Add(-50 * time.Millisecond)
		pos[0] += dx
		pf.UpdatePlayer(id, pos, world.Overworld)
	}
	if pf.players[id].epoch != 1 || pf.players[id].gen < 2 {
		t.Fatalf("track epoch %d, generation %d: no turn after the teleport", pf.players[id].epoch, pf.players[id].gen)
	}
	for range view {
		pf.do(<-pf.queue)
	}
	if got := src.n.Load(); got != int64(view) {
		t.Fatalf("%d of the view's %d chunks prefetched after the turn", got, view)
	}
}

// A move in the same tick as the teleport before it measures no velocity:
// over microseconds a step is thousands of blocks a second, whose path
// ahead would flood the queue.
// The pair must come within minMoveInterval: a busy machine (the race
// detector, other tests) can stall between them, so a pair that took
// longer is tried again rather than judged.
func TestNoVelocityFromAMoveRightAfterATeleport(t *testing.T) {
	id := uuid.New()
	for try := 0; try < 100; try++ {
		pf := unstarted(nil, Options{}, 10000)
		start := time.Now()
		pf.Teleport(id, mgl64.Vec3{800, 64, 800}, world.Overworld)
		pf.UpdatePlayer(id, mgl64.Vec3{800.3, 64, 800}, world.Overworld)
		if time.Since(start) >= minMoveInterval {
			continue
		}
		if v := pf.players[id].vel; v.Len() != 0 {
			t.Fatalf("a velocity of %v blocks a second from a move right after a teleport", v)
		}
		return
	}
	t.Skip("no teleport and move came within minMoveInterval in 100 tries")
}
