package segment

import (
	"errors"
	"maps"
	"path"
	"slices"
	"strconv"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/goleveldb/leveldb"
)

// Shipping to a replica (package replica, issue 39): the replicator of a
// segmented world ships the root through Engine and each region through
// ShipRegions. The Provider remembers, from Open on, which closed regions
// were written to while last open (their last bytes may not have been
// shipped before they closed) and which were deleted, until ShipRegions
// has offered them.

// Engine returns the root's engine (settings, player spawns, the size of
// the regions), for a replicator: replica.StartSegmented.
func (p *Provider) Engine() *blazedb.DB { return p.meta.Engine() }

// ShipRegions calls ship, one region after another, for each region to
// ship now, with the region's directory relative to the world
// (slash-separated: regions/DIM/r.X.Z) and its engine, held open during
// the call: every open region; every closed one written to while it was
// last open and not offered since; and, with all, every region on disk.
// It first calls ship with a nil engine for each region deleted since the
// last call; a region deleted while ShipRegions runs is not offered until
// its deletion is. It stops at the first error ship returns, and the
// regions not shipped by then are offered again at the next call. A
// region it opens counts as not used, so it closes again soon. It is meant
// for one replicator: calls must not overlap.
func (p *Provider) ShipRegions(all bool, ship func(rel string, db *blazedb.DB) error) error {
	p.mu.Lock()
	deleted, written := p.shipDeleted, p.shipWritten
	p.shipDeleted, p.shipWritten = map[segKey]bool{}, map[segKey]bool{}
	todo := slices.Collect(maps.Keys(written))
	for k, s := range p.segs {
		if !s.closing {
			todo = append(todo, k)
		}
	}
	p.mu.Unlock()
	// What is not done goes back for the next call.
	failed := func(err error) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		for k := range deleted {
			p.shipDeleted[k] = true
		}
		for k := range written {
			p.shipWritten[k] = true
		}
		return err
	}
	if all {
		for dim := range int32(3) {
			keys, err := p.onDisk(dim)
			if err != nil {
				return failed(err)
			}
			todo = append(todo, keys...)
		}
	}
	order := func(a, b segKey) int {
		if a.dim != b.dim {
			return int(a.dim) - int(b.dim)
		}
		if a.rx != b.rx {
			return int(a.rx) - int(b.rx)
		}
		return int(a.rz) - int(b.rz)
	}
	for _, k := range slices.SortedFunc(maps.Keys(deleted), order) {
		if err := ship(regionRel(k), nil); err != nil {
			return failed(err)
		}
		delete(deleted, k)
	}
	slices.SortFunc(todo, order)
	for _, k := range slices.Compact(todo) {
		s, err := p.acquire(k, false)
		if errors.Is(err, leveldb.ErrNotFound) {
			delete(written, k) // deleted meanwhile: its mark follows
			continue
		}
		if err != nil {
			return failed(err)
		}
		p.mu.Lock()
		gone := p.shipDeleted[k] // deleted and made again meanwhile
		p.mu.Unlock()
		if !gone {
			err = ship(regionRel(k), s.db.Engine())
		}
		p.unpin(s) // shipping is not use
		if err != nil {
			return failed(err)
		}
		delete(written, k)
	}
	return nil
}

// regionRel is region k's directory relative to the world, slash-separated.
func regionRel(k segKey) string {
	return path.Join("regions", strconv.Itoa(int(k.dim)), segName(k))
}

// noteShipClosedLocked remembers that s, closed, was written to while it
// was open, for ShipRegions. p.mu must be held.
func (p *Provider) noteShipClosedLocked(s *seg) {
	if s.db != nil && s.db.Engine().Stats().Appends > 0 {
		p.shipWritten[s.key] = true
	}
}

// noteShipDeletedLocked remembers that region k was deleted, for
// ShipRegions. p.mu must be held.
func (p *Provider) noteShipDeletedLocked(k segKey) {
	delete(p.shipWritten, k)
	p.shipDeleted[k] = true
}
