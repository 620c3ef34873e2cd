package killtest

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Run starts cmd, waits until it has printed its first number, lets it go
// on for wait, kills it (SIGKILL) and returns the last number it printed.
// It fails t if the child printed no number before it ended, or printed
// anything else.
func Run(t testing.TB, cmd *exec.Cmd, wait time.Duration) int {
	t.Helper()
	acks, _ := RunTimed(t, cmd, wait)
	return acks[len(acks)-1].N
}

// Ack is a number the child printed, and when the parent read it: a
// moment after the child made it durable.
type Ack struct {
	N  int
	At time.Time
}

// RunTimed is Run returning every number the child printed, in order
// (never none), with when each was read, and the moment of the kill.
func RunTimed(t testing.TB, cmd *exec.Cmd, wait time.Duration) (acks []Ack, killed time.Time) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	numbers := make(chan Ack, 1<<16)
	other := make(chan string, 1)
	go func() {
		var rest strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if n, err := strconv.Atoi(sc.Text()); err == nil {
				numbers <- Ack{n, time.Now()}
			} else {
				rest.WriteString(sc.Text() + "\n")
			}
		}
		close(numbers)
		other <- rest.String()
	}()
	first, ok := <-numbers
	if !ok {
		cmd.Wait()
		t.Fatalf("the child printed no progress: %s", <-other)
	}
	acks = append(acks, first)
	time.Sleep(wait)
	killed = time.Now()
	cmd.Process.Kill()
	for a := range numbers {
		acks = append(acks, a)
	}
	cmd.Wait()
	if rest := <-other; rest != "" {
		t.Fatalf("the child said: %s", rest)
	}
	return acks, killed
}
