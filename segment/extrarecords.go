package segment

import (
	"errors"
	"fmt"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

// A column's extra records (provider/extrarecords.go) live in the column's
// region, beside the column, so that they go with it when the region is
// compacted, backed up or deleted; the world's live in the root, with the
// settings and player spawns.

// ColumnExtras returns the extra records kept with the column at pos in
// dim; a region never written has none, and is not created.
func (p *Provider) ColumnExtras(pos world.ChunkPos, dim world.Dimension) ([]provider.ExtraRecord, error) {
	k, err := p.keyFor(pos, dim)
	if err != nil {
		return nil, err
	}
	s, err := p.acquire(k, false)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load extra records of column %v (%v): %w", pos, dim, err)
	}
	defer p.release(s)
	return s.db.ColumnExtras(pos, dim)
}

// SetColumnExtras replaces the extra records kept with the column at pos
// in dim, in its region, creating the region if needed.
func (p *Provider) SetColumnExtras(pos world.ChunkPos, dim world.Dimension, recs []provider.ExtraRecord) error {
	k, err := p.keyFor(pos, dim)
	if err != nil {
		return err
	}
	s, err := p.acquire(k, len(recs) > 0)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil // nothing to remove
	}
	if err != nil {
		return fmt.Errorf("store extra records of column %v (%v): %w", pos, dim, err)
	}
	defer p.release(s)
	return s.db.SetColumnExtras(pos, dim, recs)
}

// WorldExtras and SetWorldExtra are the root world's.
func (p *Provider) WorldExtras(fn func(provider.ExtraRecord) error) error {
	return p.meta.WorldExtras(fn)
}
func (p *Provider) SetWorldExtra(r provider.ExtraRecord) error { return p.meta.SetWorldExtra(r) }

var _ provider.ExtraCarrier = (*Provider)(nil)
