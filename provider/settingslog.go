package provider

import (
	"errors"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/world/mcdb/leveldat"
)

// The settings are kept in the engine's log too, so that a View reads the
// settings as they were at its point (view.go): level.dat holds only the
// latest. Each SaveSettings puts the named record settingsName, whose
// value is exactly the bytes SaveSettings writes to level.dat (Dragonfly's
// format, encodeLevelDat); the same value again appends nothing. level.dat
// stays what the world opens with: the record is read only for Views.
const settingsName = "provider/settings"

// logSettings puts d into the engine's log, for Views.
func (db *DB) logSettings(d *leveldat.Data) error {
	b, err := encodeLevelDat(d)
	if err != nil {
		return err
	}
	return db.eng.PutNamed(settingsName, b)
}

// settingsAt returns the settings the log held at the point seq, or nil
// when no SaveSettings before it put any (a world older than the record,
// or one never saved since it was made).
func (db *DB) settingsAt(seq uint64) (*leveldat.Data, error) {
	b, err := db.eng.GetNamedAt(settingsName, seq)
	if errors.Is(err, blazedb.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseLevelDat(b)
}
