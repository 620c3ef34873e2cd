package prefetch

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
)

// Options tunes a Prefetcher. The zero value gives the defaults. New takes
// it by value and never modifies it; it may be shared between goroutines.
type Options struct {
	// Workers is the number of background loaders. Default 2.
	Workers int
	// Lookahead is how far ahead in time chunks are predicted. Default 3s:
	// at elytra speed (30 blocks a second) about six chunks.
	Lookahead time.Duration
	// ViewRadius is the radius in chunks the World loads around a player
	// (its chunk radius). The prefetcher warms what will come within it
	// along the path ahead, by the World's own rule: the chunks whose
	// distance from the player's chunk, rounded, is at most the radius.
	// Default 8.
	ViewRadius int
	// Budget caps the columns queued for loading at once. Default 256.
	Budget int
	// TeleportBlocks is the jump between two updates taken as a teleport
	// (the velocity restarts). Default 48.
	TeleportBlocks float64
	// TeleportRate is how many chunks a second of an announced teleport's
	// view (see Teleport) are queued after its first 32: a little faster
	// than the World loads them, so that the view's ready copies do not
	// crowd the cache. Default 100, where a Dragonfly session loads at
	// most four chunks a tick, 80 a second.
	TeleportRate int
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Lookahead <= 0 {
		o.Lookahead = 3 * time.Second
	}
	if o.ViewRadius <= 0 {
		o.ViewRadius = 8
	}
	if o.Budget <= 0 {
		o.Budget = 256
	}
	if o.TeleportRate <= 0 {
		o.TeleportRate = 100
	}
	if o.TeleportBlocks <= 0 {
		o.TeleportBlocks = 48
	}
	return o
}

// Stats counts what the prefetcher did: a plain value, taken anew by each
// call, safe to copy and to use from any goroutine.
type Stats struct {
	Predicted int64 // chunks predicted and queued
	Loaded    int64 // chunks actually read into the cache
	Dropped   int64 // predictions dropped: queue full, stale or already queued
	Failed    int64 // prefetches whose read failed (the World's load reports it)
	Players   int   // players followed now: UpdatePlayer adds, RemovePlayer forgets
}

// Source is the Blaze world a Prefetcher warms: *provider.DB,
// *segment.Provider and *overlay.Provider implement it, each as
// provider.DB documents the three methods. Its methods must be safe to
// call from any goroutine beside the World's own calls.
type Source interface {
	// Prefetch reads the column into the cache with a ready copy for the
	// next LoadColumn, and reports whether it did any work.
	Prefetch(pos world.ChunkPos, dim world.Dimension) (bool, error)
	// Pin keeps the column cached until as many Unpin calls.
	Pin(pos world.ChunkPos, dim world.Dimension) error
	// Unpin undoes one Pin.
	Unpin(pos world.ChunkPos, dim world.Dimension)
}

// Prefetcher is safe for concurrent use.
type Prefetcher struct {
	p    Source
	opts Options

	mu      sync.Mutex
	players map[uuid.UUID]*track
	queued  map[chunkKey]struct{}
	closed  bool

	queue chan job
	// backlog holds the jobs of teleports' views waiting for their time
	// or for room in the queue (see Teleport), by time due; the feeder
	// and the workers move them to the queue. They stay marked in queued.
	// Under mu. kick wakes the feeder when the backlog grows.
	backlog []pending
	kick    chan struct{}
	stop    chan struct{}
	wg      sync.WaitGroup

	pinMu sync.Mutex
	pins  map[job]int

	predicted, loaded, dropped, failed atomic.Int64
}

// minMoveInterval is the least time between two updates of a player that
// a velocity is measured over: over less, a move's jitter becomes a
// velocity of thousands of blocks a second, whose path ahead floods the
// queue.
const minMoveInterval = time.Millisecond

