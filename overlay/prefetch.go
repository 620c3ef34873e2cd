package overlay

import (
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/world"
)

// Prefetching and pinning, as provider.DB offers them, over the overlay and
// its template, so that a prefetch.Prefetcher serves an arena.
//
// A column the match changed is read from the overlay, any other from the
// template, so a prefetch goes to whichever holds the column, and a pin
// goes to both: the template keeps the arena's map hot for every match and
// every overlay sharing it, the overlay keeps what the match changed. The
// pins are counted here as well, because a reset replaces the overlay's
// database: the new generation is pinned as the old one was before it
// takes over. A template that cannot prefetch or pin (a LevelDB world) is
// read as it comes.

// warmer is a template that can prefetch and pin: provider.DB and
// segment.Provider.
type warmer interface {
	Prefetch(pos world.ChunkPos, dim world.Dimension) (bool, error)
	Pin(pos world.ChunkPos, dim world.Dimension) error
	Unpin(pos world.ChunkPos, dim world.Dimension)
}

// pinKey is a pinned column.
type pinKey struct {
	pos world.ChunkPos
	dim world.Dimension
}

// Prefetch reads the column at pos into the cache of whichever holds it,
// the overlay or the template, with a ready copy for the next LoadColumn,
// as provider.DB.Prefetch does. It reports whether it did any work.
func (p *Provider) Prefetch(pos world.ChunkPos, dim world.Dimension) (bool, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return false, fmt.Errorf("overlay: prefetch column %v (%v): %w", pos, dim, blazedb.ErrClosed)
	}
	changed, err := p.changed(pos, dim)
	switch {
	case err != nil:
		return false, fmt.Errorf("overlay: prefetch column %v (%v): %w", pos, dim, err)
	case changed:
		return p.cur.Prefetch(pos, dim)
	}
	if t, ok := p.template.(warmer); ok {
		return t.Prefetch(pos, dim)
	}
	return false, nil
}

// Pin keeps the column at pos in the caches of the template and of the
// overlay until as many Unpin calls, across resets. A column not stored is
// pinned for when it is. If the column cannot be read, Pin returns the
// error and leaves nothing pinned. Shutdown releases the pins left.
func (p *Provider) Pin(pos world.ChunkPos, dim world.Dimension) error {
	p.pinMu.Lock()
	defer p.pinMu.Unlock()
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return fmt.Errorf("overlay: pin column %v (%v): %w", pos, dim, blazedb.ErrClosed)
	}
	if err := p.cur.Pin(pos, dim); err != nil {
		return fmt.Errorf("overlay: pin column %v (%v): %w", pos, dim, err)
	}
	if t, ok := p.template.(warmer); ok {
		if err := t.Pin(pos, dim); err != nil {
			p.cur.Unpin(pos, dim)
			return fmt.Errorf("overlay: pin column %v (%v) of the template: %w", pos, dim, err)
		}
	}
	p.pins[pinKey{pos, dim}]++
	return nil
}

// Unpin undoes one Pin.
func (p *Provider) Unpin(pos world.ChunkPos, dim world.Dimension) {
	p.pinMu.Lock()
	defer p.pinMu.Unlock()
	k := pinKey{pos, dim}
	if p.pins[k] == 0 {
		return
	}
	if p.pins[k]--; p.pins[k] == 0 {
		delete(p.pins, k)
	}
	p.mu.RLock()
	if p.cur != nil { // a closed generation's pins went with it
		p.cur.Unpin(pos, dim)
	}
	p.mu.RUnlock()
	if t, ok := p.template.(warmer); ok {
		t.Unpin(pos, dim)
	}
}

// pinSpare pins in the spare generation what is pinned now, before it
// takes over. It pins nothing if it fails. p.pinMu must be held.
func (p *Provider) pinSpare(s spareGen) error {
	var done []pinKey
	for k, n := range p.pins {
		for range n {
			if err := s.db.Pin(k.pos, k.dim); err != nil {
				for _, k := range done {
					s.db.Unpin(k.pos, k.dim)
				}
				return fmt.Errorf("pin column %v (%v) in generation %d: %w", k.pos, k.dim, s.n, err)
			}
			done = append(done, k)
		}
	}
	return nil
}

// unpinSpare undoes pinSpare. p.pinMu must be held.
func (p *Provider) unpinSpare(s spareGen) { p.unpinAll(s.db) }

// unpinTemplate releases the template's pins that Unpin has not, when the
// overlay shuts down: the template outlives it. p.pinMu must be held.
func (p *Provider) unpinTemplate() {
	if t, ok := p.template.(warmer); ok {
		p.unpinAll(t)
	}
	clear(p.pins)
}

// unpinAll undoes in w every pin counted. p.pinMu must be held.
func (p *Provider) unpinAll(w warmer) {
	for k, n := range p.pins {
		for range n {
			w.Unpin(k.pos, k.dim)
		}
	}
}
