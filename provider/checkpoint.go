package provider

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/world"
)

// A checkpoint saves every world of a server and every online player's
// data in one atomic engine batch, so that after a crash either all of it
// is there or none of it, and the chunks and the players in it are of one
// moment: items a player took from a chest are in the chest or in the
// player's inventory, exactly once (the "crash dupe" of saving the two
// apart).
//
// Dragonfly v0.11.2 saves a world's chunks in one transaction of its own
// (World.Save), which no caller can join: a player's data read in another
// transaction, before or after it, is of another moment, and a tick
// between the two can move items across. So Checkpoint reads each world's
// players inside that transaction: it finds them first, in a transaction of
// its own, and the last call Dragonfly makes in World.Save, SaveSettings,
// reads their data while the world is still held. A transaction after it
// checks that the world still holds the same players (none joined, left or
// changed dimension in between), or the world is saved again.
//
// While a checkpoint is gathered (checkpointGate), every column a World
// stores and every player's data saved goes into its batch instead of the
// engine: the batch is the one place a newer write can be, so that none is
// overwritten by an older one, and loads see the columns through the
// column cache as always. Applying the batch holds back every other write
// of the DB, and returns once it is durable (blazedb.Batch.Sync).

// checkpointTries is how many times Checkpoint saves a world whose players
// changed while it was saved.
const checkpointTries = 5

// checkpointMu lets one Checkpoint run at a time in the process.
var checkpointMu sync.Mutex

// playerDBs are the DBs whose Players() a server may use, the ones
// Checkpoint gathers into: Players adds its DB, the provider's Close
// removes it, and Checkpoint forgets a DB it finds closed.
var playerDBs struct {
	sync.Mutex
	m map[*DB]int // count of open player providers
}

func addPlayerDB(db *DB) {
	playerDBs.Lock()
	defer playerDBs.Unlock()
	if playerDBs.m == nil {
		playerDBs.m = map[*DB]int{}
	}
	playerDBs.m[db]++
}

func removePlayerDB(db *DB) {
	playerDBs.Lock()
	defer playerDBs.Unlock()
	if playerDBs.m[db]--; playerDBs.m[db] <= 0 {
		delete(playerDBs.m, db)
	}
}

// checkpointGate routes a DB's writes into the checkpoint being gathered.
// Every column write and player save read-holds mu for its whole length,
// so that arming and applying a checkpoint (mu write-held) fall between
// writes.
type checkpointGate struct {
	mu      sync.RWMutex
	pending *pendingCheckpoint // set and cleared with mu write-held
}

// pendingCheckpoint is the batch a checkpoint gathers. Safe for concurrent
// use: the three dimensions store into it at once.
type pendingCheckpoint struct {
	mu      sync.Mutex
	b       blazedb.Batch
	keys    []blazedb.Key // the columns in b, dropped from the cache if b fails
	ids     []int32       // the dictionary entries b writes
	edition *Edition      // the edition b writes, if it is the first write since Open
	// capture reads the players of the world being saved; the next
	// SaveSettings runs it and clears it.
	capture func()
}

// settingsSaved runs the capture of the checkpoint being gathered, if any:
// SaveSettings is the last call of a World's save, made while the World
// is held.
func (g *checkpointGate) settingsSaved() {
	g.mu.RLock()
	p := g.pending
	g.mu.RUnlock()
	if p == nil {
		return
	}
	p.mu.Lock()
	f := p.capture
	p.capture = nil
	p.mu.Unlock()
	if f != nil {
		f()
	}
}

