package overlay

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/google/uuid"
)

// Config holds the optional parameters of an overlay. The zero value works.
// Open takes it by value and never modifies it, so one Config may be used
// from several goroutines at once.
type Config struct {
	// Log receives errors. Default slog.Default().
	Log *slog.Logger
	// Durability of the overlay's writes. Default blazedb.DurabilityBalanced.
	Durability blazedb.Durability
	// CacheBytes and ColumnCacheBytes are the overlay's own caches: by
	// default the engine cache is off (the column cache already serves hot
	// loads) and the column cache holds 4 MiB, because the template's
	// caches are shared by every overlay on it. Negative disables them.
	CacheBytes, ColumnCacheBytes int64
	// FS is the filesystem. Default the operating system's.
	FS vfs.FS
	// KeepMatch makes Open fail with ErrStale where it would forget the
	// match: when the template's edition is not the one the overlay's
	// changes were made on, CURRENT is damaged or was cut short by a crash
	// during a reset, or the match's generation is damaged; nothing is
	// deleted then. For tools that must not lose a match (blaze promote).
	KeepMatch bool
}

// Provider is a world.Provider made of a template and an overlay. It is
// safe for concurrent use; ResetOverlay waits for calls in progress.
type Provider struct {
	conf     Config
	dir      string
	template world.Provider
	lock     io.Closer // dir/LOCK, held until Shutdown

	// resetMu serialises ResetOverlay and Shutdown; it is held across their
	// file work, which mu never is.
	resetMu sync.Mutex

	// commit records which generation CURRENT names and whether durably
	// (commit.go). commitMu guards it and is never held across I/O; syncMu
	// serialises the syncs of CURRENT and is held across them. syncMu
	// comes before commitMu.
	commitMu sync.Mutex
	commit   commitState
	syncMu   sync.Mutex

	// pinMu guards pins, the Pin calls not yet undone (prefetch.go). It
	// comes after resetMu and before mu.
	pinMu sync.Mutex
	pins  map[pinKey]int

	mu      sync.RWMutex // guards gen, cur, reg and lastSet; held only to read or swap them
	gen     int
	cur     *provider.DB
	reg     world.BlockRegistry
	lastSet *world.Settings // the settings of the generation Close closed

	// The spare generation and the deletion of old ones run in the
	// background; their errors are returned by the next ResetOverlay or
	// Close.
	bg struct {
		sync.Mutex
		wg    sync.WaitGroup
		spare chan spareGen // holds at most one prepared generation
		err   error
	}
}

var _ world.Provider = (*Provider)(nil)

// Open opens (or creates) the overlay in dir over template. The template is
// only read; closing the overlay does not close it. When the template's
// edition is not the one the overlay's changes were made on, Open forgets
// them, as ResetOverlay would (see the package doc). A closed overlay of
// this process that still holds dir is taken over (shut down); an open one
// makes Open fail with blazedb.ErrLocked (holder.go).
func (c Config) Open(template world.Provider, dir string) (*Provider, error) {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.FS == nil {
		c.FS = vfs.Default
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = -1 // the column cache serves hot loads; no second copy
	}
	if c.ColumnCacheBytes == 0 {
		c.ColumnCacheBytes = 4 << 20
	}
	p := &Provider{conf: c, dir: dir, template: template, pins: map[pinKey]int{}}
	p.bg.spare = make(chan spareGen, 1)
	if err := vfs.MkdirAll(c.FS, dir); err != nil {
		return nil, fmt.Errorf("overlay: open %s: %w", dir, err)
	}
	if err := p.lockDir(); err != nil {
		return nil, fmt.Errorf("overlay: open %s: %w", dir, err)
	}
	if err := p.open(); err != nil {
		p.lock.Close()
		return nil, fmt.Errorf("overlay: open %s: %w", dir, err)
	}
	p.prepareSpare(p.gen + 1)
	p.hold()
	return p, nil
}

func (p *Provider) takeBackgroundErr() error {
	p.bg.Lock()
	defer p.bg.Unlock()
	err := p.bg.err
	p.bg.err = nil
	return err
}

