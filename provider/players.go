package provider

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/google/uuid"
)

// Player spawn records live in the engine beside the chunks, with the same
// durability:
//
//	name  "player/" + UUID
//	value version byte (1), then x, y, z as int32 LE (13 bytes)
//
// Part of the on-disk format.
const (
	playerPrefix    = "player/"
	playerVersion   = 1
	playerRecordLen = 13
)

// LoadPlayerSpawnPosition returns the spawn saved for id, if any.
func (db *DB) LoadPlayerSpawnPosition(id uuid.UUID) (cube.Pos, bool, error) {
	v, err := db.eng.GetNamed(playerPrefix + id.String())
	return decodeSpawn(id, v, err)
}

// decodeSpawn decodes player id's spawn record v, read with error err.
func decodeSpawn(id uuid.UUID, v []byte, err error) (cube.Pos, bool, error) {
	if errors.Is(err, blazedb.ErrNotFound) {
		return cube.Pos{}, false, nil
	}
	if err != nil {
		return cube.Pos{}, false, fmt.Errorf("load spawn of player %v: %w", id, corruption(chunksFile, "player spawn "+id.String(), err))
	}
	bad := func(format string, args ...any) (cube.Pos, bool, error) {
		return cube.Pos{}, true, fmt.Errorf("load spawn of player %v: %w", id, corruption(chunksFile, "player spawn "+id.String(), fmt.Errorf("%w: "+format, append([]any{ErrColumnCorrupt}, args...)...)))
	}
	switch {
	case len(v) > 0 && v[0] > playerVersion:
		return bad("record version %d is newer than this build reads (%d)", v[0], playerVersion)
	case len(v) > 0 && v[0] != playerVersion:
		return bad("record version %d", v[0])
	case len(v) != playerRecordLen:
		return bad("record of %d bytes, want %d", len(v), playerRecordLen)
	}
	return cube.Pos{
		int(int32(binary.LittleEndian.Uint32(v[1:]))),
		int(int32(binary.LittleEndian.Uint32(v[5:]))),
		int(int32(binary.LittleEndian.Uint32(v[9:]))),
	}, true, nil
}

// PlayerSpawn is a stored player spawn, as PlayerSpawns reads it: a plain
// value, safe to copy and to use from any goroutine.
type PlayerSpawn struct {
	Name string    // the id as stored: a UUID, unless the record is bad
	ID   uuid.UUID // Name parsed
	Pos  cube.Pos
	// Err is why it could not be read: a name that is no UUID, or damage
	// (wrapping blazedb.ErrCorrupt and a CorruptionError; ErrColumnCorrupt
	// too when the record reads and does not decode).
	Err error
}

// PlayerSpawns reads every stored player spawn, for tools that visit a
// whole world (check, convert): each one it cannot read comes with the
// reason rather than stopping it. Safe for concurrent use; a spawn saved
// meanwhile may be left out.
func (db *DB) PlayerSpawns() ([]PlayerSpawn, error) {
	names, err := db.eng.Names()
	if err != nil {
		return nil, err
	}
	var out []PlayerSpawn
	for _, n := range names {
		s, ok := strings.CutPrefix(n, playerPrefix)
		if !ok {
			continue
		}
		p := PlayerSpawn{Name: s}
		var err error
		if p.ID, err = uuid.Parse(s); err != nil || p.ID.String() != s {
			// Blaze writes the canonical form only; another would not be
			// found by its UUID.
			p.Err = corruption(chunksFile, fmt.Sprintf("named record %q", n), fmt.Errorf("%w: player record %q is not named by a UUID", ErrColumnCorrupt, n))
		} else if p.Pos, ok, p.Err = db.LoadPlayerSpawnPosition(p.ID); !ok && p.Err == nil {
			continue // removed meanwhile
		}
		out = append(out, p)
	}
	return out, nil
}

// SavePlayerSpawnPosition saves the spawn of player id.
func (db *DB) SavePlayerSpawnPosition(id uuid.UUID, pos cube.Pos) error {
	v := []byte{playerVersion}
	for _, c := range pos {
		v = binary.LittleEndian.AppendUint32(v, uint32(int32(c)))
	}
	if err := db.eng.PutNamed(playerPrefix+id.String(), v); err != nil {
		return fmt.Errorf("save spawn of player %v: %w", id, err)
	}
	return nil
}
