package blazedb

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/killtest"
)

const childEnv = "BLAZE_CRASH_CHILD_DIR"

// TestProcessCrashChild is the child of TestProcessCrash: it writes in
// DurabilitySafe and prints the id of each write once it has returned.
func TestProcessCrashChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		t.Skip("run by TestProcessCrash")
	}
	db, err := Open(dir, Options{Durability: DurabilitySafe, Logger: quiet, CompactMinBytes: 256 << 10})
	if err != nil {
		fmt.Println("open failed:", err)
		os.Exit(2)
	}
	start, _ := strconv.Atoi(os.Getenv("BLAZE_CRASH_START"))
	out := bufio.NewWriterSize(os.Stdout, 64)
	for id := start; ; id++ {
		k := Key{X: int32(id % 37), Z: int32(id % 5)}
		v := []byte(fmt.Sprintf("%d:%s", id, strings.Repeat("x", id%2000)))
		if id%10 == 0 {
			var b Batch
			b.Put(k, v)
			b.PutNamed("last", []byte(strconv.Itoa(id)))
			err = db.Apply(&b)
		} else {
			err = db.Put(k, v)
		}
		if err != nil {
			fmt.Println("write failed:", err)
			os.Exit(3)
		}
		fmt.Fprintf(out, "%d\n", id)
		out.Flush()
	}
}

// TestProcessCrash kills a writing child with SIGKILL at random moments and
// checks that every write it acknowledged is there.
func TestProcessCrash(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("child")
	}
	runs := soak(20, 200)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(42, 42))
	// acked[key] is the id of the last acknowledged write of each key.
	acked := map[Key]int{}
	next := 0
	for run := 0; run < runs; run++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProcessCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+dir, "BLAZE_CRASH_START="+strconv.Itoa(next))
		// Let it get going, then kill it at a random moment.
		last := killtest.Run(t, cmd, time.Duration(5+rng.IntN(60))*time.Millisecond)
		for id := next; id <= last; id++ {
			acked[Key{X: int32(id % 37), Z: int32(id % 5)}] = id
		}
		// Every acknowledged write is there, exactly; the one in flight
		// (last+1) may be too.
		db, err := Open(dir, Options{Logger: quiet, ReadOnly: run%2 == 1})
		if err != nil {
			t.Fatalf("run %d: reopen: %v", run, err)
		}
		for k, id := range acked {
			v, err := db.Get(k)
			if err != nil {
				t.Fatalf("run %d: acknowledged write %d of %v: %v", run, id, k, err)
			}
			got, _ := strconv.Atoi(strings.SplitN(string(v), ":", 2)[0])
			want := fmt.Sprintf("%d:%s", got, strings.Repeat("x", got%2000))
			if string(v) != want || (got != id && got != last+1) {
				t.Fatalf("run %d: %v holds write %d, acknowledged %d (last acked %d)", run, k, got, id, last)
			}
			if got == last+1 {
				acked[k] = got
			}
		}
		if err := db.Check(); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		next = last + 2
	}
}
