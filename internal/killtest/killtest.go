// Package killtest kills a child process at a random moment of its work,
// for the tests that check what survives a SIGKILL. The child is a test
// binary that prints one number on a line each time it has made something
// durable (the id of a write, the last block of a save), and nothing else
// unless it fails.
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
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	numbers := make(chan int, 1<<16)
	other := make(chan string, 1)
	go func() {
		var rest strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if n, err := strconv.Atoi(sc.Text()); err == nil {
				numbers <- n
			} else {
				rest.WriteString(sc.Text() + "\n")
			}
		}
		close(numbers)
		other <- rest.String()
	}()
	last, ok := <-numbers
	if !ok {
		cmd.Wait()
		t.Fatalf("the child printed no progress: %s", <-other)
	}
	time.Sleep(wait)
	cmd.Process.Kill()
	for n := range numbers {
		last = n
	}
	cmd.Wait()
	if rest := <-other; rest != "" {
		t.Fatalf("the child said: %s", rest)
	}
	return last
}