// behindChunks is how many of the chunks a player left are remembered.
// Dragonfly's World keeps a chunk that left every view until its next
// sweep of unused chunks (every two minutes by default), so a chunk in
// view of a recent position is held still, and a prefetched copy of it
// would wait unused. The view is round and a path's chunks follow it only
// roughly, so a chunk may leave the view and come back into it within a
// chunk or two of travel: the last few chunks cover that.
const behindChunks = 4

// chunkKey names a column: the key of what is queued. It leaves out the
// rest of a job, which would only make every lookup hash more.
type chunkKey struct {
	pos world.ChunkPos
	dim world.Dimension
}

type job struct {
	pos world.ChunkPos
	dim world.Dimension
	// gen is the player's track generation when predicted, or for a
	// teleport's view (view set) its epoch: a turn makes a path's
	// predictions stale, but the view is needed whichever way the player
	// goes next.
	gen  uint64
	view bool
	id   uuid.UUID
}

// track is what is known of one player's movement.
type track struct {
	pos mgl64.Vec3
	vel mgl64.Vec3 // blocks per second, smoothed
	at  time.Time
	dim world.Dimension
	gen uint64 // bumped on a teleport or a sharp turn: older jobs are stale
	// epoch is bumped on a teleport only: older jobs of a view are stale.
	epoch uint64
	last  world.ChunkPos
	// behind holds the chunks the player was in before last, oldest first
	// (nBehind of them): the World still holds what they had in view.
	behind  [behindChunks]world.ChunkPos
	nBehind int
	// path is the player's path at the last prediction (see
	// Prefetcher.path), at track generation pathGen.
	path    []world.ChunkPos
	pathGen uint64
	// predicted holds what the player's predictions queued, in generation
	// predGen, that the last change of its path predicted still: the next
	// change queues only what is not among it. A flying player's path
	// changes on most moves, and each change predicts about a hundred
	// chunks (at a radius of 8), of which a few are new. A chunk found
	// queued for another player is left out, as that job may go stale
	// (the other player turns) and this player still needs it. spare is
	// the map before, kept to be cleared and reused.
	predicted, spare map[world.ChunkPos]struct{}
	predGen          uint64
}

// New starts a prefetcher over p.
func New(p Source, o Options) *Prefetcher {
	o = o.withDefaults()
	pf := &Prefetcher{p: p, opts: o, players: map[uuid.UUID]*track{}, queued: map[chunkKey]struct{}{},
		queue: make(chan job, o.Budget), stop: make(chan struct{}), pins: map[job]int{}, kick: make(chan struct{}, 1)}
	for i := 0; i < o.Workers; i++ {
		pf.wg.Add(1)
		go pf.worker()
	}
	pf.wg.Add(1)
	go pf.feeder()
	return pf
}

func (pf *Prefetcher) worker() {
	defer pf.wg.Done()
	for {
		select {
		case <-pf.stop:
			return
		case j := <-pf.queue:
			pf.do(j)
			pf.feedBacklog(time.Now())
		}
	}
}

// do prefetches j's column unless the prediction went stale: after a turn
// or a teleport, or once another player sees the chunk (the World holds
// it then).
func (pf *Prefetcher) do(j job) {
	pf.mu.Lock()
	delete(pf.queued, chunkKey{j.pos, j.dim})
	t := pf.players[j.id]
	stale := t == nil || (j.view && t.epoch != j.gen) || (!j.view && t.gen != j.gen) || pf.seenByOtherLocked(j)
	pf.mu.Unlock()
	if stale {
		pf.dropped.Add(1)
		return
	}
	// A failed read is counted, not reported: the World's own LoadColumn
	// of that column meets the same error and returns it.
	switch ok, err := pf.p.Prefetch(j.pos, j.dim); {
	case err != nil:
		pf.failed.Add(1)
	case ok:
		pf.loaded.Add(1)
	}
}

func chunkOf(v mgl64.Vec3) world.ChunkPos {
	return world.ChunkPos{int32(math.Floor(v[0])) >> 4, int32(math.Floor(v[2])) >> 4}
}

