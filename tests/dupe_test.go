package tests

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/killtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/item"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
)

// The crash dupe closed (issue 40 item 3): TestDupe runs a Dragonfly server
// on Blaze, its players on Blaze too, in a child process, where a player
// keeps moving diamonds between a chest and its inventory while
// checkpoints (provider.Checkpoint) are taken back to back; it kills the
// child at a random moment, many times, and after each kill the world
// holds every diamond exactly once, in the chest or with the player.

const dupeChildEnv = "BLAZE_DUPE_CHILD_DIR"

// dupePlayer is the player's UUID; dupeChest is where the chest stands;
// dupeTotal is how many diamonds there are.
var (
	dupePlayer = uuid.MustParse("40404040-4040-4040-8040-404040404040")
	dupeChest  = cube.Pos{8, 100, 8}
)

const dupeTotal = 48

// TestDupeChild is the child of TestDupe: it opens the world, puts the
// chest and the player in it the first time, and then moves diamonds and
// takes checkpoints until it is killed, printing the number of each
// checkpoint that returned.
func TestDupeChild(t *testing.T) {
	dir := os.Getenv(dupeChildEnv)
	if dir == "" {
		t.Skip("run by TestDupe")
	}
	fail := func(what string, err error) {
		fmt.Println(what+":", err)
		os.Exit(2)
	}
	mode, _ := strconv.Atoi(os.Getenv("BLAZE_DUPE_MODE"))
	log := slog.New(errorLog{quiet.Handler()})
	db, err := provider.Config{Log: log, Durability: blazedb.Durability(mode)}.Open(dir)
	if err != nil {
		fail("open", err)
	}
	pp := db.Players()
	srv := server.Config{Log: log, WorldProvider: db, PlayerProvider: pp, SaveInterval: -1}.New()
	ow := srv.World()
	conf, _, err := pp.Load(dupePlayer, nil)
	first := errors.Is(err, leveldb.ErrNotFound)
	if first {
		conf = player.Config{Name: "Steve", UUID: dupePlayer}
	} else if err != nil {
		fail("load the player", err)
	}
	h := world.EntitySpawnOpts{Position: mgl64.Vec3{9.5, 101, 8.5}, ID: dupePlayer}.New(player.Type, conf)
	<-ow.Do(func(tx *world.Tx) {
		if first {
			tx.SetBlock(dupeChest.Side(cube.FaceDown), block.Stone{}, nil)
			tx.SetBlock(dupeChest, block.NewChest(), nil)
			c := tx.Block(dupeChest).(block.Chest)
			if _, err := c.Inventory(tx, dupeChest).AddItem(item.NewStack(item.Diamond{}, dupeTotal)); err != nil {
				fail("fill the chest", err)
			}
		}
		tx.AddEntity(h)
	}).Done()

	// The player takes one diamond at a time until the chest is empty,
	// then puts them all back, each move one transaction, as a container
	// transaction is; setting the chest again marks its column changed.
	go func() {
		for {
			<-h.Do(func(tx *world.Tx, e world.Entity) {
				c, ok := tx.Block(dupeChest).(block.Chest)
				if !ok {
					fail("the chest", fmt.Errorf("%v stands there", tx.Block(dupeChest)))
				}
				chest, inv := c.Inventory(tx, dupeChest), e.(*player.Player).Inventory()
				from, to := chest, inv
				n := 1
				if len(chest.Items()) == 0 {
					from, to, n = inv, chest, count(inv.Items())
				}
				if err := from.RemoveItem(item.NewStack(item.Diamond{}, n)); err != nil {
					fail("take", err)
				}
				if _, err := to.AddItem(item.NewStack(item.Diamond{}, n)); err != nil {
					fail("put", err)
				}
				tx.SetBlock(dupeChest, c, nil)
			}).Done()
		}
	}()
	out := bufio.NewWriterSize(os.Stdout, 64)
	for n := 0; ; n++ {
		if err := provider.Checkpoint(srv); err != nil {
			fail("checkpoint", err)
		}
		fmt.Fprintf(out, "%d\n", n)
		out.Flush()
	}
}

// count counts the items of stacks.
func count(stacks []item.Stack) int {
	n := 0
	for _, s := range stacks {
		n += s.Count()
	}
	return n
}

// TestDupe kills the child many times, at random moments around its
// checkpoints, in two durability modes, and counts the diamonds after
// each kill.
func TestDupe(t *testing.T) {
	if os.Getenv(dupeChildEnv) != "" {
		t.Skip("child")
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(40, 3))
	const runs = 12
	moved := 0 // kills after which the player held some diamonds
	for run := range runs {
		mode := blazedb.DurabilityBalanced
		if run%2 == 1 {
			mode = blazedb.DurabilityFast
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestDupeChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), dupeChildEnv+"="+dir, "BLAZE_DUPE_MODE="+strconv.Itoa(int(mode)))
		killtest.Run(t, cmd, time.Duration(10+rng.IntN(300))*time.Millisecond)
		chest, inv := dupeCount(t, dir, run)
		if chest+inv != dupeTotal {
			t.Fatalf("run %d: %d diamonds in the chest and %d with the player after the kill, want %d in all", run, chest, inv, dupeTotal)
		}
		if inv > 0 {
			moved++
		}
	}
	if moved == 0 {
		t.Fatalf("after none of %d kills did the player hold a diamond: the checkpoints kept no move", runs)
	}
	t.Logf("%d kills, each with %d diamonds exactly; after %d the player held some", runs, dupeTotal, moved)
}

// dupeCount opens the world in dir as a restarted server would and counts
// the diamonds in the chest and with the player.
func dupeCount(t *testing.T, dir string, run int) (chest, inv int) {
	t.Helper()
	world.DefaultBlockRegistry.Finalize()
	db, err := provider.Config{Log: quiet, ReadOnly: true}.Open(dir)
	if err != nil {
		t.Fatalf("run %d: open after the kill: %v", run, err)
	}
	defer db.Close()
	if rec := db.Engine().Recovery(); len(rec.Corrupt) > 0 {
		t.Fatalf("run %d: recovery skipped damage after a process kill: %v", run, rec.Corrupt)
	}
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet, ReadOnly: true}.New()
	defer w.Close()
	<-w.Do(func(tx *world.Tx) {
		c, ok := tx.Block(dupeChest).(block.Chest)
		if !ok {
			t.Errorf("run %d: no chest: %v", run, tx.Block(dupeChest))
			return
		}
		chest = count(c.Inventory(tx, dupeChest).Items())
	}).Done()
	conf, _, err := db.Players().Load(dupePlayer, nil)
	if err != nil {
		t.Fatalf("run %d: the player's data: %v", run, err)
	}
	return chest, count(conf.Inventory.Items())
}
