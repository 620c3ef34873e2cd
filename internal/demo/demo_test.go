package demo

import (
	"archive/zip"
	"errors"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
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

// Issue 38 item 2: -world WORLD/db, a LevelDB world's database folder
// itself, made an empty Blaze world inside it and served fresh terrain. It
// is refused, naming the world's folder and `blaze convert`, and left as it
// was.
func TestRefusesLevelDBDatabaseFolder(t *testing.T) {
	wdir := worldtest.UnpackTemp(t, worldtest.Worlds(t)[0])
	dir := filepath.Join(wdir, "db")
	before := strings.Join(listing(t, wdir), "\n")
	_, err := Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet}.New()
	if !errors.Is(err, provider.ErrLevelDBWorld) || !strings.Contains(err.Error(), "blaze convert "+wdir) {
		t.Fatalf("err = %v", err)
	}
	if after := strings.Join(listing(t, wdir), "\n"); after != before {
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
	// index.dat shows the log was durable: garbage in its place is
	// durable data lost (issue 35 item 1).
	os.WriteFile(filepath.Join(dir, "blaze", "chunks.dat"), []byte("garbage, not a Blaze log at all"), 0o644)
	_, err = Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet}.New()
	if !errors.Is(err, blazedb.ErrDurableLoss) {
		t.Fatalf("damaged: %v", err)
	}
	// Without index.dat nothing shows it was ever a Blaze log.
	os.Remove(filepath.Join(dir, "blaze", "index.dat"))
	_, err = Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet}.New()
	if !errors.Is(err, blazedb.ErrNotBlaze) {
		t.Fatalf("foreign: %v", err)
	}
}

// Importing writes a whole world or none, and an import cut short is done
// again at the next start.
func TestImport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	r, err := Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Import: worldtest.Worlds(t)[1], Log: quiet}.New()
	if err != nil {
		t.Fatal(err)
	}
	n := r.World.Engine().Stats().ChunkKeys
	if n == 0 {
		t.Fatal("nothing imported")
	}
	closeUnserved(r)

	// What an import killed halfway leaves: the world converted so far,
	// under the name it is built under.
	dir1 := filepath.Join(t.TempDir(), "w1")
	// Without the players' LOCK, which the unserved server's player
	// database still holds: Windows refuses to open it.
	if err := fsutil.CopyTree(dir, dir1+importSuffix, func(n string) bool { return n == "LOCK" }); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir1+importSuffix, "half-written"), nil, 0o644)
	r, err = Config{Addr: "127.0.0.1:0", Dir: dir1, Offline: true, Import: worldtest.Worlds(t)[1], Log: quiet}.New()
	if err != nil {
		t.Fatalf("the import after one cut short: %v", err)
	}
	if got := r.World.Engine().Stats().ChunkKeys; got != n {
		t.Fatalf("the import after one cut short holds %d columns, want %d", got, n)
	}
	closeUnserved(r)
	if _, err := os.Stat(filepath.Join(dir1, "half-written")); err == nil {
		t.Fatal("the import took over what the one cut short left")
	}
	if _, err := os.Stat(dir1 + importSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the import left %s: %v", dir1+importSuffix, err)
	}

	bad := filepath.Join(t.TempDir(), "bad.mcworld")
	os.WriteFile(bad, []byte("not a zip"), 0o644)
	dir2 := filepath.Join(t.TempDir(), "w2")
	if _, err := (Config{Addr: "127.0.0.1:0", Dir: dir2, Offline: true, Import: bad, Log: quiet}).New(); err == nil {
		t.Fatal("a broken import succeeded")
	}
	for _, d := range []string{dir2, dir2 + importSuffix} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a failed import left %s behind", d)
		}
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
	closeUnserved(r)
	before := strings.Join(listing(t, tmpl), "\n")
	arena := filepath.Join(t.TempDir(), "arena")
	for start := 0; start < 2; start++ {
		r, err := Config{Addr: "127.0.0.1:0", Dir: arena, Offline: true, ArenaTemplate: tmpl, Log: quiet}.New()
		if err != nil {
			t.Fatalf("start %d: %v", start, err)
		}
		if r.World.Engine().Stats().ChunkKeys == 0 || r.Arena == nil || r.Prefetcher == nil {
			t.Fatal("not a prefetched arena on the template")
		}
		if dirty, _ := r.Arena.Dirty(); len(dirty) != 0 {
			t.Fatalf("start %d: the arena starts with %d changed columns", start, len(dirty))
		}
		r.Prefetcher.Close()
		r.Arena.Shutdown()
		r.World.Close()
	}
	if after := strings.Join(listing(t, tmpl), "\n"); after != before {
		t.Fatal("arena mode wrote to the template")
	}
}