// UpdatePlayer records where player id is and queues the chunks ahead of
// it. It never blocks.
func (pf *Prefetcher) UpdatePlayer(id uuid.UUID, pos mgl64.Vec3, dim world.Dimension) {
	now := time.Now()
	pf.mu.Lock()
	if pf.closed {
		pf.mu.Unlock()
		return
	}
	t := pf.players[id]
	if t == nil || t.dim != dim || pos.Sub(t.pos).Len() > pf.opts.TeleportBlocks {
		// A new player, or a teleport or a dimension change that no
		// Teleport announced: what was predicted is stale.
		pf.restartLocked(id, pos, dim, now)
		pf.mu.Unlock()
		return
	}
	dt := now.Sub(t.at).Seconds()
	if dt < minMoveInterval.Seconds() {
		// Too soon after the last update to measure a velocity by (a move
		// in the same tick as a Teleport): the next update measures it
		// over both.
		pf.mu.Unlock()
		return
	}
	v := pos.Sub(t.pos).Mul(1 / dt)
	if t.vel.Len() > 1 && v.Len() > 1 && t.vel.Normalize().Dot(v.Normalize()) < 0.5 {
		t.gen++ // a sharp turn: the old path is stale
		t.vel = v
	} else {
		t.vel = t.vel.Mul(0.5).Add(v.Mul(0.5))
	}
	t.pos, t.at = pos, now
	c := chunkOf(pos)
	moved := c != t.last
	if moved {
		if t.nBehind == behindChunks {
			copy(t.behind[:], t.behind[1:])
			t.nBehind--
		}
		t.behind[t.nBehind] = t.last
		t.nBehind++
	}
	t.last = c
	var buf [32]world.ChunkPos
	steps := pf.path(buf[:0], pos, t.vel, t.behind[:t.nBehind])
	if t.gen == t.pathGen && slices.Equal(steps, t.path) {
		// The path is as it was at the last move, and so is the
		// prediction, which is queued already: only a path that changed
		// gets predicted again. Most moves of a walking player change
		// none of its chunks.
		pf.mu.Unlock()
		return
	}
	t.path, t.pathGen = append(t.path[:0], steps...), t.gen
	gen, cur := t.gen, t.nBehind
	pf.mu.Unlock()
	bp := predBufs.Get().(*[]world.ChunkPos)
	preds := pf.unseen(id, dim, pf.predictAlong((*bp)[:0], steps, cur))
	pf.enqueue(t, preds, dim, gen, id, false)
	*bp = preds[:0]
	predBufs.Put(bp)
}

// predBufs holds the buffers that predictions are built in: enqueue keeps
// nothing of one, and a player flying at an angle changes its path on most
// moves.
var predBufs = sync.Pool{New: func() any { b := make([]world.ChunkPos, 0, 256); return &b }}

// unseen returns preds, predicted for player id in dim, less the chunks
// within another player's view there: the World holds those already, so it
// will not load them again. Only players whose view reaches the predicted
// area are looked at, and outside the lock: every player's moves call
// this.
func (pf *Prefetcher) unseen(id uuid.UUID, dim world.Dimension, preds []world.ChunkPos) []world.ChunkPos {
	if len(preds) == 0 {
		return preds
	}
	lo, hi := preds[0], preds[0]
	for _, p := range preds {
		lo = world.ChunkPos{min(lo[0], p[0]), min(lo[1], p[1])}
		hi = world.ChunkPos{max(hi[0], p[0]), max(hi[1], p[1])}
	}
	r := int32(pf.opts.ViewRadius)
	var nb [16]world.ChunkPos
	near := nb[:0]
	pf.mu.Lock()
	for oid, o := range pf.players {
		if oid != id && o.dim == dim && o.last[0]+r >= lo[0] && o.last[0]-r <= hi[0] && o.last[1]+r >= lo[1] && o.last[1]-r <= hi[1] {
			near = append(near, o.last)
		}
	}
	pf.mu.Unlock()
	return slices.DeleteFunc(preds, func(p world.ChunkPos) bool {
		return slices.ContainsFunc(near, func(o world.ChunkPos) bool { return sees(o, p, r) })
	})
}

