package prefetch

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
)

// Teleport tells the prefetcher that player id is about to be moved to pos
// in dim, as Dragonfly's HandleTeleport does before it moves the player
// (Handler passes it on). What was predicted for the player goes stale,
// and the chunks of its view around pos are queued at once, nearest first,
// as the World loads them: Dragonfly's session loads at most four chunks a
// tick, so the workers are far ahead of it. Chunks within another player's
// view are left out. The nearest 32 are queued at once, the rest at the
// Options' TeleportRate, a little faster than the World loads them, from
// a backlog (up to 4,096 chunks) that also holds what finds the queue
// full: so a view larger than the queue's Budget (256 by default; a view
// of radius 8 holds 225 chunks, one of radius 16 861) is queued whole,
// and its ready copies do not crowd the cache. It never blocks.
func (pf *Prefetcher) Teleport(id uuid.UUID, pos mgl64.Vec3, dim world.Dimension) {
	now := time.Now()
	pf.mu.Lock()
	if pf.closed {
		pf.mu.Unlock()
		return
	}
	t := pf.restartLocked(id, pos, dim, now)
	epoch := t.epoch
	pf.mu.Unlock()
	bp := predBufs.Get().(*[]world.ChunkPos) // enqueue keeps nothing of the view
	view := pf.unseen(id, dim, viewAround((*bp)[:0], chunkOf(pos), int32(pf.opts.ViewRadius)))
	pf.enqueue(t, view, dim, epoch, id, true)
	*bp = view[:0]
	predBufs.Put(bp)
}

// restartLocked starts player id's track afresh at pos in dim, at time
// now: a new player, or one that teleported, whose earlier predictions,
// in the queue or the backlog, are stale. pf.mu must be held.
func (pf *Prefetcher) restartLocked(id uuid.UUID, pos mgl64.Vec3, dim world.Dimension, now time.Time) *track {
	t := pf.players[id]
	if t == nil {
		t = &track{}
		pf.players[id] = t
	}
	*t = track{pos: pos, at: now, dim: dim, gen: t.gen + 1, epoch: t.epoch + 1, last: chunkOf(pos)}
	pf.dropBacklogLocked(id)
	return t
}

// viewAround appends to dst the chunks within view of a player in chunk c
// (see sees), nearest first: the order Dragonfly's World loads them in.
func viewAround(dst []world.ChunkPos, c world.ChunkPos, r int32) []world.ChunkPos {
	offs, ok := viewOffsets.Load(r)
	if !ok {
		offs, _ = viewOffsets.LoadOrStore(r, sortedView(r))
	}
	for _, d := range offs.([]world.ChunkPos) {
		dst = append(dst, world.ChunkPos{c[0] + d[0], c[1] + d[1]})
	}
	return dst
}

// viewOffsets holds, by view radius (int32), the view around chunk (0, 0),
// nearest first: sorting it is most of the work of listing a view.
var viewOffsets sync.Map

// sortedView returns the view of radius r around chunk (0, 0), nearest
// first.
func sortedView(r int32) []world.ChunkPos {
	var out []world.ChunkPos
	for dx := -r; dx <= r; dx++ {
		w := halfWidth(dx, r)
		for dz := -w; dz <= w; dz++ {
			out = append(out, world.ChunkPos{dx, dz})
		}
	}
	slices.SortStableFunc(out, func(a, b world.ChunkPos) int {
		return cmp.Compare(dist2(a, world.ChunkPos{}), dist2(b, world.ChunkPos{}))
	})
	return out
}

func dist2(a, b world.ChunkPos) int64 {
	dx, dz := int64(a[0]-b[0]), int64(a[1]-b[1])
	return dx*dx + dz*dz
}
