package s3test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Module is what Install installs; the module proxy serves explicit
// versions only.
const Module = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// The credentials every server takes.
const (
	AccessKey = "blazetest"
	SecretKey = "blazetestsecret"
)

var install struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of versitygw: on PATH, in GOBIN or GOPATH/bin,
// or installed there now (once per process).
func Binary() (string, error) {
	install.once.Do(func() { install.path, install.err = find() })
	return install.path, install.err
}

func find() (string, error) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	bin := goBin()
	p := filepath.Join(bin, "versitygw")
	if runtime.GOOS == "windows" {
		p += ".exe"
	}
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	cmd := exec.Command("go", "install", Module)
	cmd.Dir = os.TempDir() // outside any module: go install pkg@version
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %v\n%s", Module, err, out)
	}
	return p, nil
}

// goBin is where go install puts binaries.
func goBin() string {
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		return filepath.Join(os.Getenv("HOME"), "go", "bin")
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 0 && strings.TrimSpace(lines[0]) != "" {
		return strings.TrimSpace(lines[0])
	}
	gopath := strings.TrimSpace(lines[len(lines)-1])
	return filepath.Join(strings.Split(gopath, string(os.PathListSeparator))[0], "bin")
}

// Server is a running versitygw. Its methods are for the test's goroutine.
type Server struct {
	URL  string // http://127.0.0.1:PORT
	Dir  string // the directory it serves; each bucket is a directory in it
	addr string
	cmd  *exec.Cmd
	tb   testing.TB
}

// Start starts a server for tb, stopped at its cleanup.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("s3test: versitygw is needed in CI: %v", err)
		}
		tb.Skipf("s3test: no versitygw: %v", err)
	}
	s := &Server{Dir: tb.TempDir(), tb: tb}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s.addr = l.Addr().String()
	l.Close()
	s.URL = "http://" + s.addr
	s.start(bin)
	tb.Cleanup(s.Stop)
	return s
}

func (s *Server) start(bin string) {
	s.tb.Helper()
	s.cmd = exec.Command(bin, "--access", AccessKey, "--secret", SecretKey, "--port", s.addr, "posix", s.Dir)
	s.cmd.Stdout, s.cmd.Stderr = os.Stderr, os.Stderr
	if !testing.Verbose() {
		s.cmd.Stdout, s.cmd.Stderr = nil, nil
	}
	if err := s.cmd.Start(); err != nil {
		s.tb.Fatalf("s3test: start versitygw: %v", err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			s.Stop()
			s.tb.Fatalf("s3test: versitygw does not answer on %s: %v", s.addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server (as a crash would) and waits for it; the
// directory stays, for Restart.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server again on the same address and directory.
func (s *Server) Restart() {
	s.tb.Helper()
	bin, _ := Binary()
	s.start(bin)
}

// SetEnv points the standard AWS environment variables at s, with its
// credentials, for the rest of tb: the way a server owner configures the
// demo's -replica and blaze restore.
func (s *Server) SetEnv(tb testing.TB) {
	tb.Setenv("AWS_ENDPOINT_URL", s.URL)
	tb.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	tb.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
}