// seenByOtherLocked reports whether j's chunk is within the view of a
// player other than the one it was predicted for, in its dimension. pf.mu
// must be held.
func (pf *Prefetcher) seenByOtherLocked(j job) bool {
	r := int32(pf.opts.ViewRadius)
	for oid, o := range pf.players {
		if oid != j.id && o.dim == j.dim && sees(o.last, j.pos, r) {
			return true
		}
	}
	return false
}

// sees reports whether a player in chunk at, with view radius r, has c in
// view. Dragonfly's World (world.Loader) loads the chunks whose distance
// from the player's chunk, rounded to the nearest whole, is at most r: a
// disc. The distance rounds to r or less exactly when its square is at
// most r²+r, as (r+½)² = r²+r+¼ and squares are whole.
func sees(at, c world.ChunkPos, r int32) bool {
	dx, dz := int64(c[0]-at[0]), int64(c[1]-at[1])
	return dx*dx+dz*dz <= int64(r)*int64(r+1)
}

// halfWidth is how far the view of radius r reaches along Z in the row dx
// chunks away along X from the player's chunk: the largest w with
// dx²+w² ≤ r²+r (see sees), or -1 when the row is out of view.
func halfWidth(dx, r int32) int32 {
	lim := int64(r)*int64(r+1) - int64(dx)*int64(dx)
	if lim < 0 {
		return -1
	}
	w := int64(math.Sqrt(float64(lim)))
	for w*w > lim {
		w--
	}
	for (w+1)*(w+1) <= lim {
		w++
	}
	return int32(w)
}

// path appends to steps the chunks of the player's path: those behind it,
// its own, and those it will be in along the path ahead, each once. The
// prediction follows from the path alone, so a move that leaves the path
// as it was has nothing new to predict.
func (pf *Prefetcher) path(steps []world.ChunkPos, pos, vel mgl64.Vec3, behind []world.ChunkPos) []world.ChunkPos {
	steps = append(append(steps, behind...), chunkOf(pos))
	speed := math.Hypot(vel[0], vel[2])
	if speed < 0.5 {
		return steps
	}
	dir := mgl64.Vec3{vel[0] / speed, 0, vel[2] / speed}
	dist := speed * pf.opts.Lookahead.Seconds() // blocks ahead
	for d := 8.0; d <= dist+8; d += 8 {
		if f := chunkOf(pos.Add(dir.Mul(d))); f != steps[len(steps)-1] {
			steps = append(steps, f)
		}
	}
	return steps
}

// predictAlong appends to out the chunks that come into view along a path
// whose player is in steps[cur], in view of none of the steps before,
// nearest first. It runs on every move of every player that changed its path,
// inside the World's transaction, so it visits only the chunks that enter
// the view at each step of the path, not the whole view around each step:
// row by row, those in view of the step and not of the step before. The
// view is round and the steps' chunks follow the line only roughly, so a
// chunk in view of two steps need not be in view of every step between
// them: each is also checked against the steps before those two.
func (pf *Prefetcher) predictAlong(out, steps []world.ChunkPos, cur int) []world.ChunkPos {
	r := int32(pf.opts.ViewRadius)
	for i := cur + 1; i < len(steps); i++ {
		out = appendEntering(out, steps[i], steps[:i], r)
	}
	return out
}

// appendEntering appends to out the chunks within r of f that are not
// within r of any of the earlier steps, by X and then Z.
func appendEntering(out []world.ChunkPos, f world.ChunkPos, steps []world.ChunkPos, r int32) []world.ChunkPos {
	prev, earlier := steps[len(steps)-1], steps[:len(steps)-1]
	for x := f[0] - r; x <= f[0]+r; x++ {
		w, pw := halfWidth(x-f[0], r), halfWidth(x-prev[0], r)
		for z := f[1] - w; z <= f[1]+w; z++ {
			if pw >= 0 && z >= prev[1]-pw && z <= prev[1]+pw {
				z = prev[1] + pw // skip the row's stretch in prev's view
				continue
			}
			c := world.ChunkPos{x, z}
			if !slices.ContainsFunc(earlier, func(e world.ChunkPos) bool { return sees(e, c, r) }) {
				out = append(out, c)
			}
		}
	}
	return out
}

