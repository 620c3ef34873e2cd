package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// versionCmd prints blaze's module version, the source revision it was
// built from and the Go version that built it (issue 38 item 5).
func versionCmd(args []string) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(os.Stderr, "blaze version: this binary holds no build information")
		return exitFailed
	}
	writeVersion(os.Stdout, bi)
	return exitOK
}

// writeVersion writes what bi says of the build: the main module's
// path and version, the VCS revision (and its time, and whether the tree
// had uncommitted changes) when the build recorded one, and Go's version.
func writeVersion(w io.Writer, bi *debug.BuildInfo) {
	version := bi.Main.Version
	if version == "" {
		version = "(unknown)"
	}
	path := bi.Main.Path
	if path == "" {
		path = "blaze"
	}
	fmt.Fprintf(w, "blaze %s %s\n", path, version)
	var rev, when string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		fmt.Fprintln(w, "revision: (not recorded: built without VCS information)")
	} else {
		line := []string{"revision: " + rev}
		if when != "" {
			line = append(line, when)
		}
		if modified {
			line = append(line, "(with uncommitted changes)")
		}
		fmt.Fprintln(w, strings.Join(line, " "))
	}
	fmt.Fprintf(w, "go: %s\n", bi.GoVersion)
}