func (p *Provider) open() error {
	fs := p.conf.FS
	var cur current
	cutShort := false // CURRENT was cut short by a crash during a reset
	b, err := vfs.ReadFile(fs, filepath.Join(p.dir, currentName))
	switch {
	case errors.Is(err, vfs.ErrNotExist):
	case err != nil:
		return err
	case len(b) == 0 || b[len(b)-1] != '\n':
		// A reset renamed it into place, and the crash came before its
		// data was durable (commit.go): the reset is completed, from the
		// newest generation.
		if p.conf.KeepMatch {
			return fmt.Errorf("%w: CURRENT was cut short during a reset", ErrStale)
		}
		cutShort = true
		if cur.gen, err = p.newestGeneration(); err != nil {
			return err
		}
		p.conf.Log.Warn("overlay: a crash cut CURRENT short during a reset; completing the reset",
			"dir", p.dir, "current", string(b))
	default:
		cur, err = parseCurrent(b)
		switch {
		case errors.Is(err, blazedb.ErrVersion):
			return err
		case err == nil:
			// What was read may be a reset's rename a killed process left
			// unsynced: made durable before anything is built on it, or a
			// power cut could take it back from under writes Sync promised.
			if err := p.syncCurrent(); err != nil {
				return err
			}
		default:
			// Damage: which generation the match is in, and which template
			// it began on, are unknown. An arena is disposable, so it is
			// reset, loudly, rather than refused: a server must start.
			if p.conf.KeepMatch {
				return fmt.Errorf("%w: CURRENT is damaged: %w", ErrStale, err)
			}
			cutShort = true
			if cur.gen, err = p.newestGeneration(); err != nil {
				return err
			}
			p.conf.Log.Error("overlay: CURRENT is damaged; forgetting the match (a reset)",
				"dir", p.dir, "current", string(b))
		}
	}
	if err := p.removeGenerationsBut(cur.gen); err != nil {
		return err
	}
	tmpl := p.templateEdition()
	if cur.gen != 0 && !cutShort && cur.template == tmpl {
		db, err := p.openGeneration(cur.gen, false, p.reg)
		if err == nil {
			p.gen, p.cur = cur.gen, db
			p.commitDurable(cur.gen)
			return nil
		}
		if !errors.Is(err, blazedb.ErrCorrupt) {
			return err
		}
		if p.conf.KeepMatch {
			return fmt.Errorf("%w: the match's generation %d is damaged: %w", ErrStale, cur.gen, err)
		}
		// The match's generation does not open whole (durable data lost,
		// its log's header destroyed): as for a damaged CURRENT, the arena
		// is reset, loudly, rather than refused.
		p.conf.Log.Error("overlay: the match's generation is damaged; forgetting the match (a reset)",
			"dir", p.dir, "generation", cur.gen, "err", err)
		cutShort = true
	}
	if cur.gen != 0 && !cutShort {
		// The changes were made on another template, or on this one before
		// it changed: over it they would show the old map through the new.
		if p.conf.KeepMatch {
			return fmt.Errorf("%w: the changes were made on a template of edition %s; this one is %s", ErrStale, editionText(cur.template), editionText(tmpl))
		}
		p.conf.Log.Warn("overlay: the template changed since the overlay's changes were made; forgetting them",
			"dir", p.dir, "generation", cur.gen, "was", editionText(cur.template), "now", editionText(tmpl))
	}
	// A new overlay, a stale one or a reset to complete: a fresh
	// generation, committed durably. The one it replaces is deleted in the
	// background (or by the next Open).
	n := cur.gen + 1
	db, err := p.openGeneration(n, true, p.reg)
	if err != nil {
		return err
	}
	commit := encodeCurrent(n, tmpl)
	if err := vfs.ReplaceFile(p.conf.FS, p.dir, currentName, commit); err != nil {
		db.Close()
		return err
	}
	p.commitDurable(n)
	if cur.gen != 0 {
		p.discard(cur.gen, nil)
	}
	p.gen, p.cur = n, db
	return nil
}

// templateEdition returns the edition of the template's columns, zero for
// a template that has none (one that is not a Blaze world).
func (p *Provider) templateEdition() provider.Edition {
	if t, ok := p.template.(interface{ Edition() provider.Edition }); ok {
		return t.Edition()
	}
	return provider.Edition{}
}

