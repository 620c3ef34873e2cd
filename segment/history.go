package segment

import (
	"errors"
	"fmt"
	"sync"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

// History across regions (issue 36). Each region's engine and the root's
// keep their own history; they share no sequence of writes, so a
// segmented world's points are names and times only:
//
//   - A snapshot is a snapshot of the same name in every region on disk
//     and, last, in the root: the root's is the commit, and Snapshots lists
//     the root's. Regions are snapshotted one after another (each opened
//     for it), not at one instant: take one while stores pause, after
//     World.Save. A region made after the snapshot lacks it, and reads as
//     missing at it, as it was. A snapshot a cut-short Snapshot left in a
//     region (without the root's) is replaced by the next Snapshot of
//     that name.
//   - A time is each region's own (blazedb.DB.SeqAt), the hosts' clock
//     being the one clock they share.
//   - A View holds each region it has read open until it is closed, and
//     the root's View for the player spawns and settings.
//   - A region deleted (DeleteSegmentFor) takes its history with it: a
//     View of a point before then reads its columns as missing.

// Snapshot names the present state of every region and the root (see
// provider.DB.Snapshot). A name taken gives an error wrapping
// blazedb.ErrExists.
func (p *Provider) Snapshot(name string) error {
	if err := p.snapshot(name); err != nil {
		return fmt.Errorf("segment: snapshot %q: %w", name, err)
	}
	return nil
}

func (p *Provider) snapshot(name string) error {
	ss, err := p.meta.Snapshots()
	if err != nil {
		return err
	}
	for _, s := range ss {
		if s.Name == name {
			return blazedb.ErrExists
		}
	}
	err = p.eachRegion(func(_ segKey, db *provider.DB) error {
		err := db.Snapshot(name)
		if errors.Is(err, blazedb.ErrExists) {
			// Left by a Snapshot cut short before the root's: stale.
			if err = db.DeleteSnapshot(name); err == nil {
				err = db.Snapshot(name)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	return p.meta.Snapshot(name)
}

// Snapshots lists the snapshots, oldest first; Seq is the root's.
func (p *Provider) Snapshots() ([]provider.SnapshotInfo, error) { return p.meta.Snapshots() }

// DeleteSnapshot deletes a snapshot from the root, then from every
// region. A missing name gives an error wrapping blazedb.ErrNotFound.
func (p *Provider) DeleteSnapshot(name string) error {
	if err := p.meta.DeleteSnapshot(name); err != nil {
		return fmt.Errorf("segment: %w", err)
	}
	err := p.eachRegion(func(_ segKey, db *provider.DB) error {
		if err := db.DeleteSnapshot(name); err != nil && !errors.Is(err, blazedb.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("segment: delete snapshot %q: %w", name, err)
	}
	return nil
}

// ChangedSince returns where the columns changed after point are, region
// by region: in a region made after the point, all of its columns.
func (p *Provider) ChangedSince(point string) ([]provider.Place, error) {
	if err := p.checkPoint(point); err != nil {
		return nil, fmt.Errorf("segment: changed since %q: %w", point, err)
	}
	var out []provider.Place
	err := p.eachRegion(func(_ segKey, db *provider.DB) error {
		places, err := db.ChangedSince(point)
		if errors.Is(err, provider.ErrPoint) {
			places, err = db.Columns() // the region lacks the snapshot: made after it
		}
		out = append(out, places...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("segment: changed since %q: %w", point, err)
	}
	return out, nil
}

// Revert puts the columns changed since point back as they were, region
// by region (see provider.DB.Revert): in a region made after the point,
// its columns are removed. It returns the number of columns written or
// removed. For a world no World has open (blaze rollback).
func (p *Provider) Revert(point string, in func(provider.Place) bool) (int, error) {
	if err := p.checkPoint(point); err != nil {
		return 0, fmt.Errorf("segment: revert to %q: %w", point, err)
	}
	n := 0
	err := p.eachRegion(func(k segKey, db *provider.DB) error {
		m, err := db.Revert(point, in)
		if errors.Is(err, provider.ErrPoint) {
			m, err = db.Clear(in) // the region lacks the snapshot: made after it
		}
		n += m
		p.eds.note(k, db) // a revert that changed a column gave the region a new edition
		return err
	})
	if err != nil {
		return n, fmt.Errorf("segment: revert to %q: %w", point, err)
	}
	return n, nil
}

// checkPoint checks that point reads in the root, whose snapshots are the
// segmented world's.
func (p *Provider) checkPoint(point string) error {
	v, err := p.meta.At(point)
	if err != nil {
		return err
	}
	return v.Close()
}

// eachRegion calls f with each region on disk, open for the call.
func (p *Provider) eachRegion(f func(segKey, *provider.DB) error) error {
	for dim := int32(0); dim < 3; dim++ {
		keys, err := p.onDisk(dim)
		if err != nil {
			return err
		}
		for _, k := range keys {
			s, err := p.acquire(k, false)
			if errors.Is(err, leveldb.ErrNotFound) {
				continue // deleted meanwhile
			}
			if err != nil {
				return err
			}
			err = f(k, s.db)
			p.release(s)
			if err != nil {
				return fmt.Errorf("region %s: %w", segName(k), err)
			}
		}
	}
	return nil
}

// View is a read-only world.Provider of a segmented world as it was at a
// point (see provider.View and the history notes above). It is safe for
// concurrent use; close it when done (a World closes its provider).
type View struct {
	p     *Provider
	point string
	root  *provider.View

	mu      sync.Mutex
	regions map[segKey]*regionView
	closed  bool
}

// regionView is a region a View has read: held open, with its View, or
// missing at the point (nil v).
type regionView struct {
	s *seg
	v *provider.View
}

var _ world.Provider = (*View)(nil)

// At opens a View of the segmented world at point: a snapshot's name or
// an RFC 3339 time.
func (p *Provider) At(point string) (*View, error) {
	root, err := p.meta.At(point)
	if err != nil {
		return nil, fmt.Errorf("segment: %w", err)
	}
	return &View{p: p, point: point, root: root, regions: map[segKey]*regionView{}}, nil
}

// region returns the region view of k, opening it on first use.
func (v *View) region(k segKey) (*regionView, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, blazedb.ErrClosed
	}
	if r, ok := v.regions[k]; ok {
		return r, nil
	}
	s, err := v.p.acquire(k, false)
	if errors.Is(err, leveldb.ErrNotFound) {
		r := &regionView{}
		v.regions[k] = r
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	rv, err := s.db.At(v.point)
	if errors.Is(err, provider.ErrPoint) {
		// The region lacks the snapshot: made after it.
		v.p.release(s)
		r := &regionView{}
		v.regions[k] = r
		return r, nil
	}
	if err != nil {
		v.p.release(s)
		return nil, err
	}
	r := &regionView{s: s, v: rv}
	v.regions[k] = r
	return r, nil
}

// LoadColumn reads the column as it was at the View's point.
func (v *View) LoadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error) {
	k, err := v.p.keyFor(pos, dim)
	if err != nil {
		return nil, err
	}
	r, err := v.region(k)
	if err != nil {
		return nil, fmt.Errorf("load column %v (%v) at %q: %w", pos, dim, v.point, err)
	}
	if r.v == nil {
		return nil, fmt.Errorf("load column %v (%v) at %q: %w", pos, dim, v.point, leveldb.ErrNotFound)
	}
	return r.v.LoadColumn(pos, dim)
}

// StoreColumn fails with blazedb.ErrReadOnly.
func (v *View) StoreColumn(pos world.ChunkPos, dim world.Dimension, _ *chunk.Column) error {
	return fmt.Errorf("store column %v (%v): %w", pos, dim, blazedb.ErrReadOnly)
}

// SetBlockRegistry is the root View's and every region's (see
// provider.View.SetBlockRegistry).
func (v *View) SetBlockRegistry(br world.BlockRegistry) {
	v.root.SetBlockRegistry(br)
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, r := range v.regions {
		if r.v != nil {
			r.v.SetBlockRegistry(br)
		}
	}
}

// Settings are the root View's (see provider.View.Settings).
func (v *View) Settings() *world.Settings { return v.root.Settings() }

// SaveSettings does nothing: a View is read-only.
func (v *View) SaveSettings(*world.Settings) {}

// LoadPlayerSpawnPosition returns the spawn player id had at the point.
func (v *View) LoadPlayerSpawnPosition(id uuid.UUID) (cube.Pos, bool, error) {
	return v.root.LoadPlayerSpawnPosition(id)
}

// SavePlayerSpawnPosition fails with blazedb.ErrReadOnly.
func (v *View) SavePlayerSpawnPosition(id uuid.UUID, pos cube.Pos) error {
	return v.root.SavePlayerSpawnPosition(id, pos)
}

// Close releases the regions the View held open. It is idempotent.
func (v *View) Close() error {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return nil
	}
	v.closed = true
	regions := v.regions
	v.regions = nil
	v.mu.Unlock()
	var errs []error
	for _, r := range regions {
		if r.v != nil {
			errs = append(errs, r.v.Close())
			v.p.release(r.s)
		}
	}
	errs = append(errs, v.root.Close())
	return errors.Join(errs...)
}
