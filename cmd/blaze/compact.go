package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider"
)

// runCompact compacts the Blaze world in dir and prints the sizes of its
// log before and after on out; it returns the exit status.
func runCompact(out io.Writer, dir string) int {
	fail := func(err error) int {
		if errors.Is(err, blazedb.ErrLocked) {
			err = fmt.Errorf("%w (is a server running it?)", err)
		}
		fmt.Fprintln(os.Stderr, "blaze compact:", err)
		return exitFailed
	}
	// Open would make a new world where there is none.
	if st, err := os.Stat(filepath.Join(dir, "blaze", "chunks.dat")); err != nil || !st.Mode().IsRegular() {
		return fail(fmt.Errorf("%s is not a Blaze world (no blaze/chunks.dat)", dir))
	}
	// The settings are the server's: level.dat is neither read nor
	// rewritten.
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler), ExternalMaintenance: true, NoLevelDat: true}.Open(dir)
	if err != nil {
		return fail(err)
	}
	eng := db.Engine()
	before := eng.Stats()
	err = eng.Compact()
	after := eng.Stats()
	if err = errors.Join(err, db.Close()); err != nil {
		return fail(err)
	}
	fmt.Fprintf(out, "%s: chunks.dat %s -> %s (%s of live records)\n", dir, size(before.LogBytes), size(after.LogBytes), size(after.LiveBytes))
	return exitOK
}

// size formats n bytes for people.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
