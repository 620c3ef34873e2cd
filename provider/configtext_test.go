package provider

import (
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/pelletier/go-toml"
)

// Issue 38 item 9: Durability and Compression are set in Dragonfly's
// config.toml, read by the TOML library and version Dragonfly's own main
// uses (github.com/pelletier/go-toml v1.9.5), beside server.UserConfig as
// docs/OPERATIONS.md shows: a new file is written with the defaults' names,
// an edited file is read into the settings a provider then opens with, and
// a name that is no mode fails the decoding with the valid names.
func TestConfigFileSettings(t *testing.T) {
	type blazeSettings struct {
		Durability  blazedb.Durability
		Compression blazedb.Compression
	}
	type configFile struct {
		server.UserConfig
		Blaze blazeSettings
	}

	written, err := toml.Marshal(configFile{UserConfig: server.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	section := "[Blaze]\n  Compression = \"default\"\n  Durability = \"balanced\"\n"
	if !strings.Contains(string(written), section) {
		t.Fatalf("a new config.toml lacks\n%s\nin\n%s", section, written)
	}

	edited := strings.Replace(string(written), section, "[Blaze]\n  Compression = \"zstd\"\n  Durability = \"safebatch\"\n", 1)
	c := configFile{UserConfig: server.DefaultConfig()}
	if err := toml.Unmarshal([]byte(edited), &c); err != nil {
		t.Fatal(err)
	}
	if c.Blaze != (blazeSettings{blazedb.DurabilitySafeBatch, blazedb.CompressionZstd}) || c.Server.Name != "Dragonfly Server" {
		t.Fatalf("read back %+v, server name %q", c.Blaze, c.Server.Name)
	}
	dir := t.TempDir()
	db := openDB(t, dir, Config{Durability: c.Blaze.Durability, Compression: c.Blaze.Compression})
	col := worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)
	if err := db.StoreColumn(world.ChunkPos{3, 4}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	got, err := db.LoadColumn(world.ChunkPos{3, 4}, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if err := worldtest.Compare(worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry), got); err != nil {
		t.Fatal(err)
	}

	for _, bad := range []struct{ line, name, valid string }{
		{`Durability = "balanced"`, `Durability = "always"`, "want fast, balanced, safe or safebatch"},
		{`Compression = "default"`, `Compression = "gzip"`, "want default, none, lz4, snappy or zstd"},
	} {
		text := strings.Replace(string(written), bad.line, bad.name, 1)
		err := toml.Unmarshal([]byte(text), &configFile{})
		if err == nil || !strings.Contains(err.Error(), bad.valid) {
			t.Errorf("%s: decoded with error %v", bad.name, err)
		}
	}
}
