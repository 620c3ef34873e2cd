package overlay

import (
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider"
)

// Promote writes every column the overlay changed into its template, as
// one crash-safe step (provider.DB.StoreColumns: one atomic, synced batch)
// that gives the template a new edition: after a crash the template holds
// all of the overlay's columns or none. Builders edit a map by playing in
// an arena and promote it when done. Other arenas over the template
// forget their matches at their next Open, as they do whenever the
// template changes; so does this one, whose columns are then the
// template's own. Settings and player spawns stay in the overlay.
//
// The template must be a provider.DB opened to write by this process,
// which then holds its lock alone (no other process has it open);
// anything else is refused with ErrPromote. Close the Worlds on other
// overlays over the template first: their matches would show the
// promoted columns in place of the template's from their next load on.
// Stores through this overlay wait until Promote returns.
func (p *Provider) Promote() error {
	t, ok := p.template.(*provider.DB)
	switch {
	case !ok:
		return fmt.Errorf("%w: the template is a %T, not a Blaze world (provider.DB)", ErrPromote, p.template)
	case t.ReadOnly():
		return fmt.Errorf("%w: the template is open read-only; open it to write in the promoting process, which then holds it alone", ErrPromote)
	}
	p.resetMu.Lock()
	defer p.resetMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return fmt.Errorf("overlay: promote %s: %w", p.dir, blazedb.ErrClosed)
	}
	// Columns writes the arena's queued stores first (the store queue of
	// issue 42): the engine alone would miss those acknowledged lately.
	places, err := p.cur.Columns()
	if err != nil {
		return fmt.Errorf("overlay: promote %s: %w", p.dir, err)
	}
	cols := make([]provider.ColumnAt, 0, len(places))
	for _, pl := range places {
		col, err := p.cur.LoadColumn(pl.Pos, pl.Dim)
		if err != nil {
			return fmt.Errorf("overlay: promote %s: %w", p.dir, err)
		}
		cols = append(cols, provider.ColumnAt{Pos: pl.Pos, Dim: pl.Dim, Col: col})
	}
	if err := t.StoreColumns(cols); err != nil {
		return fmt.Errorf("overlay: promote %s: %w", p.dir, err)
	}
	return nil
}
