package tests

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/killtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/item"
	"github.com/df-mc/dragonfly/server/world"
)

// A server killed with SIGKILL while its world is being built in keeps
// every block its World had saved more than a second before the kill (in
// DurabilityBalanced and DurabilityFast, the stores of the last second may
// still be queued: the README's promises): TestKilledServer runs a
// Dragonfly World on Blaze in a child process, kills it at a random
// moment, opens the world again with a World of its own and checks each
// block.

const killChildEnv = "BLAZE_KILL_CHILD_DIR"

// killSaveEvery is how many blocks the child sets between saves.
const killSaveEvery = 5

// killBlocks are the blocks the child sets, many of them states the
// world's block dictionary does not hold yet.
var killBlocks = func() []world.Block {
	bs := []world.Block{block.Stone{}, block.Obsidian{}, block.Dirt{}, block.Glass{}}
	for _, c := range item.Colours() {
		bs = append(bs, block.Wool{Colour: c}, block.Concrete{Colour: c})
	}
	for _, w := range block.WoodTypes() {
		bs = append(bs, block.Planks{Wood: w})
	}
	return bs
}()

// killSet is the i-th block set: where and what. Positions spread over 100
// chunks and repeat, so later sets overwrite earlier ones.
func killSet(i int) (cube.Pos, world.Block) {
	return cube.Pos{(i * 37) % 160, 70 + i%3, (i * 53 / 3) % 160}, killBlocks[(i*7+i/11)%len(killBlocks)]
}

// errorLog fails the process when Dragonfly logs an error: a World logs a
// failed StoreColumn and goes on.
type errorLog struct{ slog.Handler }

func (h errorLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		var attrs []string
		r.Attrs(func(a slog.Attr) bool { attrs = append(attrs, a.String()); return true })
		fmt.Println("error logged:", r.Message, strings.Join(attrs, " "))
		os.Exit(3)
	}
	return nil
}

// TestKilledServerChild is the child of TestKilledServer: it sets blocks
// in a World on Blaze from BLAZE_KILL_START on, saves every killSaveEvery,
// and prints the last block each save covered once it has returned.
func TestKilledServerChild(t *testing.T) {
	dir := os.Getenv(killChildEnv)
	if dir == "" {
		t.Skip("run by TestKilledServer")
	}
	mode, _ := strconv.Atoi(os.Getenv("BLAZE_KILL_MODE"))
	log := slog.New(errorLog{quiet.Handler()})
	db, err := provider.Config{Log: log, Durability: blazedb.Durability(mode)}.Open(dir)
	if err != nil {
		fmt.Println("open failed:", err)
		os.Exit(2)
	}
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: log}.New()
	start, _ := strconv.Atoi(os.Getenv("BLAZE_KILL_START"))
	out := bufio.NewWriterSize(os.Stdout, 64)
	for i := start; ; i += killSaveEvery {
		<-w.Do(func(tx *world.Tx) {
			for j := i; j < i+killSaveEvery; j++ {
				pos, b := killSet(j)
				tx.SetBlock(pos, b, nil)
			}
		}).Done()
		w.Save()
		fmt.Fprintf(out, "%d\n", i+killSaveEvery-1)
		out.Flush()
	}
}

// processLossBound is what a process crash may lose in DurabilityBalanced
// and DurabilityFast: the stores acknowledged in the last second, which the
// provider's store queue has not yet written (README, the promises table;
// issue 42). Its other bound, 64 MiB of queued columns, is far beyond what
// the child stores.
const processLossBound = time.Second

