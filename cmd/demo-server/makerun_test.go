//go:build unix

package main

import (
	"bufio"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 38 item 6: `make run` ran `go run`, which exited 1 on Ctrl-C after
// the server had closed cleanly, and make reported "Error 1". The recipe
// now builds the server and execs it, so that the SIGINT a terminal sends
// to make's process group reaches the server itself, which closes and
// exits 0: make reports no error. (GNU make then re-raises the SIGINT on
// itself, as after any command it runs, so its own status is that of an
// interrupt, never an error's.)
func TestMakeRunInterrupt(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	dir := filepath.Join(t.TempDir(), "w")
	cmd := exec.Command("make", "--no-print-directory", "run", "ARGS=-offline -addr 127.0.0.1:0 -world "+dir)
	cmd.Dir = filepath.Join("..", "..")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a process group, as a terminal's job
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	group := -cmd.Process.Pid
	stop := time.AfterFunc(5*time.Minute, func() { syscall.Kill(group, syscall.SIGKILL) })
	defer stop.Stop()
	defer syscall.Kill(group, syscall.SIGKILL)

	var log strings.Builder
	lines := bufio.NewScanner(out)
	interrupted := false
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if !interrupted && strings.Contains(lines.Text(), "Dragonfly server started.") {
			// Ctrl-C: SIGINT to every process of the foreground group.
			if err := syscall.Kill(group, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			interrupted = true
		}
	}
	err = cmd.Wait()
	if !interrupted {
		t.Fatalf("the server never started:\n%s", log.String())
	}
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGINT) {
		t.Fatalf("make ended with %v, neither 0 nor its own interrupt:\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "Server closed.") || strings.Contains(log.String(), "Error") {
		t.Fatalf("make reported an error, or the server did not close cleanly:\n%s", log.String())
	}
}
