package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
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

// Issue 38 item 7: `demo-server -metrics ADDR` serves Prometheus' /metrics
// on ADDR over loopback while the server runs (the address it logs), with
// Blaze's figures; on SIGINT the server closes cleanly and exits 0.
func TestMetricsFlag(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	dir := filepath.Join(t.TempDir(), "w")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join([]string{
		"-addr", "127.0.0.1:0", "-world", dir, "-offline", "-metrics", "127.0.0.1:0"}, "\t"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var log strings.Builder
	lines := bufio.NewScanner(stderr)
	url := ""
	for url == "" && lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if m := metricsURL.FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("no metrics address logged:\n%s", log.String())
	}
	go io.Copy(io.Discard, stderr) // the rest of the log, until exit

	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	for _, want := range []string{"\nblaze_engine_keys{kind=\"chunk\"} ", "\nblaze_engine_log_bytes ", "\nblaze_prefetch_players 0\n", "\ngo_goroutines "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v", err)
	}
}

var metricsURL = regexp.MustCompile(`msg="serving metrics" url=(http://127\.0\.0\.1:\d+/metrics)`)