// ResetOverlay forgets every change made through the overlay: columns,
// settings and player spawns. Its cost does not depend on how much changed
// or how large the map is. Close every World using the overlay first; a
// Dragonfly World closes its provider when it closes, so ResetOverlay also
// works on a closed overlay, which it leaves open on the fresh generation:
//
//	w.Close()          // the match ends: saves into the overlay, closes it
//	o.ResetOverlay()   // forget the match; o is open again
//	w = world.Config{Provider: o, ...}.New() // the next match
//
// An error saying "reset done" reports background work that had failed
// before: the reset stands. Any other error leaves the match in place.
func (p *Provider) ResetOverlay() error {
	p.resetMu.Lock()
	defer p.resetMu.Unlock()
	spare, err := p.takeSpare()
	if errors.Is(spare.err, ErrShutdown) {
		p.bg.spare <- spare // stays shut down
		return fmt.Errorf("overlay: reset %s: %w", p.dir, errors.Join(spare.err, p.takeBackgroundErr()))
	}
	if err != nil {
		p.mu.RLock()
		p.prepareSpare(spare.n) // try again next time
		p.mu.RUnlock()
		return fmt.Errorf("overlay: reset %s: %w", p.dir, errors.Join(err, p.takeBackgroundErr()))
	}
	p.pinMu.Lock() // no Pin or Unpin until the spare, pinned too, takes over
	defer p.pinMu.Unlock()
	if err := p.pinSpare(spare); err != nil {
		p.bg.spare <- spare
		return fmt.Errorf("overlay: reset %s: %w", p.dir, err)
	}
	// The commit point, made durable in the background (commit.go); calls
	// on the overlay go on meanwhile.
	if err := p.writeCommit(encodeCurrent(spare.n, p.templateEdition())); err != nil {
		p.unpinSpare(spare)
		p.bg.spare <- spare // not committed: the spare stays spare
		return fmt.Errorf("overlay: reset %s: commit generation %d: %w", p.dir, spare.n, err)
	}
	p.commitMade(spare.n)
	p.mu.Lock()
	if p.reg != nil {
		spare.db.SetBlockRegistry(p.reg)
	}
	old, oldGen := p.cur, p.gen
	p.gen, p.cur = spare.n, spare.db
	p.prepareSpare(spare.n + 1)
	p.mu.Unlock()
	p.discard(oldGen, old) // old is nil when a World already closed the overlay
	if err := p.takeBackgroundErr(); err != nil {
		return fmt.Errorf("overlay: reset %s: reset done, but earlier background work failed: %w", p.dir, err)
	}
	return nil
}

// DirtyChunk is a column that differs from the template: a plain value,
// safe to copy and to use from any goroutine.
type DirtyChunk struct {
	Pos world.ChunkPos
	Dim world.Dimension
}

// Dirty lists the columns stored through the overlay since the last reset,
// so a caller can restore only those.
func (p *Provider) Dirty() ([]DirtyChunk, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return nil, blazedb.ErrClosed
	}
	// Columns, not the engine's keys: it counts the stores still queued.
	places, err := p.cur.Columns()
	if err != nil {
		return nil, err
	}
	out := make([]DirtyChunk, 0, len(places))
	for _, pl := range places {
		out = append(out, DirtyChunk{Pos: pl.Pos, Dim: pl.Dim})
	}
	return out, nil
}

// SetBlockRegistry passes the registry to the overlay (and to the template
// when it takes one).
func (p *Provider) SetBlockRegistry(br world.BlockRegistry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reg = br
	if p.cur != nil {
		p.cur.SetBlockRegistry(br)
	}
	if t, ok := p.template.(interface{ SetBlockRegistry(world.BlockRegistry) }); ok {
		t.SetBlockRegistry(br)
	}
}

// Settings returns the overlay's settings: the template's, copied into the
// overlay when its generation began, unless the match saved its own. The
// pointer is the same for the life of a generation.
//
// On a closed overlay (between a World's Close and ResetOverlay) it returns
// the closed generation's settings; they are no longer saved.
func (p *Provider) Settings() *world.Settings {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return p.lastSet
	}
	return p.cur.Settings()
}

// SaveSettings saves settings into the overlay only; on a closed overlay it
// does nothing.
func (p *Provider) SaveSettings(s *world.Settings) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur != nil {
		p.cur.SaveSettings(s)
	}
}

