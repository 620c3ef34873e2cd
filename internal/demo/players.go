package demo

import (
	"errors"
	"fmt"
	"sync"

	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/player/playerdb"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/google/uuid"
)

// playersDir is the directory of the world's directory that holds the
// players' data (Dragonfly's playerdb: inventories, positions, game modes).
const playersDir = "players"

// players is Dragonfly's player database (playerdb, a LevelDB database in
// the world's players directory) behind a lock, so that a backup can copy
// it while nothing is written to it: CopyTo closes the database, copies its
// files and opens it again, and saves and loads wait meanwhile. It is the
// server's player.Provider. Safe for concurrent use.
type players struct {
	dir string

	mu     sync.RWMutex // write-held by CopyTo and Close
	db     *playerdb.Provider
	err    error // why db is nil while the server runs: it could not be opened again after a copy
	closed bool
}

func openPlayers(dir string) (*players, error) {
	db, err := playerdb.NewProvider(dir)
	if err != nil {
		return nil, fmt.Errorf("open the player database %s: %w", dir, err)
	}
	return &players{dir: dir, db: db}, nil
}

// Save stores player id's data, as Dragonfly does when the player leaves.
func (p *players) Save(id uuid.UUID, d player.Config, w *world.World) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.db == nil {
		return p.unavailable()
	}
	return p.db.Save(id, d, w)
}

// Load reads player id's data, as Dragonfly does when the player joins.
func (p *players) Load(id uuid.UUID, dim func(world.Dimension) *world.World) (player.Config, *world.World, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.db == nil {
		return player.Config{}, nil, p.unavailable()
	}
	return p.db.Load(id, dim)
}

func (p *players) unavailable() error {
	if p.closed {
		return errPlayersClosed
	}
	return p.err
}

// Close closes the database, as Dragonfly does when the server closes.
// Later calls return nil, and CopyTo fails.
func (p *players) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	if p.db == nil {
		return nil
	}
	err := p.db.Close()
	p.db = nil
	return err
}

// CopyTo copies the player database to the new directory dst, durably. The
// database is closed for the copy: no save is half done, LevelDB's journal
// is flushed and its compactions have stopped, so the copy is the database
// as a clean shutdown leaves it, holding every save that returned before
// CopyTo began. Saves and loads wait until it is open again. If it cannot
// be opened again, every save and load fails with the reason (Dragonfly
// logs a save that fails), and CopyTo returns it.
func (p *players) CopyTo(dst string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errPlayersClosed
	}
	if p.db == nil { // the last copy could not open it again: try now
		if err := p.reopen(); err != nil {
			return err
		}
	}
	if err := p.db.Close(); err != nil {
		p.db = nil
		err = fmt.Errorf("the player database was closed for a backup, which failed: %w", err)
		return errors.Join(err, p.reopen())
	}
	p.db = nil
	cerr := fsutil.SyncedCopyTree(p.dir, dst)
	if cerr != nil {
		cerr = fmt.Errorf("copy the player database: %w", cerr)
	}
	return errors.Join(cerr, p.reopen())
}

// reopen opens the database again after CopyTo closed it. Called with mu
// held.
func (p *players) reopen() error {
	db, err := playerdb.NewProvider(p.dir)
	if err != nil {
		p.err = fmt.Errorf("the player database could not be opened again after a backup copied it: %w", err)
		return p.err
	}
	p.db, p.err = db, nil
	return nil
}
