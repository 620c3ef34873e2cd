// Package demo builds the Dragonfly server of cmd/demo-server: Dragonfly's
// defaults with Blaze as the world provider. The end-to-end test starts the
// same server.
package demo

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/mcworld"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server"
)

// Config is what the demo server's flags set.
type Config struct {
	Addr       string             // UDP address to listen on
	Dir        string             // world directory
	Durability blazedb.Durability // Blaze's fsync policy
	Offline    bool               // Xbox Live authentication off
	Import     string             // an .mcworld to convert into Dir if Dir does not exist
	Log        *slog.Logger
}

// New opens the world (importing it first if asked) and returns a server
// that is not yet listening, with its provider. Closing the server saves
// every world and closes the provider.
func (c Config) New() (*server.Server, *provider.DB, error) {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if _, err := os.Stat(c.Dir); c.Import != "" && errors.Is(err, os.ErrNotExist) {
		if err := importWorld(c.Import, c.Dir, c.Log); err != nil {
			return nil, nil, fmt.Errorf("import %s: %w", c.Import, err)
		}
	}
	db, err := provider.Config{Log: c.Log, Durability: c.Durability}.Open(c.Dir)
	switch {
	case errors.Is(err, provider.ErrLevelDBWorld):
		return nil, nil, fmt.Errorf("%s holds a LevelDB world; convert it to Blaze first (`blaze convert`): %w", c.Dir, err)
	case errors.Is(err, blazedb.ErrLocked):
		return nil, nil, fmt.Errorf("%s is in use by another server: %w", c.Dir, err)
	case err != nil:
		return nil, nil, fmt.Errorf("cannot open the world in %s: %w", c.Dir, err)
	}
	abs, _ := filepath.Abs(c.Dir)
	c.Log.Info("Blaze world opened", "dir", abs, "durability", c.Durability.String(), "columns", db.Engine().Stats().ChunkKeys)

	uc := server.DefaultConfig()
	uc.Network.Address = c.Addr
	uc.Server.Name = "Blaze demo"
	uc.Server.AuthEnabled = !c.Offline
	uc.World.SaveData = false // the world provider is Blaze, set below
	uc.Players.Folder = filepath.Join(c.Dir, "players")
	uc.Resources.Folder = filepath.Join(c.Dir, "resources")
	conf, err := uc.Config(c.Log)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	conf.WorldProvider = db
	if c.Offline {
		c.Log.Warn("Xbox Live authentication is off: anyone can join with any name")
	}
	return conf.New(), db, nil
}

// importWorld converts a Bedrock .mcworld into a new Blaze world at dir.
func importWorld(file, dir string, log *slog.Logger) error {
	tmp, err := os.MkdirTemp("", "blaze-import-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := mcworld.Unpack(file, tmp); err != nil {
		return err
	}
	r, err := convert.Convert(tmp, dir, convert.Options{Log: log})
	if err != nil {
		os.RemoveAll(dir) // never leave a half-written world
		return err
	}
	log.Info("imported a world", "from", file, "columns", r.Columns, "unreadable", len(r.Failed), "took", r.Took)
	return nil
}
