package demo

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func listing(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			st, _ := d.Info()
			out = append(out, p+":"+st.ModTime().String())
		}
		return nil
	})
	return out
}

// A LevelDB world is refused with a message that says what to do, and is
// left as it was.
func TestRefusesLevelDBWorld(t *testing.T) {
	dir := worldtest.UnpackTemp(t, worldtest.Worlds(t)[0])
	before := strings.Join(listing(t, dir), "\n")
	_, err := Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet}.New()
	if !errors.Is(err, provider.ErrLevelDBWorld) || !strings.Contains(err.Error(), "blaze convert") {
		t.Fatalf("err = %v", err)
	}
	if after := strings.Join(listing(t, dir), "\n"); after != before {
		t.Fatal("the LevelDB world was changed")
	}
}

// A damaged engine directory and a world held by another server are
// refused with clear errors.
func TestRefusesDamagedAndLockedWorlds(t *testing.T) {
	dir := t.TempDir()
	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet}.New()
	if !errors.Is(err, blazedb.ErrLocked) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("locked: %v", err)
	}
	db.Close()
	os.WriteFile(filepath.Join(dir, "blaze", "chunks.dat"), []byte("garbage, not a Blaze log at all"), 0o644)
	_, err = Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet}.New()
	if !errors.Is(err, blazedb.ErrNotBlaze) {
		t.Fatalf("damaged: %v", err)
	}
}

// Importing writes a whole world or none.
func TestImport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	r, err := Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Import: worldtest.Worlds(t)[1], Log: quiet}.New()
	if err != nil {
		t.Fatal(err)
	}
	if n := r.World.Engine().Stats().ChunkKeys; n == 0 {
		t.Fatal("nothing imported")
	}
	r.World.Close() // the server never started: only the provider needs closing

	bad := filepath.Join(t.TempDir(), "bad.mcworld")
	os.WriteFile(bad, []byte("not a zip"), 0o644)
	dir2 := filepath.Join(t.TempDir(), "w2")
	if _, err := (Config{Addr: "127.0.0.1:0", Dir: dir2, Offline: true, Import: bad, Log: quiet}).New(); err == nil {
		t.Fatal("a broken import succeeded")
	}
	if _, err := os.Stat(dir2); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a failed import left a world behind")
	}
}

// Arena mode: each start serves the template afresh; the template's files
// are never written.
func TestArenaMode(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "template")
	r, err := Config{Addr: "127.0.0.1:0", Dir: tmpl, Offline: true, Import: worldtest.Worlds(t)[1], Log: quiet}.New()
	if err != nil {
		t.Fatal(err)
	}
	r.World.Close()
	before := strings.Join(listing(t, tmpl), "\n")
	arena := filepath.Join(t.TempDir(), "arena")
	for start := 0; start < 2; start++ {
		r, err := Config{Addr: "127.0.0.1:0", Dir: arena, Offline: true, ArenaTemplate: tmpl, Log: quiet}.New()
		if err != nil {
			t.Fatalf("start %d: %v", start, err)
		}
		if r.World.Engine().Stats().ChunkKeys == 0 || r.Arena == nil {
			t.Fatal("not an arena on the template")
		}
		if dirty, _ := r.Arena.Dirty(); len(dirty) != 0 {
			t.Fatalf("start %d: the arena starts with %d changed columns", start, len(dirty))
		}
		r.Arena.Shutdown()
		r.World.Close()
	}
	if after := strings.Join(listing(t, tmpl), "\n"); after != before {
		t.Fatal("arena mode wrote to the template")
	}
}
