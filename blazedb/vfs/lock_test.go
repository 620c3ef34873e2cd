//go:build unix

package vfs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 35 item 17: a lock conflict says truly whose lock it is. A second
// lock in this process said "another user"; it must say this process, and
// a lock another process holds must say so.
func TestLockConflictSaysWhoseLock(t *testing.T) {
	if name := os.Getenv("BLAZE_VFS_HOLD_LOCK"); name != "" {
		// The other process: hold the lock until the test closes stdin.
		l, err := Default.Lock(name, true)
		if err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("held\n")
		os.Stdin.Read(make([]byte, 1))
		l.Close()
		os.Exit(0)
	}
	name := filepath.Join(t.TempDir(), "LOCK")

	l, err := Default.Lock(name, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Default.Lock(name, true)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "by this process") || strings.Contains(err.Error(), "another") {
		t.Fatalf("a second lock in this process: %v, want ErrLocked by this process", err)
	}
	if _, err := Default.Lock(name, false); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "by this process") {
		t.Fatalf("a shared lock beside this process's exclusive one: %v, want ErrLocked by this process", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err := Default.Lock(name, true); err != nil {
		t.Fatalf("the lock again once released: %v", err)
	} else {
		l.Close()
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestLockConflictSaysWhoseLock$")
	cmd.Env = append(os.Environ(), "BLAZE_VFS_HOLD_LOCK="+name)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if string(buf[:n]) != "held\n" {
		t.Fatalf("the other process: %q", buf[:n])
	}
	_, err = Default.Lock(name, true)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "by another process") {
		t.Fatalf("a lock another process holds: %v, want ErrLocked by another process", err)
	}
}
