package convert

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/df-mc/goleveldb/leveldb/opt"
	"github.com/google/uuid"
)

// A playerdb folder is the LevelDB database Dragonfly's player provider
// (server/player/playerdb) keeps: each player's data is the JSON document
// provider.DB.Players stores too, keyed by the 16 bytes of the player's
// UUID. Converting it either way copies the documents, each one decoded
// first, so that one that does not read is reported and not copied.

// PlayerDataFailure is a player's data that could not be converted: a
// plain value, safe to copy and share.
type PlayerDataFailure struct {
	ID  string // the UUID, or the key in hexadecimal when it is none
	Err error
}

func (f PlayerDataFailure) String() string { return fmt.Sprintf("data of player %s: %v", f.ID, f.Err) }

// ImportPlayerDB copies every player's data in the playerdb folder dir into
// db, and returns how many it copied and those it could not read. dir is
// opened as playerdb opens it, which may rewrite LevelDB's own files but
// no record; it must not be open elsewhere.
func ImportPlayerDB(db *provider.DB, dir string) (int, []PlayerDataFailure, error) {
	if _, err := os.Stat(dir); err != nil {
		return 0, nil, fmt.Errorf("import players from %s: %w", dir, err)
	}
	ldb, err := leveldb.OpenFile(dir, &opt.Options{Compression: opt.SnappyCompression, ErrorIfMissing: true})
	if err != nil {
		return 0, nil, fmt.Errorf("import players from %s: %w", dir, err)
	}
	defer ldb.Close()
	it := ldb.NewIterator(nil, nil)
	defer it.Release()
	n := 0
	var failed []PlayerDataFailure
	for it.Next() {
		k := it.Key()
		id, err := uuid.FromBytes(k)
		if err != nil {
			failed = append(failed, PlayerDataFailure{fmt.Sprintf("%x", k), errors.New("the key is not a UUID")})
			continue
		}
		if err := db.SavePlayerData(id, it.Value()); err != nil {
			if errors.Is(err, provider.ErrPlayerCorrupt) {
				failed = append(failed, PlayerDataFailure{id.String(), err})
				continue
			}
			return n, failed, fmt.Errorf("import players from %s: %w", dir, err)
		}
		n++
	}
	if err := it.Error(); err != nil {
		return n, failed, fmt.Errorf("import players from %s: %w", dir, err)
	}
	return n, failed, nil
}

// ExportPlayerDB writes every player's data of db into a new playerdb
// folder dir (refused with fs.ErrExist when it exists), and returns how
// many it wrote and those it could not read. The folder is synced before
// it returns.
func ExportPlayerDB(db *provider.DB, dir string) (int, []PlayerDataFailure, error) {
	data, err := db.PlayerData()
	if err != nil {
		return 0, nil, fmt.Errorf("export players to %s: %w", dir, err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return 0, nil, fmt.Errorf("export players to %s: %w", dir, fs.ErrExist)
	}
	ldb, err := leveldb.OpenFile(dir, &opt.Options{Compression: opt.SnappyCompression})
	if err != nil {
		return 0, nil, fmt.Errorf("export players to %s: %w", dir, err)
	}
	n := 0
	var failed []PlayerDataFailure
	var b leveldb.Batch
	for _, p := range data {
		if p.Err != nil {
			failed = append(failed, PlayerDataFailure{p.Name, p.Err})
			continue
		}
		b.Put(p.ID[:], p.JSON())
		n++
	}
	err = ldb.Write(&b, &opt.WriteOptions{Sync: true})
	if cerr := ldb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, failed, fmt.Errorf("export players to %s: %w", dir, err)
	}
	return n, failed, nil
}
