package segment

import (
	"errors"
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

// Prefetching and pinning, as provider.DB offers them, over regions that
// open and close.
//
// The pins of a segmented world are counted here, by region and column,
// and each region's database holds one pin of every column pinned here:
// the first Pin of a column pins it in its region, if the region is open,
// and the last Unpin unpins it. A region that opens pins the columns
// counted for it when it opens, so the database and the count agree
// however Pin, Unpin and opening interleave: the open takes the count
// under p.mu when it puts its segment in the map, and a Pin or Unpin that
// comes after finds the segment and does its own part there. A region
// holding pins is never closed for being idle or to stay under MaxOpen;
// deleting it drops its pinned columns with the rest, and the pins apply
// again to the columns a region of that place holds later.

// Prefetch reads the column at pos into its region's column cache, with a
// ready copy for the next LoadColumn, as provider.DB.Prefetch does. It
// opens the region if it is closed, so a player crossing into a region
// does not wait for it to open either. A column of a region never written
// costs a look at the disk and no work (false, nil).
func (p *Provider) Prefetch(pos world.ChunkPos, dim world.Dimension) (bool, error) {
	k, err := p.keyFor(pos, dim)
	if err != nil {
		return false, err
	}
	s, err := p.acquire(k, false)
	if errors.Is(err, leveldb.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("segment: prefetch column %v (%v): %w", pos, dim, err)
	}
	defer p.release(s) // a prefetch is use to come: the region stays open
	return s.db.Prefetch(pos, dim)
}

// Pin keeps the column at pos in its region's cache until as many Unpin
// calls, and keeps the region open meanwhile (beyond MaxOpen if need be).
// A column not stored, or in a region not written yet, is pinned for when
// it is. If the column cannot be read, Pin returns the error and leaves
// nothing pinned; a Pin of a column whose first Pin is still reading it
// waits for that read and fails with it. Unpin undoes a Pin that has
// returned: a Pin and an Unpin of one column must not race.
func (p *Provider) Pin(pos world.ChunkPos, dim world.Dimension) error {
	k, err := p.keyFor(pos, dim)
	if err != nil {
		return err
	}
	pk := pinKey{k, pos}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return fmt.Errorf("segment: pin column %v (%v): %w", pos, dim, blazedb.ErrClosed)
	}
	if p.countPinLocked(k, pos, 1) > 1 {
		first := p.pinning[pk]
		if first != nil {
			first.waiters++
		}
		p.mu.Unlock()
		if first == nil {
			return nil // pinned in its region already, or by its next open
		}
		<-first.done
		return first.err // its count went with the first Pin's if that failed
	}
	first := &firstPin{done: make(chan struct{})}
	p.pinning[pk] = first
	err = p.pinFirst(k, pos, dim)
	p.mu.Lock()
	if err != nil {
		err = fmt.Errorf("segment: pin column %v (%v): %w", pos, dim, err)
		p.countPinLocked(k, pos, -1-first.waiters)
	}
	first.err = err
	delete(p.pinning, pk)
	p.mu.Unlock()
	close(first.done)
	return err
}

// pinFirst pins a column whose first pin p.mu has just counted, and unlocks
// p.mu.
func (p *Provider) pinFirst(k segKey, pos world.ChunkPos, dim world.Dimension) (err error) {
	if s, ok := p.segs[k]; ok && !s.closing {
		// Open (or opening, with a count taken before this one): pin here.
		s.users++
		p.mu.Unlock()
		<-s.ready
		if s.err == nil {
			err = s.db.Pin(pos, dim)
		} else {
			err = s.err
		}
		p.release(s)
		return err
	}
	// Closed or closing: the region's next open pins the column, as it is
	// counted now. Open it, so that the column is read now.
	p.mu.Unlock()
	s, err := p.acquire(k, false)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil // the region is not written yet
	} else if err != nil {
		return err
	}
	// The open could not pin an unreadable column: this read tells.
	if _, err = s.db.Prefetch(pos, dim); err != nil {
		s.db.Unpin(pos, dim) // in case the open's read went better
	}
	p.release(s)
	return err
}