// LoadColumn reads the overlay, then the template. The caller owns the
// column either way.
func (p *Provider) LoadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return nil, blazedb.ErrClosed
	}
	// Most loads are of columns the match has not changed: the overlay's
	// index, in memory, tells so without a load that fails.
	switch changed, err := p.changed(pos, dim); {
	case err != nil:
		return nil, fmt.Errorf("overlay: load column %v (%v): %w", pos, dim, err)
	case changed:
		return p.cur.LoadColumn(pos, dim)
	}
	return p.template.LoadColumn(pos, dim)
}

// changed reports whether the overlay holds the column at pos, from memory
// alone. p.mu must be held, with p.cur open.
func (p *Provider) changed(pos world.ChunkPos, dim world.Dimension) (bool, error) {
	return p.cur.Has(pos, dim) // a store still queued too
}

// StoreColumn writes to the overlay only.
func (p *Provider) StoreColumn(pos world.ChunkPos, dim world.Dimension, col *chunk.Column) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return blazedb.ErrClosed
	}
	return p.cur.StoreColumn(pos, dim, col)
}

// Sync makes every change made through the overlay so far (columns and
// player spawns) durable, whatever the durability mode, as
// provider.DB.Sync does.
func (p *Provider) Sync() error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return fmt.Errorf("overlay: sync %s: %w", p.dir, blazedb.ErrClosed)
	}
	if err := p.syncCommit(); err != nil { // the last reset too
		return fmt.Errorf("overlay: sync %s: %w", p.dir, err)
	}
	return p.cur.Sync()
}

// LoadPlayerSpawnPosition reads spawns saved during the match.
func (p *Provider) LoadPlayerSpawnPosition(id uuid.UUID) (cube.Pos, bool, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return cube.Pos{}, false, blazedb.ErrClosed
	}
	return p.cur.LoadPlayerSpawnPosition(id)
}

// SavePlayerSpawnPosition saves a spawn into the overlay.
func (p *Provider) SavePlayerSpawnPosition(id uuid.UUID, pos cube.Pos) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.cur == nil {
		return blazedb.ErrClosed
	}
	return p.cur.SavePlayerSpawnPosition(id, pos)
}

// Close closes the overlay's current generation (never the template). It
// is idempotent, and ResetOverlay opens the overlay again. The arena stays
// reserved (dir/LOCK), its spare generation ready, until Shutdown, or
// until a new Open of its directory in this process takes it over: that
// Open shuts the closed overlay down, and its ResetOverlay then returns
// ErrShutdown (holder.go).
func (p *Provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return p.takeBackgroundErr()
	}
	p.lastSet = p.cur.Settings()
	err := errors.Join(p.syncCommit(), p.cur.Close())
	p.cur = nil
	return errors.Join(err, p.takeBackgroundErr())
}

// Shutdown closes the overlay for good: it also waits for background work,
// deletes the prepared spare generation and releases the pins it holds in
// the template. Use it when the arena is
// retired; Close (which a World calls) keeps the spare for the next reset.
func (p *Provider) Shutdown() error {
	p.resetMu.Lock()
	defer p.resetMu.Unlock()
	return p.shutdown(ErrShutdown)
}

// shutdown is Shutdown with p.resetMu held; why, which wraps ErrShutdown,
// is what a later ResetOverlay returns.
func (p *Provider) shutdown(why error) error {
	err := p.Close()
	p.pinMu.Lock()
	p.unpinTemplate()
	p.pinMu.Unlock()
	spare := <-p.bg.spare
	if errors.Is(spare.err, ErrShutdown) {
		p.bg.spare <- spare
		return err // already shut down; err holds what a takeover left to report
	}
	if spare.db != nil {
		err = errors.Join(err, spare.db.Discard())
	}
	p.bg.wg.Wait()
	err = errors.Join(err, vfs.RemoveAll(p.conf.FS, filepath.Join(p.dir, genName(spare.n))), p.takeBackgroundErr())
	p.bg.spare <- spareGen{n: spare.n, err: why}
	err = errors.Join(err, p.lock.Close())
	p.unhold() // after the lock is released: an Open that found p retries it
	return err
}
