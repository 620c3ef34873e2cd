// Command blaze is Blaze's tool for server owners.
//
//	blaze convert SRC DST
//
// copies the world in SRC to DST: a LevelDB (Dragonfly mcdb or Bedrock)
// world becomes a Blaze world and a Blaze world a LevelDB one. See package
// internal/convert for what it promises.
//
//	blaze check DIR
//
// verifies the Blaze world in DIR without writing to it (package
// internal/worldcheck), and
//
//	blaze compact DIR
//
// rewrites its chunks.dat without the garbage that overwritten columns
// leave, and
//
//	blaze repair DIR
//
// mends the damage check finds (provider.Config.Repair), and
//
//	blaze info DIR
//
// prints what the world holds and how much of its logs compaction would
// drop, without writing to it, and
//
//	blaze render [-dim D] DIR OUT.png
//
// draws a top-down map of it (package internal/worldmap), and
//
//	blaze snapshot create|list|delete WORLD [NAME]
//	blaze changes WORLD -since POINT
//	blaze rollback WORLD -to POINT [-area X1,Z1,X2,Z2] [-dim DIM]
//
// name, inspect and go back to points of the world's history (history.go),
// and
//
//	blaze export WORLD -at POINT -area X1,Z1,X2,Z2 [-dim DIM] [-y Y1,Y2] OUT.mcstructure
//	blaze import WORLD IN.mcstructure -at X,Y,Z [-dim DIM]
//
// copy an area, as it was at a point, to a Bedrock structure file and
// paste one into a world (structure.go).
// None of them runs while a server has the world open.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

const usage = `usage:
  blaze convert [-q] SRC DST
      Copies the world in SRC to DST, which must be missing or empty and not
      inside SRC: a LevelDB world (SRC/db) becomes a Blaze world, a Blaze
      world (SRC/blaze) a LevelDB one; SRC may not hold both. Every column,
      level.dat and player spawns are copied and every column is verified
      after writing, in DST.convert-tmp, renamed to DST when done (a run cut
      short leaves no DST; the next run deletes DST.convert-tmp). SRC is
      never changed. Columns and player spawns that cannot be read are
      listed at the end; the exit status is then 2.
  blaze check [-q] DIR
      Verifies the Blaze world in DIR without writing to it: the log and its
      index, every record's checksums, and every column and player spawn
      read back as a server reads them. Lists what is damaged, including
      damaged stretches of chunks.dat an earlier open skipped, until
      compaction or repair drops them; the exit status is then 2.
  blaze compact DIR
      Rewrites DIR's chunks.dat without the records that newer ones replaced
      (a server also does this by itself, in the background) and prints the
      sizes before and after. A column whose newest record is damaged is
      kept as it is, with its newest intact older version, and named; the
      exit status is then 2 (blaze repair mends it).
  blaze repair DIR
      Mends what check reports as damaged: block dictionary entries that
      do not read are written back from the world's copy (dictionary.dat);
      a column whose newest record is damaged goes back to its newest intact
      version, or is removed (and generated again) when none is left; then
      compacts, leaving the damaged bytes behind. Prints each thing it
      changed.
  blaze info DIR
      Prints what the Blaze world in DIR holds without writing to it: its
      columns in each dimension, player spawns, and the size of its logs,
      live and garbage (what compaction drops); whether index.dat was used
      and what opening found damaged or torn. It reads the index and the
      block dictionary, not the columns: blaze check verifies those.
  blaze render [-dim overworld|nether|end] DIR OUT.png
      Draws a top-down map of the Blaze world in DIR into OUT.png without
      writing to the world: one pixel per block, in the colour of the
      highest block (shaded by height, north up), transparent where no
      column is stored, with white lines between the regions of a
      segmented world.
  blaze snapshot create|list|delete WORLD [NAME]
      Names the world's present state (create), lists the snapshots with
      when each was taken, or deletes one. A snapshot costs no copy: the
      world's log keeps the versions it reads until it is deleted.
  blaze changes WORLD -since POINT
      Lists the columns (dimension, chunk X, chunk Z) changed after POINT:
      a snapshot's name or an RFC 3339 time (2026-11-27T04:00:00Z) within
      the history the world keeps (6 hours by default).
  blaze rollback WORLD -to POINT [-area X1,Z1,X2,Z2] [-dim overworld|nether|end]
      Puts the columns changed after POINT back as they were then (those
      made since are removed): all of them, or those in the area (chunk
      coordinates, inclusive) of one dimension or all. It first takes a
      snapshot named before-rollback-TIME, so it can be undone with
      blaze rollback WORLD -to that name. Run with the server stopped.
      All three work on plain and segmented worlds.
  blaze export WORLD -at POINT -area X1,Z1,X2,Z2 [-dim D] [-y Y1,Y2] OUT.mcstructure
      Writes the blocks (with their block entities; no biomes or entities)
      of the area (chunk coordinates, inclusive; from Y1 to Y2, by default
      the dimension's whole height; overworld unless -dim) as they were at
      POINT into a Bedrock .mcstructure: POINT is a snapshot's name, an RFC
      3339 time or now. The structure's origin is the area's lowest corner.
  blaze import WORLD IN.mcstructure -at X,Y,Z [-dim overworld|nether|end]
      Pastes a .mcstructure into the world with its lowest corner at X,Y,Z
      (blocks; structure voids keep the world's block). It first takes a
      snapshot named before-import-TIME to undo it with blaze rollback.
      Both work on plain and segmented worlds. Run with the server stopped.
`

