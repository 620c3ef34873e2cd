package provider

import (
	"errors"
	"fmt"
	"sync"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/world"
)

// quarantine holds the columns whose load failed with ErrUnknownState,
// each with the registry it failed under. Such a column is never
// overwritten while it cannot be read: a caller that stored what it got in
// its place (Dragonfly's World does not, other code might) would destroy
// the blocks the registry did not know. A store of a quarantined column is
// refused without I/O while the registry is the one the load failed
// under; once another is set, the store reads the stored column again and
// goes ahead only if it now decodes. It is safe for concurrent use.
type quarantine struct {
	mu sync.Mutex
	of map[blazedb.Key]quarantined
}

// quarantined is why a column is quarantined.
type quarantined struct {
	err error
	// gen is the registry (DB.regGen) the load failed under, or an earlier
	// one, which only costs the next store a decode.
	gen uint64
}

func newQuarantine() *quarantine { return &quarantine{of: map[blazedb.Key]quarantined{}} }

// add quarantines k, whose load under registry gen failed with err.
func (q *quarantine) add(k blazedb.Key, err error, gen uint64) {
	q.mu.Lock()
	q.of[k] = quarantined{err: err, gen: gen}
	q.mu.Unlock()
}

func (q *quarantine) get(k blazedb.Key) (quarantined, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c, ok := q.of[k]
	return c, ok
}

// set replaces k's entry, unless it was released meanwhile.
func (q *quarantine) set(k blazedb.Key, c quarantined) {
	q.mu.Lock()
	if _, ok := q.of[k]; ok {
		q.of[k] = c
	}
	q.mu.Unlock()
}

func (q *quarantine) release(k blazedb.Key) {
	q.mu.Lock()
	delete(q.of, k)
	q.mu.Unlock()
}

// checkStore returns the error a store of k must fail with because k is
// quarantined, or nil. Under a registry other than the one k's load failed
// under, it decodes the stored column again: if that works now, or the
// column is gone, k is released.
func (db *DB) checkStore(k blazedb.Key, dim world.Dimension) error {
	c, ok := db.quarantine.get(k)
	if !ok {
		return nil
	}
	refuse := func(err error) error {
		return fmt.Errorf("refusing to overwrite a column that failed to load: %w", err)
	}
	gen := db.regGen.Load()
	if c.gen == gen {
		return refuse(c.err)
	}
	rec, err := db.eng.Get(k)
	if err == nil {
		_, err = db.dict.codec.DecodeColumn(rec, dim.Range())
	}
	switch {
	case err == nil, errors.Is(err, blazedb.ErrNotFound):
		db.quarantine.release(k)
		return nil
	case errors.Is(err, ErrUnknownState):
		db.quarantine.set(k, quarantined{err: err, gen: gen})
	}
	return refuse(err)
}
