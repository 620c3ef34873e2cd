// Package worldtest holds helpers shared by Blaze's tests: the real Bedrock
// worlds in ../shared/testdata/worlds, reading them with Dragonfly's mcdb,
// and comparing columns exactly.
package worldtest

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

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
func Unpack(path, dir string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		dst := filepath.Join(dir, filepath.FromSlash(f.Name))
		if !strings.HasPrefix(dst, filepath.Clean(dir)+string(os.PathSeparator)) {
			return fmt.Errorf("%s: entry %q escapes the directory", path, f.Name)
		}
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		out, err := os.Create(dst)
		if err != nil {
			rc.Close()
			return err
		}
		_, err = io.Copy(out, rc)
		rc.Close()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// UnpackTemp extracts an .mcworld into a new temporary directory.
func UnpackTemp(t testing.TB, path string) string {
	t.Helper()
	dir := t.TempDir()
	if err := Unpack(path, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Column is one column of a world with its place.
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

// Compare reports the first difference between two columns: every block of
// every layer, every biome, then the block entities, entities, scheduled
// updates and tick by deep equality (nil and empty lists are equal).
// Chunk.Equals is not used: it compares representations, and calls some
// identical columns different.
func Compare(a, b *chunk.Column) error {
	ca, cb := a.Chunk, b.Chunk
	if ca.Range() != cb.Range() {
		return fmt.Errorf("ranges %v and %v", ca.Range(), cb.Range())
	}
	r := ca.Range()
	layers := 0
	for i := range ca.Sub() {
		layers = max(layers, len(ca.Sub()[i].Layers()), len(cb.Sub()[i].Layers()))
	}
	for y := r[0]; y <= r[1]; y++ {
		for x := uint8(0); x < 16; x++ {
			for z := uint8(0); z < 16; z++ {
				for l := 0; l < layers; l++ {
					if va, vb := ca.Block(x, int16(y), z, uint8(l)), cb.Block(x, int16(y), z, uint8(l)); va != vb {
						return fmt.Errorf("block %d,%d,%d layer %d: %d against %d", x, y, z, l, va, vb)
					}
				}
				if va, vb := ca.Biome(x, int16(y), z), cb.Biome(x, int16(y), z); va != vb {
					return fmt.Errorf("biome %d,%d,%d: %d against %d", x, y, z, va, vb)
				}
			}
		}
	}
	if a.Tick != b.Tick {
		return fmt.Errorf("tick %d against %d", a.Tick, b.Tick)
	}
	if !equalLists(a.BlockEntities, b.BlockEntities) {
		return fmt.Errorf("block entities differ: %d against %d", len(a.BlockEntities), len(b.BlockEntities))
	}
	if !equalLists(a.Entities, b.Entities) {
		return fmt.Errorf("entities differ: %d against %d", len(a.Entities), len(b.Entities))
	}
	if !equalLists(a.ScheduledBlocks, b.ScheduledBlocks) {
		return fmt.Errorf("scheduled updates differ: %d against %d", len(a.ScheduledBlocks), len(b.ScheduledBlocks))
	}
	return nil
}

func equalLists[T any](a, b []T) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}
