package prefetch

import (
	"slices"
	"time"

	"github.com/df-mc/dragonfly/server/world"
	"github.com/google/uuid"
)

// enqueue queues a job for each of the chunks preds, predicted for t in
// generation gen (a teleport's view, paced, in epoch gen), that t's path
// predictions have not queued and that is not queued already, nearest
// first. It takes the lock once for all of them rather than once each.
// If paced (a teleport's view), the first teleportBurst go to the queue
// and the rest to the backlog, due one after another at the TeleportRate,
// and what finds the queue full goes to the backlog too (up to
// maxBacklog). Otherwise what finds the queue full is dropped and left
// out of t.predicted, so the path's next change queues it again.
func (pf *Prefetcher) enqueue(t *track, preds []world.ChunkPos, dim world.Dimension, gen uint64, id uuid.UUID, paced bool) {
	pf.mu.Lock()
	cur := t.gen
	if paced {
		cur = t.epoch
	}
	if pf.closed || cur != gen || pf.players[id] != t {
		// Closed, or the track turned, teleported or was removed since
		// the prediction: it is stale.
		pf.mu.Unlock()
		pf.dropped.Add(int64(len(preds)))
		return
	}
	// A view's chunks are never on a path's prediction (they are in view),
	// so only a path's are kept in t.predicted.
	var last, next map[world.ChunkPos]struct{}
	if !paced {
		if t.predGen == gen {
			last = t.predicted
		}
		if next = t.spare; next == nil {
			next = make(map[world.ChunkPos]struct{}, len(preds))
		}
		clear(next)
	}
	fresh := preds[:0]
	for _, p := range preds {
		if _, ok := last[p]; ok {
			next[p] = struct{}{}
			continue
		}
		k := chunkKey{p, dim}
		if _, ok := pf.queued[k]; !ok {
			pf.queued[k] = struct{}{}
			fresh = append(fresh, p)
			if next != nil {
				next[p] = struct{}{}
			}
		}
	}
	if !paced {
		t.predicted, t.spare, t.predGen = next, t.predicted, gen
	}
	pf.mu.Unlock()
	dropped := len(preds) - len(fresh)
	now, every := time.Now(), time.Second/time.Duration(pf.opts.TeleportRate)
	var later []pending
	if paced && len(fresh) > teleportBurst {
		later = make([]pending, 0, len(fresh)-teleportBurst+1)
	}
	full := fresh[:0]
	for i, p := range fresh {
		j := job{pos: p, dim: dim, gen: gen, view: paced, id: id}
		if paced && i >= teleportBurst {
			later = append(later, pending{j, now.Add(time.Duration(i-teleportBurst+1) * every)})
			continue
		}
		select {
		case pf.queue <- j:
		default: // over budget: never block the caller
			if paced {
				later = append(later, pending{j, now})
			} else {
				full = append(full, p)
			}
		}
	}
	if len(full) > 0 || len(later) > 0 {
		pf.mu.Lock()
		n := min(len(later), maxBacklog-len(pf.backlog))
		for _, l := range later[n:] {
			full = append(full, l.pos)
		}
		switch {
		case n == 0:
		case len(pf.backlog) == 0:
			pf.backlog = later[:n] // by time due already
		default:
			sorted := !later[0].due.Before(pf.backlog[len(pf.backlog)-1].due)
			pf.backlog = append(pf.backlog, later[:n]...)
			if !sorted { // another teleport's, due later
				slices.SortStableFunc(pf.backlog, func(a, b pending) int { return a.due.Compare(b.due) })
			}
		}
		for _, p := range full {
			delete(pf.queued, chunkKey{p, dim})
			if !paced {
				delete(t.predicted, p)
			}
		}
		pf.mu.Unlock()
		if n > 0 {
			select {
			case pf.kick <- struct{}{}:
			default:
			}
		}
	}
	pf.predicted.Add(int64(len(fresh) - len(full)))
	pf.dropped.Add(int64(dropped + len(full)))
}

// maxBacklog caps the backlog: a view of radius 32 holds 3,305 chunks.
const maxBacklog = 4096

// teleportBurst is how many chunks of a teleport's view are queued at
// once, nearest first: what the World loads in its first eight ticks
// there. The rest follow at the TeleportRate, so that the whole view's
// ready copies (225 columns at a radius of 8) never wait in the cache at
// once, crowding out what it holds for other players (a segmented world's
// regions have 8 MiB each).
const teleportBurst = 32

// pending is a job in the backlog and when it is due in the queue.
type pending struct {
	job
	due time.Time
}

// feeder moves backlog jobs to the queue as they fall due.
func (pf *Prefetcher) feeder() {
	defer pf.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-pf.stop:
			timer.Stop()
			return
		case <-pf.kick:
		case <-timer.C:
		}
		if next := pf.feedBacklog(time.Now()); !next.IsZero() {
			timer.Reset(time.Until(next))
		}
	}
}

// feedBacklog moves the backlog's jobs due by now to the queue while it
// has room, and returns when the next one falls due: zero if none waits
// for its time (the workers feed the rest as they free room).
func (pf *Prefetcher) feedBacklog(now time.Time) time.Time {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	i := 0
moving:
	for ; i < len(pf.backlog) && !pf.backlog[i].due.After(now); i++ {
		select {
		case pf.queue <- pf.backlog[i].job:
		default:
			break moving
		}
	}
	pf.backlog = pf.backlog[i:]
	if len(pf.backlog) == 0 {
		pf.backlog = nil
	}
	for _, p := range pf.backlog {
		if p.due.After(now) {
			return p.due
		}
	}
	return time.Time{}
}

// dropBacklogLocked drops player id's jobs from the backlog: a new
// teleport or the player's leaving makes them stale. pf.mu must be held.
func (pf *Prefetcher) dropBacklogLocked(id uuid.UUID) {
	pf.backlog = slices.DeleteFunc(pf.backlog, func(j pending) bool {
		if j.id != id {
			return false
		}
		delete(pf.queued, chunkKey{j.pos, j.dim})
		pf.dropped.Add(1)
		return true
	})
}