// RemovePlayer forgets a player (on quit); its queued chunks become stale.
func (pf *Prefetcher) RemovePlayer(id uuid.UUID) {
	pf.mu.Lock()
	delete(pf.players, id)
	pf.dropBacklogLocked(id)
	pf.mu.Unlock()
}

// PinArea loads and keeps in the cache every column within radius chunks
// of centre along X and Z (a square, which covers the round view of a
// player at centre with that radius), until UnpinArea with the same
// arguments. Pins nest. If a
// column cannot be read, PinArea returns the error and pins nothing: the
// columns it had pinned are released again. After Close it pins nothing
// and returns provider.ErrClosed, as Close has released the pins already.
func (pf *Prefetcher) PinArea(centre world.ChunkPos, radius int, dim world.Dimension) error {
	pf.pinMu.Lock()
	defer pf.pinMu.Unlock()
	pf.mu.Lock()
	closed := pf.closed
	pf.mu.Unlock()
	if closed { // Close releases pins under pinMu after setting closed
		return fmt.Errorf("prefetch: pin area around %v (%v): %w", centre, dim, provider.ErrClosed)
	}
	var done []job
	for dx := -radius; dx <= radius; dx++ {
		for dz := -radius; dz <= radius; dz++ {
			k := job{pos: world.ChunkPos{centre[0] + int32(dx), centre[1] + int32(dz)}, dim: dim}
			if err := pf.p.Pin(k.pos, dim); err != nil {
				for _, k := range done {
					pf.unpinLocked(k)
				}
				return err
			}
			pf.pins[k]++
			done = append(done, k)
		}
	}
	return nil
}

// UnpinArea undoes one PinArea of the same area.
func (pf *Prefetcher) UnpinArea(centre world.ChunkPos, radius int, dim world.Dimension) {
	pf.pinMu.Lock()
	defer pf.pinMu.Unlock()
	for dx := -radius; dx <= radius; dx++ {
		for dz := -radius; dz <= radius; dz++ {
			pf.unpinLocked(job{pos: world.ChunkPos{centre[0] + int32(dx), centre[1] + int32(dz)}, dim: dim})
		}
	}
}

// unpinLocked undoes one pin of k's column, if it has one. pf.pinMu must
// be held.
func (pf *Prefetcher) unpinLocked(k job) {
	if pf.pins[k] > 0 {
		pf.p.Unpin(k.pos, k.dim)
		if pf.pins[k]--; pf.pins[k] == 0 {
			delete(pf.pins, k)
		}
	}
}

// Stats returns the prefetcher's counters.
func (pf *Prefetcher) Stats() Stats {
	pf.mu.Lock()
	players := len(pf.players)
	pf.mu.Unlock()
	return Stats{Predicted: pf.predicted.Load(), Loaded: pf.loaded.Load(), Dropped: pf.dropped.Load(), Failed: pf.failed.Load(),
		Players: players}
}

// Close stops the workers and waits for them. Pins are released. It is
// idempotent.
func (pf *Prefetcher) Close() error {
	pf.mu.Lock()
	if pf.closed {
		pf.mu.Unlock()
		return nil
	}
	pf.closed = true
	pf.mu.Unlock()
	close(pf.stop)
	pf.wg.Wait()
	pf.pinMu.Lock()
	for k, n := range pf.pins {
		for ; n > 0; n-- {
			pf.p.Unpin(k.pos, k.dim)
		}
	}
	pf.pins = map[job]int{}
	pf.pinMu.Unlock()
	return nil
}
