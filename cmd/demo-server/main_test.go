package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/provider"
)

// mainArgsEnv, when set, makes the test binary run main with its value,
// split at tabs, as arguments.
const mainArgsEnv = "BLAZE_DEMO_SERVER_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		os.Args = append([]string{"demo-server"}, strings.Split(args, "\t")...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Issue 35 item 12: the server with an address it cannot listen on exits
// with status 1 and says why, where it panicked in Dragonfly's
// Server.listen; the world it opened is closed cleanly and opens again.
func TestBadAddressExits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join([]string{"-addr", "no address", "-world", dir, "-offline"}, "\t"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v; stderr:\n%s", err, stderr.String())
	}
	if out := stderr.String(); !strings.Contains(out, "demo-server: cannot listen on no address") || strings.Contains(out, "panic") {
		t.Fatalf("stderr:\n%s", out)
	}
	db, err := provider.Config{}.Open(dir)
	if err != nil {
		t.Fatal("the world does not open after:", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
