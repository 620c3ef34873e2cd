package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldcheck"
)

// runCheck checks the world in dir, drawing progress on progress (nil for
// none) and the findings on out; it returns the exit status.
func runCheck(out, progress io.Writer, dir string) int {
	r, err := worldcheck.Check(dir, worldcheck.Options{Progress: progress})
	if err != nil {
		if errors.Is(err, blazedb.ErrLocked) {
			err = fmt.Errorf("%w (is a server running it?)", err)
		}
		fmt.Fprintln(os.Stderr, "blaze check:", err)
		return exitFailed
	}
	rec := r.Recovery
	if !rec.IndexLoaded {
		fmt.Fprintf(out, "index.dat was not used (%s): the log was scanned\n", rec.IndexProblem)
	}
	if rec.TornBytes > 0 {
		fmt.Fprintf(out, "the last %d bytes of chunks.dat are a write a crash cut short: never acknowledged, so nothing is lost; the next read-write open removes them\n", rec.TornBytes)
	}
	for _, c := range rec.Corrupt {
		fmt.Fprintf(out, "damaged: %d bytes of chunks.dat at offset %d (%s); the columns written there are read from their previous versions\n", c.Length, c.Offset, c.Reason)
	}
	if r.Engine != nil {
		fmt.Fprintln(out, "damaged:", r.Engine)
	}
	for _, f := range r.Failed {
		fmt.Fprintln(out, "cannot read", f)
	}
	fmt.Fprintf(out, "%s: %d columns and %d player spawns read in %v", dir, r.Columns, r.Players, r.Took.Round(1e6))
	if r.Damaged() {
		fmt.Fprintf(out, "; %d unreadable\n", len(r.Failed))
		return exitDamaged
	}
	fmt.Fprintln(out, "; no damage found")
	return exitOK
}
