package overlay

import (
	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// Extra records (provider/extrarecords.go) read as columns do: the
// overlay's where it holds some, the template's otherwise (when the
// template carries them: a LevelDB template does not). Writes go to the
// overlay only, and a reset forgets them with the match.

var _ provider.ExtraCarrier = (*Provider)(nil)

// ColumnExtras returns the overlay's extra records of the column at pos in
// dim, or the template's when the overlay holds none.
func (p *Provider) ColumnExtras(pos world.ChunkPos, dim world.Dimension) ([]provider.ExtraRecord, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return nil, blazedb.ErrClosed
	}
	recs, err := p.cur.ColumnExtras(pos, dim)
	if err != nil || len(recs) > 0 {
		return recs, err
	}
	if t, ok := p.template.(provider.ExtraCarrier); ok {
		return t.ColumnExtras(pos, dim)
	}
	return nil, nil
}

// SetColumnExtras writes to the overlay only.
func (p *Provider) SetColumnExtras(pos world.ChunkPos, dim world.Dimension, recs []provider.ExtraRecord) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return blazedb.ErrClosed
	}
	return p.cur.SetColumnExtras(pos, dim, recs)
}

// WorldExtras calls fn with the overlay's world records, then with the
// template's whose keys the overlay does not hold.
func (p *Provider) WorldExtras(fn func(provider.ExtraRecord) error) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return blazedb.ErrClosed
	}
	own := map[string]bool{}
	err := p.cur.WorldExtras(func(r provider.ExtraRecord) error {
		own[string(r.Key)] = true
		return fn(r)
	})
	if err != nil {
		return err
	}
	t, ok := p.template.(provider.ExtraCarrier)
	if !ok {
		return nil
	}
	return t.WorldExtras(func(r provider.ExtraRecord) error {
		if own[string(r.Key)] {
			return nil
		}
		return fn(r)
	})
}

// SetWorldExtra writes to the overlay only.
func (p *Provider) SetWorldExtra(r provider.ExtraRecord) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return blazedb.ErrClosed
	}
	return p.cur.SetWorldExtra(r)
}
