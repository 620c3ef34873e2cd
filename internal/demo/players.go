package demo

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/provider"
)

// The players' data lives in the world (provider.DB.Players), so that
// backups, the history and checkpoints (checkpoint.go) hold it with the
// chunks. Earlier builds of the demo kept it in Dragonfly's playerdb, in
// the world directory's players folder: importOldPlayers moves it in.

// playersDir is the folder of the world directory where earlier builds of
// the demo kept the players' data (Dragonfly's playerdb).
const playersDir = "players"

// importedSuffix is added to playersDir's name once its data is in the
// world, so that it is imported once and kept for the operator to delete.
const importedSuffix = ".imported"

// importOldPlayers copies the players' data an earlier build of the demo
// kept in dir's players folder into db, then renames the folder, so that
// no player loses an inventory to the upgrade. A record that does not read
// is logged and left in the renamed folder.
func importOldPlayers(db *provider.DB, dir string, log *slog.Logger) error {
	old := filepath.Join(dir, playersDir)
	if _, err := os.Stat(old); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	n, failed, err := convert.ImportPlayerDB(db, old)
	if err != nil {
		return err
	}
	for _, f := range failed {
		log.Error("player data not imported: "+f.Err.Error(), "player", f.ID, "folder", old)
	}
	if err := db.Sync(); err != nil {
		return fmt.Errorf("import players from %s: %w", old, err)
	}
	if err := os.Rename(old, old+importedSuffix); err != nil {
		return fmt.Errorf("import players from %s: %w", old, err)
	}
	log.Info("players' data moved into the world", "players", n, "old folder", old+importedSuffix)
	return nil
}