// Exit statuses.
const (
	exitOK      = 0
	exitFailed  = 1 // the command could not do its work
	exitDamaged = 2 // it did, and found something unreadable
	exitUsage   = 64
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(exitUsage)
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "convert":
		os.Exit(convertCmd(args))
	case "check":
		os.Exit(checkCmd(args))
	case "compact":
		os.Exit(compactCmd(args))
	case "repair":
		os.Exit(repairCmd(args))
	case "info":
		os.Exit(infoCmd(args))
	case "render":
		os.Exit(renderCmd(args))
	case "snapshot":
		os.Exit(snapshotCmd(args))
	case "changes":
		os.Exit(changesCmd(args))
	case "rollback":
		os.Exit(rollbackCmd(args))
	case "export":
		os.Exit(exportCmd(args))
	case "import":
		os.Exit(importCmd(args))
	}
	fmt.Fprint(os.Stderr, usage)
	os.Exit(exitUsage)
}

// parse parses args for the command name, which takes n operands.
func parse(name string, args []string, n int, quiet *bool) (*flag.FlagSet, bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if quiet != nil {
		fs.BoolVar(quiet, "q", false, "no progress bar")
	}
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	if err := fs.Parse(args); err != nil || fs.NArg() != n {
		fs.Usage()
		return nil, false
	}
	return fs, true
}

func convertCmd(args []string) int {
	var quiet bool
	fs, ok := parse("convert", args, 2, &quiet)
	if !ok {
		return exitUsage
	}
	return runConvert(fs.Arg(0), fs.Arg(1), quiet)
}

func checkCmd(args []string) int {
	var quiet bool
	fs, ok := parse("check", args, 1, &quiet)
	if !ok {
		return exitUsage
	}
	var progress io.Writer = os.Stderr
	if quiet {
		progress = nil
	}
	return runCheck(os.Stdout, progress, fs.Arg(0))
}

func compactCmd(args []string) int {
	fs, ok := parse("compact", args, 1, nil)
	if !ok {
		return exitUsage
	}
	return runCompact(os.Stdout, fs.Arg(0))
}

func infoCmd(args []string) int {
	fs, ok := parse("info", args, 1, nil)
	if !ok {
		return exitUsage
	}
	return runInfo(os.Stdout, fs.Arg(0))
}

func repairCmd(args []string) int {
	fs, ok := parse("repair", args, 1, nil)
	if !ok {
		return exitUsage
	}
	return runRepair(os.Stdout, fs.Arg(0))
}
