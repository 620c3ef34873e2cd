package worldtest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/mcworld"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/dragonfly/server/world/mcdb"
)

// SharedDir returns ../shared beside the module root (or $BLAZE_SHARED).
func SharedDir() (string, error) {
	if d := os.Getenv("BLAZE_SHARED"); d != "" {
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Worlds returns the paths of the .mcworld files in shared/testdata/worlds.
func Worlds(t testing.TB) []string {
	t.Helper()
	shared, err := SharedDir()
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(shared, "testdata", "worlds", "*.mcworld"))
	if len(paths) == 0 {
		t.Fatalf("no test worlds in %s/testdata/worlds: the shared/ directory must sit beside the checkout (or set BLAZE_SHARED)", shared)
	}
	sort.Strings(paths)
	return paths
}

// Name is a world file's base name without extension.
func Name(path string) string { return strings.TrimSuffix(filepath.Base(path), ".mcworld") }

// Unpack extracts an .mcworld (a zip) into dir.
func Unpack(path, dir string) error { return mcworld.Unpack(path, dir) }

// UnpackTemp extracts an .mcworld into a new temporary directory.
func UnpackTemp(t testing.TB, path string) string {
	t.Helper()
	dir := t.TempDir()
	if err := Unpack(path, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Column is one column of a world with its place. The test that reads it
// owns it; it is not safe to mutate from several goroutines at once.
type Column struct {
	Pos world.ChunkPos
	Dim world.Dimension
	Col *chunk.Column
}

// ReadAll reads every column of the LevelDB world in dir with mcdb.
func ReadAll(dir string, br world.BlockRegistry) ([]Column, error) {
	db, err := mcdb.Config{Blocks: br}.Open(dir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	it := db.NewColumnIterator(nil)
	defer it.Release()
	var out []Column
	for it.Next() {
		out = append(out, Column{Pos: it.Position(), Dim: it.Dimension(), Col: it.Column()})
	}
	return out, it.Error()
}

// Compare reports the first difference between two columns (see colcmp).
func Compare(a, b *chunk.Column) error { return colcmp.Compare(a, b) }