// Unpin undoes one Pin.
func (p *Provider) Unpin(pos world.ChunkPos, dim world.Dimension) {
	k, err := p.keyFor(pos, dim)
	if err != nil {
		return
	}
	p.mu.Lock()
	s, open := p.segs[k]
	if p.countPinLocked(k, pos, -1) > 0 || !open || s.closing {
		p.mu.Unlock()
		return // still pinned, or its region's database is closing or closed
	}
	s.users++
	p.mu.Unlock()
	<-s.ready
	if s.db != nil {
		s.db.Unpin(pos, dim)
	}
	p.unpin(s) // not a use of the region
}

// pinKey names one column of one region.
type pinKey struct {
	k   segKey
	pos world.ChunkPos
}

// firstPin is a Pin that counted a column's first pin and is reading it.
// The Pins of the column counted meanwhile wait for done; waiters counts
// them, so that a failed read takes their counts back with its own, under
// p.mu, before any other Pin can count. err is the failed read's error.
// Both fields are written under p.mu; the waiters read err once done is
// closed.
type firstPin struct {
	done    chan struct{}
	waiters int
	err     error
}

// countPinLocked adds delta to the pins of pos in region k and returns the
// new count; it never goes below zero. p.mu must be held.
func (p *Provider) countPinLocked(k segKey, pos world.ChunkPos, delta int) int {
	m := p.pins[k]
	n := max(m[pos]+delta, 0)
	switch {
	case n > 0 && m == nil:
		m = map[world.ChunkPos]int{}
		p.pins[k] = m
		fallthrough
	case n > 0:
		m[pos] = n
	default:
		delete(m, pos)
		if len(m) == 0 {
			delete(p.pins, k)
		}
	}
	return n
}

// pinnedIn returns the columns pinned in region k. p.mu must be held.
func (p *Provider) pinnedIn(k segKey) []world.ChunkPos {
	var out []world.ChunkPos
	for pos := range p.pins[k] {
		out = append(out, pos)
	}
	return out
}

// applyPins pins the columns of pins in the region s has just opened. A
// column that cannot be read stays unpinned: a Pin that opened the region
// reads it again and reports the error, and the World's LoadColumn of it
// meets the same error.
func (p *Provider) applyPins(s *seg, pins []world.ChunkPos) {
	dim, _ := world.DimensionByID(int(s.key.dim))
	for _, pos := range pins {
		_ = s.db.Pin(pos, dim)
	}
}

// cacheCounts are the counters of a region's column cache.
type cacheCounts struct{ hits, misses, made, taken int64 }

func countsOf(db *provider.DB) cacheCounts {
	var c cacheCounts
	c.hits, c.misses = db.CacheStats()
	c.made, c.taken = db.ReadyStats()
	return c
}

func (c *cacheCounts) add(d cacheCounts) {
	c.hits, c.misses, c.made, c.taken = c.hits+d.hits, c.misses+d.misses, c.made+d.made, c.taken+d.taken
}

// noteClosedLocked keeps the counters of s's database, which is closed or
// about to be, as s leaves the map. p.mu must be held.
func (p *Provider) noteClosedLocked(s *seg) {
	if s.db != nil {
		p.closedCounts.add(countsOf(s.db))
	}
}

// counts sums the counters of every region since Open: those open now and
// those closed or deleted since.
func (p *Provider) counts() cacheCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.closedCounts
	for _, s := range p.segs {
		select {
		case <-s.ready: // s.db is set
			if s.db != nil {
				c.add(countsOf(s.db))
			}
		default: // still opening: nothing counted yet
		}
	}
	return c
}

// CacheStats reports hot and cold LoadColumn calls over every region since
// Open, as provider.DB.CacheStats does for one world: those served from a
// region's column cache and those that read its engine.
func (p *Provider) CacheStats() (hits, misses int64) {
	c := p.counts()
	return c.hits, c.misses
}

// ReadyStats reports how many ready copies Prefetch made over every region
// since Open, and how many a LoadColumn handed out, as
// provider.DB.ReadyStats does for one world.
func (p *Provider) ReadyStats() (made, taken int64) {
	c := p.counts()
	return c.made, c.taken
}
