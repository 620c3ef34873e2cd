package provider

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/blazeworld/blaze/blazedb"
)

// RevertPlayers puts every player's data back as it was at point (a
// snapshot's name or an RFC 3339 time within the history), as Revert does
// the columns: a player saved since is written again with its record of
// then, or removed if it had none then, all in one atomic batch. It is
// what `blaze rollback` does to the players when it rolls the whole world
// back, and returns the number of players changed. Like Revert, it is new
// versions, so it can be undone, and is for a world no server has open: a
// player online would be saved over it when leaving.
func (db *DB) RevertPlayers(point string) (int, error) {
	n, err := db.revertPlayers(point)
	if err != nil {
		return n, fmt.Errorf("provider: revert players to %q: %w", point, err)
	}
	return n, nil
}

func (db *DB) revertPlayers(point string) (int, error) {
	if db.conf.ReadOnly {
		return 0, blazedb.ErrReadOnly
	}
	v, err := db.At(point) // holds a snapshot while it is read
	if err != nil {
		return 0, err
	}
	defer v.Close()
	changes, err := db.eng.ChangedSince(v.at.seq) // deletions too: a revert's own
	if err != nil {
		return 0, err
	}
	var b blazedb.Batch
	b.Sync = true
	for _, c := range changes {
		n := c.Name
		if !c.Named || !strings.HasPrefix(n, playerDataPrefix) {
			continue
		}
		then, err := db.eng.GetNamedAt(n, v.at.seq)
		gone := errors.Is(err, blazedb.ErrNotFound)
		if err != nil && !gone {
			return 0, err
		}
		now, err := db.eng.GetNamed(n)
		absent := errors.Is(err, blazedb.ErrNotFound)
		if err != nil && !absent {
			return 0, err
		}
		switch {
		case gone && absent:
		case gone:
			b.DeleteNamed(n)
		case !bytes.Equal(then, now):
			b.PutNamed(n, then)
		}
	}
	if err := db.eng.Apply(&b); err != nil {
		return 0, err
	}
	return b.Len(), nil
}
