package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestMain runs blaze itself when the test binary is started by blaze
// (below), so that the tests see its real stdout, stderr and exit status.
func TestMain(m *testing.M) {
	if os.Getenv("BLAZE_TEST_RUN_MAIN") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// blaze runs the command line args and returns its stdout, stderr and
// exit status. Under the race detector a process sleeps a second before
// it exits (GORACE's atexit_sleep_ms), so that a race found as it ends is
// still reported; blaze's processes have finished their work when they
// exit, so a tenth of that is enough, and a race is still reported on
// stderr, which the tests check, with exit status 66. A GORACE already set
// comes after, and wins.
func blaze(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "BLAZE_TEST_RUN_MAIN=1", "GORACE=atexit_sleep_ms=100 "+os.Getenv("GORACE"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// Issue 38 item 5: blaze -h, --help and help print the whole usage on
// stdout and exit 0; a wrong command line prints it on stderr and exits
// 64.
// Each process runs beside the others: they share nothing.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			out, errOut, code := blaze(t, args...)
			if code != exitOK || errOut != "" || out != usage() {
				t.Fatalf("blaze %v: status %d, stdout %d bytes, stderr %q", args, code, len(out), errOut)
			}
		})
	}
	for _, c := range commands {
		if !strings.Contains(usage(), c.usage) {
			t.Fatalf("the usage lacks %s's", c.name)
		}
	}
	for _, status := range []string{"exit status:", "\n  0   ", "\n  1   ", "\n  2   ", "\n  64  "} {
		if !strings.Contains(usage(), status) {
			t.Fatalf("the usage does not document %q", status)
		}
	}
	for _, args := range [][]string{{}, {"frobnicate"}, {"help", "frobnicate"}, {"convert", "onlyone"}, {"convert", "a", "b", "-nosuchflag"}, {"snapshot", "list"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			out, errOut, code := blaze(t, args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, "usage:") {
				t.Fatalf("blaze %v: status %d, stdout %q, stderr %q", args, code, out, errOut)
			}
		})
	}
}

// Issue 38 item 5: blaze CMD -h and blaze help CMD print that command's
// usage alone, on stdout, and exit 0.
// Each command's processes run beside another's: they share nothing.
func TestHelpPerCommand(t *testing.T) {
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want := usageOf(c.name)
			for _, args := range [][]string{{c.name, "-h"}, {c.name, "--help"}, {"help", c.name}} {
				out, errOut, code := blaze(t, args...)
				if code != exitOK || errOut != "" || out != want {
					t.Fatalf("blaze %v: status %d, stdout %q, stderr %q", args, code, out, errOut)
				}
			}
			for _, o := range commands {
				if o.name != c.name && strings.Contains(want, o.usage) {
					t.Fatalf("%s's usage holds %s's", c.name, o.name)
				}
			}
			if !strings.Contains(want, c.usage) || !strings.Contains(want, "exit status:") {
				t.Fatalf("%s's usage: %q", c.name, want)
			}
		})
	}
	// -h after the operands too.
	if out, _, code := blaze(t, "rollback", "W", "-to", "x", "-h"); code != exitOK || out != usageOf("rollback") {
		t.Fatalf("blaze rollback W -to x -h: status %d, %q", code, out)
	}
}

// Issue 38 item 5: blaze version prints the module, the VCS revision the
// build recorded and Go's version.
func TestVersion(t *testing.T) {
	out, errOut, code := blaze(t, "version")
	if code != exitOK || errOut != "" || !strings.HasPrefix(out, "blaze ") || !strings.Contains(out, "go: "+runtime.Version()) {
		t.Fatalf("blaze version: status %d, stdout %q, stderr %q", code, out, errOut)
	}
	var b bytes.Buffer
	writeVersion(&b, &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "github.com/blazeworld/blaze", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0a17848deadbeef"},
			{Key: "vcs.time", Value: "2026-11-27T05:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	})
	want := "blaze github.com/blazeworld/blaze v0.3.0\nrevision: 0a17848deadbeef 2026-11-27T05:00:00Z (with uncommitted changes)\ngo: go1.26.0\n"
	if b.String() != want {
		t.Fatalf("writeVersion:\n%s\nwant\n%s", b.String(), want)
	}
	if out, _, code := blaze(t, "version", "extra"); code != exitUsage || out != "" {
		t.Fatalf("blaze version extra: status %d, %q", code, out)
	}
}

// Issue 38 item 5: every command takes its flags after its operands as
// well as before, through one parser; -- ends the flags.
func TestFlagsAfterOperands(t *testing.T) {
	src, dst := garbageWorld(t), t.TempDir()+"/dst"
	out, errOut, code := blaze(t, "convert", src, dst, "-q")
	if code != exitOK || errOut != "" || !strings.Contains(out, "blaze -> leveldb") {
		t.Fatalf("blaze convert SRC DST -q: status %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = blaze(t, "check", src, "-q")
	if code != exitOK || errOut != "" || !strings.Contains(out, "16 columns") {
		t.Fatalf("blaze check DIR -q: status %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = blaze(t, "render", src, t.TempDir()+"/map.png", "-dim", "overworld")
	if code != exitOK {
		t.Fatalf("blaze render DIR OUT -dim overworld: status %d, stdout %q, stderr %q", code, out, errOut)
	}
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	q := fs.Bool("q", false, "")
	ops, _, ok := parseArgs(fs, []string{"a", "-q", "--", "-b", "-q"}, 3)
	if !ok || strings.Join(ops, " ") != "a -b -q" || !*q {
		t.Fatalf("parseArgs with --: %q %v", ops, ok)
	}
}

// Issue 38 item 5: progress covers every phase, not only the columns'
// count: check shows its engine check of the log first, compact and repair
// each database's work; redirected (stderr a pipe here), each is plain
// lines without carriage returns, and -q hides them.
func TestProgressOfEveryPhase(t *testing.T) {
	dir := garbageWorld(t)
	for _, c := range []struct {
		cmd   string
		lines []string
	}{
		{"check", []string{"checking the log of " + dir + "\n", "checking the log of " + dir + ": done in ", "checking: 16 columns\n", "checking: 16 columns done in "}},
		{"compact", []string{"compacting " + dir + "\n", "compacting " + dir + ": done in "}},
		{"repair", []string{"repairing " + dir + "\n", "repairing " + dir + ": done in "}},
	} {
		out, errOut, code := blaze(t, c.cmd, dir)
		if code != exitOK || strings.Contains(errOut, "\r") {
			t.Fatalf("blaze %s: status %d, stdout %q, stderr %q", c.cmd, code, out, errOut)
		}
		at := 0
		for _, l := range c.lines {
			i := strings.Index(errOut[at:], l)
			if i < 0 {
				t.Fatalf("blaze %s: stderr %q lacks %q after offset %d", c.cmd, errOut, l, at)
			}
			at += i + len(l)
		}
		if _, errOut, code := blaze(t, c.cmd, "-q", dir); code != exitOK || errOut != "" {
			t.Fatalf("blaze %s -q: status %d, stderr %q", c.cmd, code, errOut)
		}
	}
}