// addToCheckpoint adds a column write to p, as writeColumn would apply it:
// with the dictionary entries it is the first to use and, if it is the
// first write since Open, a new edition. Called with db.ckpt.mu read-held.
func (db *DB) addToCheckpoint(p *pendingCheckpoint, k blazedb.Key, rec []byte, fresh []int32) error {
	if !db.edited.Load() && len(fresh) == 0 && db.holds(k, rec) {
		return nil // the engine holds it already: the edition stays
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	db.dict.mu.Lock()
	ids, err := db.dict.unpersisted(&p.b, fresh)
	db.dict.mu.Unlock()
	if err != nil {
		return err
	}
	if !db.edited.Load() && p.edition == nil {
		e := newEdition()
		p.b.PutNamed(editionName, encodeEdition(e))
		p.edition = &e
	}
	p.b.PutShared(k, rec) // writeColumn's: never written again
	p.keys = append(p.keys, k)
	p.ids = append(p.ids, ids...)
	return nil
}

// beginCheckpoint starts gathering writes into a batch. It first waits
// for the store queue (storequeue.go) to write every store acknowledged
// before it, with the gate held, so that no queued store is pushed
// meanwhile (queueStore pushes with the gate read-held) and none lands
// after the checkpoint: while the checkpoint is gathered the queue is empty
// and every store goes into its batch. The store worker never takes the
// gate, so it drains the queue while the gate is held. The queue's
// failures stay for the next call that reports them (Checkpoint takes
// them).
func (db *DB) beginCheckpoint() *pendingCheckpoint {
	db.ckpt.mu.Lock()
	defer db.ckpt.mu.Unlock()
	db.store.wait()
	p := &pendingCheckpoint{}
	db.ckpt.pending = p
	return p
}

// commitCheckpoint stops gathering and applies p, durably. If it fails, the
// columns in it leave the cache, so that the World's next store of each
// writes it again.
func (db *DB) commitCheckpoint(p *pendingCheckpoint) error {
	db.ckpt.mu.Lock()
	defer db.ckpt.mu.Unlock()
	db.ckpt.pending = nil
	p.b.Sync = true
	if err := db.eng.Apply(&p.b); err != nil {
		cols, _ := db.columns()
		for _, k := range p.keys {
			cols.remove(k)
		}
		return fmt.Errorf("provider: checkpoint of %d writes: %w", p.b.Len(), err)
	}
	db.dict.markPersisted(p.ids)
	if len(p.ids) > 0 {
		db.copier.added()
	}
	if p.edition != nil {
		db.edition.Store(p.edition)
		db.edited.Store(true)
	}
	return nil
}

// Checkpoint saves every world of srv (each World's modified chunks and
// settings, as World.Save does) and the data of every player in them, as
// one atomic batch of the world's engine, durable when it returns: after a
// crash, either all of the checkpoint is there or none of it, and the
// chunks and players of each world are of one moment (see above). The
// worlds must be on a DB whose Players() is srv's player provider; all of
// srv's worlds on one DB make the whole checkpoint one batch. Writes the
// worlds make while it runs (a chunk unloaded, a player leaving) join the
// batch. One Checkpoint runs at a time in a process; it must not run
// during the server's Close. Call it from outside every World's
// transactions.
func Checkpoint(srv *server.Server) error {
	return checkpoint([]*world.World{srv.World(), srv.Nether(), srv.End()})
}

// checkpoint checkpoints worlds, which share their providers with no
// other server.
func checkpoint(worlds []*world.World) error {
	checkpointMu.Lock()
	defer checkpointMu.Unlock()
	playerDBs.Lock()
	pending := map[*DB]*pendingCheckpoint{}
	for db := range playerDBs.m {
		switch {
		case db.closed.Load():
			delete(playerDBs.m, db) // closed without closing its player provider
		case !db.conf.ReadOnly:
			pending[db] = db.beginCheckpoint()
		}
	}
	playerDBs.Unlock()
	if len(pending) == 0 {
		return ErrNoCheckpoint
	}
	var errs []error
	for db := range pending {
		// A store acknowledged before the checkpoint and failed in the
		// store queue: the checkpoint does not hold it.
		if db.store != nil {
			if err := db.store.takeErr(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	seen := map[*world.World]bool{}
	for _, w := range worlds {
		if w == nil || seen[w] {
			continue
		}
		seen[w] = true
		if err := checkpointWorld(w, pending); err != nil {
			errs = append(errs, fmt.Errorf("checkpoint %v: %w", w.Dimension(), err))
		}
	}
	// Everything gathered is written, a failed world's too: the Worlds
	// took those stores as done.
	for db, p := range pending {
		if err := db.commitCheckpoint(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkpointWorld saves w into pending, with its players' data read inside
// the save's transaction.
func checkpointWorld(w *world.World, pending map[*DB]*pendingCheckpoint) error {
	for range checkpointTries {
		before, err := playersIn(w)
		if err != nil {
			return err
		}
		var (
			mu   sync.Mutex
			on   *DB
			errs []error
		)
		for db, p := range pending {
			p.mu.Lock()
			p.capture = func() {
				// On the World's goroutine, inside its save: the players
				// are those of before unless the check below says not.
				mu.Lock()
				defer mu.Unlock()
				on = db
				for _, pl := range before {
					v, err := encodePlayerData(pl.UUID(), pl.Data(), w.Dimension())
					if err == nil {
						err = db.putPlayerData(pl.UUID(), v)
					}
					if err != nil {
						errs = append(errs, fmt.Errorf("save data of player %v: %w", pl.UUID(), err))
					}
				}
			}
			p.mu.Unlock()
		}
		w.Save()
		for _, p := range pending {
			p.mu.Lock()
			p.capture = nil
			p.mu.Unlock()
		}
		mu.Lock()
		found := on != nil
		mu.Unlock()
		if !found {
			return ErrNoCheckpoint
		}
		after, err := playersIn(w)
		if err != nil {
			return err
		}
		if samePlayers(before, after) {
			return errors.Join(errs...)
		}
	}
	return ErrCheckpointBusy
}

// playersIn returns the players in w, read in a transaction of w. Their
// data stays readable after it (player.Player.Data reads the entity's
// shared state), and is read only on w's goroutine.
func playersIn(w *world.World) ([]*player.Player, error) {
	var ps []*player.Player
	t := w.Do(func(tx *world.Tx) {
		for e := range tx.Players() {
			if p, ok := e.(*player.Player); ok {
				ps = append(ps, p)
			}
		}
	})
	if err := t.Wait(context.Background()); err != nil {
		return nil, fmt.Errorf("list the players: %w", err)
	}
	return ps, nil
}

// samePlayers reports whether a and b hold the same player entities.
func samePlayers(a, b []*player.Player) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[*world.EntityHandle]bool, len(a))
	for _, p := range a {
		in[p.H()] = true
	}
	for _, p := range b {
		if !in[p.H()] {
			return false
		}
	}
	return true
}