// With BackupDir the running world is copied at every BackupEvery; the
// newest BackupKeep copies stay, each a whole world holding what was
// stored before it, and a copy a crash cut short is deleted.
func TestBackups(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	bdir := filepath.Join(t.TempDir(), "backups")
	leftover := filepath.Join(bdir, backupPrefix+"20000101-000000.000"+vfs.BuildSuffix)
	if err := os.MkdirAll(leftover, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet,
		BackupDir: bdir, BackupEvery: 20 * time.Millisecond, BackupKeep: 2}.New()
	if err != nil {
		t.Fatal(err)
	}
	col := worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)
	if err := r.World.StoreColumn(world.ChunkPos{2, 3}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	// Wait for a third backup made after the store.
	stored := time.Now().UTC().Format(backupTime)
	made := map[string]bool{}
	for deadline := time.Now().Add(20 * time.Second); len(made) < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("backups made after the store: %v", made)
		}
		entries, _ := os.ReadDir(bdir)
		for _, e := range entries {
			if n, ok := strings.CutPrefix(e.Name(), backupPrefix); ok && n > stored && !strings.HasSuffix(n, vfs.BuildSuffix) {
				made[e.Name()] = true
			}
		}
	}
	if err := r.StopBackups(); err != nil {
		t.Fatal(err)
	}
	closeUnserved(r)

	entries, err := os.ReadDir(bdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("kept %d entries, want the 2 newest backups: %v", len(entries), entries)
	}
	// Another may have been made after the last look, before the stop.
	names := slices.Sorted(maps.Keys(made))
	for _, e := range entries {
		if e.Name() < names[len(names)-2] {
			t.Fatalf("%s is not one of the newest backups (%v)", e.Name(), names)
		}
		b, err := provider.Config{Log: quiet, ReadOnly: true}.Open(filepath.Join(bdir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.LoadColumn(world.ChunkPos{2, 3}, world.Overworld)
		if err == nil {
			err = worldtest.Compare(col, got)
		}
		b.Close()
		if err != nil {
			t.Fatalf("backup %s: %v", e.Name(), err)
		}
	}

	if _, err := (Config{Addr: "127.0.0.1:0", Dir: dir, ArenaTemplate: dir, BackupDir: bdir, Log: quiet}).New(); err == nil {
		t.Fatal("backups of an arena's disposable changes were accepted")
	}

	// A backup that fails is logged and returned by StopBackups.
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o644)
	r, err = Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "w"), Offline: true, Log: quiet, BackupDir: notDir, BackupEvery: time.Millisecond}.New()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	err = r.StopBackups()
	closeUnserved(r)
	if err == nil {
		t.Fatal("backups into a file failed without a word")
	}
}

// closeUnserved closes what New started for a server that never served:
// the prefetcher, the provider and the players' database.
func closeUnserved(r *Running) {
	if r.Prefetcher != nil {
		r.Prefetcher.Close()
	}
	if r.checkpoints != nil {
		r.checkpoints.Stop()
	}
	r.World.Close()
}

// zipDir packs the files under dir into a zip file at path, as an
// .mcworld is packed.
func zipDir(t *testing.T, dir, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || d.Name() == "LOCK" {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			_, err = w.Write(b)
		}
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Issue 35 item 15: inputs that could mean two things are refused with a
// message that says which, and nothing is made or changed; a subtest a
// case: an import of a zipped Blaze world (it was converted to LevelDB,
// which the server then refused), a world directory or arena template
// holding both a LevelDB and a Blaze world, and an arena whose overlay is
// its template, lies inside it or holds it.
func TestRefusesAmbiguousInputs(t *testing.T) {
	bz := filepath.Join(t.TempDir(), "bz")
	db, err := provider.Config{Log: quiet}.Open(bz)
	if err != nil {
		t.Fatal(err)
	}
	db.StoreColumn(world.ChunkPos{1, 1}, world.Overworld, worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry))
	db.Close()
	// refused checks that c is refused with an error matching want and
	// that it changed nothing in the template bz.
	refused := func(t *testing.T, c Config, want error, says string) {
		t.Helper()
		before := strings.Join(listing(t, bz), "\n")
		c.Addr, c.Offline, c.Log = "127.0.0.1:0", true, quiet
		r, err := c.New()
		if err == nil {
			if r.Arena != nil {
				r.Arena.Shutdown()
			}
			closeUnserved(r)
		}
		if !errors.Is(err, want) || !strings.Contains(err.Error(), says) {
			t.Fatalf("%+v: %v", c, err)
		}
		if after := strings.Join(listing(t, bz), "\n"); after != before {
			t.Fatal("the Blaze world was changed")
		}
	}

	t.Run("import of a zipped Blaze world", func(t *testing.T) {
		zipped := filepath.Join(t.TempDir(), "blaze.mcworld")
		zipDir(t, bz, zipped)
		dir := filepath.Join(t.TempDir(), "w")
		refused(t, Config{Dir: dir, Import: zipped}, ErrAmbiguous, "holds a Blaze world")
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the refused import made %s: %v", dir, err)
		}
	})

	both := filepath.Join(t.TempDir(), "both")
	if err := fsutil.CopyTree(bz, both, nil); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(both, "db"), 0o755)
	for name, c := range map[string]Config{
		"world holding both kinds":    {Dir: both},
		"template holding both kinds": {Dir: filepath.Join(t.TempDir(), "arena"), ArenaTemplate: both},
	} {
		t.Run(name, func(t *testing.T) {
			before := strings.Join(listing(t, both), "\n")
			refused(t, c, convert.ErrAmbiguousWorld, "db/ and blaze/")
			if after := strings.Join(listing(t, both), "\n"); after != before {
				t.Fatal("the directory holding both kinds of world was changed")
			}
		})
	}

	for name, overlay := range map[string]string{
		"overlay is the template":     bz,
		"overlay inside the template": filepath.Join(bz, "arena"),
		"overlay holds the template":  filepath.Dir(bz),
	} {
		t.Run(name, func(t *testing.T) {
			refused(t, Config{Dir: overlay, ArenaTemplate: bz}, ErrAmbiguous, "apart")
		})
	}
}

// Issue 38 item 4: the demo's compression choice reaches the world it
// imports and opens.
func TestImportCompression(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	r, err := Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Import: worldtest.Worlds(t)[1], Compression: blazedb.CompressionZstd, Log: quiet}.New()
	if err != nil {
		t.Fatal(err)
	}
	defer closeUnserved(r)
	codecs, err := r.World.FrameCodecs()
	if err != nil {
		t.Fatal(err)
	}
	if codecs[blazedb.CompressionZstd] == 0 || codecs[blazedb.CompressionLZ4] != 0 {
		t.Fatalf("imported with zstd: frames %v", codecs)
	}
}
