package demo

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/item/inventory"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/player/playerdb"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
)

// waitBackups waits until at least n backups, in the demo's own name
// format and finished, are in bdir, and returns their names.
func waitBackups(t *testing.T, bdir string, n int) []string {
	t.Helper()
	made := map[string]bool{}
	for deadline := time.Now().Add(20 * time.Second); len(made) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("backups made: %v, want %d", made, n)
		}
		entries, _ := os.ReadDir(bdir)
		for _, e := range entries {
			rest, ok := strings.CutPrefix(e.Name(), backupPrefix)
			if _, err := time.Parse(backupTime, rest); ok && err == nil && len(rest) == len(backupTime) {
				made[e.Name()] = true
			}
		}
	}
	names := make([]string, 0, len(made))
	for n := range made {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Issue 35 item 7: the pruning counts and deletes only directories whose
// whole name is the demo's own format. The user's entries that merely
// start with "backup-" stay, with what they hold, and take none of
// BackupKeep's slots; a link named as a backup is not the demo's either.
func TestBackupPruningLeavesForeignEntries(t *testing.T) {
	bdir := filepath.Join(t.TempDir(), "backups")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "precious"), []byte("x"), 0o644)
	foreign := []string{
		"backup-mine",                         // the user's own directory
		"backup-20000101-000000.000-keep",     // the format, then more
		"backup-20000101-000000",              // the format cut short
		"backup-2000010x-000000.000",          // not a time
		"backup-20000101-000000.000.old",      // another suffix
		"backup-20000101-000000.000" + ".tmp", // not the build suffix
	}
	for _, n := range foreign {
		if err := os.MkdirAll(filepath.Join(bdir, n), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(bdir, n, "mine"), []byte(n), 0o644)
	}
	os.WriteFile(filepath.Join(bdir, "backup-notes.txt"), []byte("notes"), 0o644)
	// Named as the oldest backup, but a link the user made.
	link := "backup-19990101-000000.000"
	if err := os.Symlink(outside, filepath.Join(bdir, link)); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	// The demo's own: an old finished backup and what a crash left.
	old := "backup-20000102-000000.000"
	leftovers := []string{old + vfs.BuildSuffix, old + vfs.BuildSuffix + vfs.BuildSuffix}
	for _, n := range append([]string{old}, leftovers...) {
		os.MkdirAll(filepath.Join(bdir, n), 0o755)
	}

	r, err := Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "w"), Offline: true, Log: quiet,
		BackupDir: bdir, BackupEvery: 20 * time.Millisecond, BackupKeep: 2}.New()
	if err != nil {
		t.Fatal(err)
	}
	made := waitBackups(t, bdir, 4) // the old one and three new
	if err := r.StopBackups(); err != nil {
		t.Fatal(err)
	}
	closeUnserved(r)

	for _, n := range foreign {
		if b, err := os.ReadFile(filepath.Join(bdir, n, "mine")); err != nil || string(b) != n {
			t.Fatalf("the user's %s was deleted or changed: %v", n, err)
		}
	}
	if _, err := os.ReadFile(filepath.Join(bdir, "backup-notes.txt")); err != nil {
		t.Fatal("the user's file was deleted:", err)
	}
	if _, err := os.Lstat(filepath.Join(bdir, link)); err != nil {
		t.Fatal("the user's link was deleted:", err)
	}
	if _, err := os.ReadFile(filepath.Join(outside, "precious")); err != nil {
		t.Fatal("the link's target was emptied:", err)
	}
	var own []string
	entries, _ := os.ReadDir(bdir)
	for _, e := range entries {
		if e.Type().IsDir() && !slices.Contains(foreign, e.Name()) {
			own = append(own, e.Name())
		}
	}
	// The two newest: foreign entries took no slot, and the old backup
	// and the leftovers are gone.
	if len(own) != 2 || own[0] < made[len(made)-2] {
		t.Fatalf("the demo's backups kept: %v, want the 2 newest of %v", own, made)
	}
}

// playerConfig is a player's data with position x.
func playerConfig(id uuid.UUID, x float64) player.Config {
	return player.Config{
		UUID: id, Name: "p", GameMode: world.GameModeSurvival, Position: mgl64.Vec3{x, 70, 3},
		Health: 20, MaxHealth: 20, Food: 20,
		Inventory: inventory.New(36, nil), OffHand: inventory.New(1, nil),
		Armour: inventory.NewArmour(nil), EnderChestInventory: inventory.New(27, nil),
	}
}

