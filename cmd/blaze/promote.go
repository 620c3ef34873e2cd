package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
)

// runPromote writes the changes of the arena in arenaDir into its template
// world in templateDir (overlay.Provider.Promote) and prints what it did;
// it returns the exit status. The overlay does not record where its
// template is, so both are given; one the arena's changes were not made on
// is refused (overlay.Config.KeepMatch), never taken as a reason to
// forget them.
func runPromote(out io.Writer, arenaDir, templateDir string) int {
	if _, err := os.Stat(filepath.Join(arenaDir, "CURRENT")); err != nil {
		return failed("promote", fmt.Errorf("%s is not an arena's overlay (no CURRENT): %w", arenaDir, err))
	}
	log := slog.New(slog.DiscardHandler)
	// To write: the template's lock is then this process's alone, so no
	// server or other tool has it open.
	tp, err := provider.Config{Log: log}.Open(templateDir)
	if err != nil {
		return failed("promote", fmt.Errorf("open the template %s to write: %w", templateDir, err))
	}
	o, err := overlay.Config{Log: log, KeepMatch: true}.Open(tp, arenaDir)
	if err != nil {
		tp.Close()
		return failed("promote", err)
	}
	dirty, err := o.Dirty()
	if err == nil {
		err = o.Promote()
	}
	err = errors.Join(err, o.Shutdown())
	edition := tp.Edition()
	if cerr := tp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return failed("promote", err)
	}
	fmt.Fprintf(out, "%s -> %s: %s promoted; the template's edition is now %v, so every arena over it, this one too, forgets its match at its next start\n",
		arenaDir, templateDir, count(len(dirty), "column", "columns"), edition)
	return exitOK
}

func promoteCmd(args []string) int {
	ops, code, ok := parse("promote", args, 2, nil)
	if !ok {
		return code
	}
	return runPromote(os.Stdout, ops[0], ops[1])
}