// TestKilledServer kills a child building in its world, in the default
// mode and in DurabilityFast, and checks after each kill that every block a
// save covered is there (the last one set at its place, or one set after
// it) if the save returned more than processLossBound before the kill:
// the saves after that may be lost, but only as a whole suffix of them.
// The last two kills come more than processLossBound after the child's
// first save, so that some saves are old enough to be required (the
// queue's bound itself, which this child's stores never reach, is
// provider's TestStoreWaitsPastTheAgeBound). It measures what the kills
// lost, in saves and in time before the kill.
func TestKilledServer(t *testing.T) {
	if os.Getenv(killChildEnv) != "" {
		t.Skip("child")
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	acked := -1 // every set up to acked is in the world
	var lostSaves int
	var lostWindow time.Duration
	for run := range 6 {
		mode := blazedb.DurabilityBalanced
		if run%2 == 1 {
			mode = blazedb.DurabilityFast
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledServerChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+dir,
			"BLAZE_KILL_START="+strconv.Itoa(acked+1), "BLAZE_KILL_MODE="+strconv.Itoa(int(mode)))
		wait := time.Duration(20+rng.IntN(200)) * time.Millisecond
		if run >= 4 {
			wait += processLossBound + 200*time.Millisecond // saves older than the bound
		}
		acks, killed := killtest.RunTimed(t, cmd, wait)
		last := acks[len(acks)-1].N
		// Every save that returned processLossBound before the kill must
		// be there.
		must := acked
		for _, a := range acks {
			if killed.Sub(a.At) > processLossBound {
				must = a.N
			}
		}
		if run >= 4 && must == acked {
			t.Fatalf("run %d: no save returned more than %v before the kill, so the bound went untested", run, processLossBound)
		}
		if err := checkKilledWorld(t, dir, must, last, run); err != nil {
			t.Fatalf("run %d (%v): a save that returned more than %v before the kill is lost: %v", run, mode, processLossBound, err)
		}
		// The newest save the world holds whole, the later ones lost: the
		// saves kept are a prefix of them, so it is found by bisection
		// among those after must (every world checked opens it again).
		kept := must
		lo, hi := 0, len(acks)
		for lo < hi && acks[lo].N <= must {
			lo++
		}
		for lo < hi {
			mid := (lo + hi) / 2
			if checkKilledWorld(t, dir, acks[mid].N, last, run) == nil {
				kept, lo = acks[mid].N, mid+1
			} else {
				hi = mid
			}
		}
		if lo < len(acks) {
			lostSaves += len(acks) - lo
			lostWindow = max(lostWindow, killed.Sub(acks[lo].At))
		}
		if kept <= acked {
			t.Fatalf("run %d: no save returned and kept", run)
		}
		acked = kept
	}
	t.Logf("6 kills; %d blocks set in saves kept; %d saves lost, the oldest returned %v before its kill", acked+1, lostSaves, lostWindow)
}

// checkKilledWorld opens the world in dir and checks that each place holds
// the last block set there up to acked, or one the child may have set
// after it, up to the save after last (which the kill cut short).
func checkKilledWorld(t *testing.T, dir string, acked, last, run int) error {
	t.Helper()
	// As a World would, before runtime ids are asked for.
	world.DefaultBlockRegistry.Finalize()
	// What each place may hold; the first is the acknowledged block.
	want := map[cube.Pos][]uint32{}
	for i := 0; i <= acked; i++ {
		pos, b := killSet(i)
		want[pos] = []uint32{world.BlockRuntimeID(b)}
	}
	for i := acked + 1; i <= last+killSaveEvery; i++ {
		pos, b := killSet(i)
		want[pos] = append(want[pos], world.BlockRuntimeID(b))
	}
	db, err := provider.Config{Log: quiet, ReadOnly: true}.Open(dir)
	if err != nil {
		t.Fatalf("run %d: open after the kill: %v", run, err)
	}
	w := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet, ReadOnly: true}.New()
	defer w.Close()
	var bad error
	<-w.Do(func(tx *world.Tx) {
		for i := 0; i <= acked; i++ {
			pos, _ := killSet(i)
			got := world.BlockRuntimeID(tx.Block(pos))
			ok := false
			for _, rid := range want[pos] {
				ok = ok || rid == got
			}
			if !ok {
				bad = fmt.Errorf("run %d: %v holds %v; saved up to set %d, it should hold %v", run, pos, tx.Block(pos), acked, want[pos])
				return
			}
		}
	}).Done()
	if rec := db.Engine().Recovery(); len(rec.Corrupt) > 0 {
		t.Fatalf("run %d: recovery skipped damage after a process kill: %v", run, rec.Corrupt)
	}
	return bad
}