// loadPosition reads player id's position from the Blaze world in dir.
func loadPosition(t *testing.T, dir string, id uuid.UUID) float64 {
	t.Helper()
	db, err := provider.Config{Log: quiet, ReadOnly: true}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conf, _, err := db.Players().Load(id, nil)
	if err != nil {
		t.Fatalf("player %v in %s: %v", id, dir, err)
	}
	return conf.Position[0]
}

// syncWorld is a World without goroutines, for saving a player's data.
func syncWorld(t *testing.T) *world.World {
	w := world.Config{Synchronous: true, Log: quiet}.New()
	t.Cleanup(func() { w.Close() })
	return w
}

// Issue 35 item 8: a backup holds the players' data beside the world, so
// that the backup directory restores the whole server: a server started
// on a copy of it finds both the columns and the players. Issue 40 item
// 2: the players' data is in the world, and the playerdb folder of an
// earlier build is moved in at the start.
func TestBackupHoldsPlayers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	w := syncWorld(t)
	id := uuid.New()
	// A player who played before this start.
	pdb, err := playerdb.NewProvider(filepath.Join(dir, "players"))
	if err != nil {
		t.Fatal(err)
	}
	if err := pdb.Save(id, playerConfig(id, 17), w); err != nil {
		t.Fatal(err)
	}
	pdb.Close()
	bdir := filepath.Join(t.TempDir(), "backups")
	r, err := Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet,
		BackupDir: bdir, BackupEvery: 20 * time.Millisecond, BackupKeep: 1}.New()
	if err != nil {
		t.Fatal(err)
	}
	col := worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)
	if err := r.World.StoreColumn(world.ChunkPos{2, 3}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	stored := backupPrefix + time.Now().UTC().Format(backupTime)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no backup made after the store")
		}
		if made := waitBackups(t, bdir, 1); made[len(made)-1] > stored {
			break
		}
	}
	if err := r.StopBackups(); err != nil {
		t.Fatal(err)
	}
	closeUnserved(r)
	made := waitBackups(t, bdir, 1) // the newest: the others are pruned
	if len(made) != 1 || made[0] <= stored {
		t.Fatalf("backups kept: %v", made)
	}
	backup := filepath.Join(bdir, made[0])
	if got := loadPosition(t, backup, id); got != 17 {
		t.Fatalf("the backup's player is at x=%v, want 17", got)
	}
	// Restored as the world of a new server.
	restored := filepath.Join(t.TempDir(), "restored")
	if err := fsutil.CopyTree(backup, restored, nil); err != nil {
		t.Fatal(err)
	}
	db, err := provider.Config{Log: quiet}.Open(restored)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.LoadColumn(world.ChunkPos{2, 3}, world.Overworld)
	if err == nil {
		err = worldtest.Compare(col, got)
	}
	db.Close()
	if err != nil {
		t.Fatal("the restored world's column:", err)
	}
	if _, err := os.Stat(filepath.Join(dir, playersDir+importedSuffix)); err != nil {
		t.Fatalf("the old players folder was not set aside: %v", err)
	}
	if got := loadPosition(t, restored, id); got != 17 {
		t.Fatalf("the restored player is at x=%v, want 17", got)
	}
}

// Issue 35 item 8: players saved while backups run: every save returns,
// and every backup opens and holds a save that had returned before the
// backup finished.
func TestBackupCopiesPlayersWhileSaving(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	bdir := filepath.Join(t.TempDir(), "backups")
	r, err := Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet,
		BackupDir: bdir, BackupEvery: 5 * time.Millisecond, BackupKeep: 100}.New()
	if err != nil {
		t.Fatal(err)
	}
	w := syncWorld(t)
	pp := r.World.Players()
	ids := []uuid.UUID{uuid.New(), uuid.New()}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var saveErr error
	var mu sync.Mutex
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := pp.Save(id, playerConfig(id, float64(i)), w); err != nil {
					mu.Lock()
					saveErr = errors.Join(saveErr, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	made := waitBackups(t, bdir, 5)
	close(stop)
	wg.Wait()
	if err := r.StopBackups(); err != nil {
		t.Fatal(err)
	}
	closeUnserved(r)
	if saveErr != nil {
		t.Fatal("a save failed while backups ran:", saveErr)
	}
	for _, n := range made {
		for _, id := range ids {
			db, err := provider.Config{Log: quiet, ReadOnly: true}.Open(filepath.Join(bdir, n))
			if err != nil {
				t.Fatalf("backup %s: %v", n, err)
			}
			_, _, err = db.Players().Load(id, nil)
			db.Close()
			if err != nil && n != made[0] { // the first may come before the first save
				t.Fatalf("backup %s, player %v: %v", n, id, err)
			}
		}
	}
}
