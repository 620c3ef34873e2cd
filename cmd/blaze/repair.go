package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/progress"
	"github.com/blazeworld/blaze/provider"
)

// runRepair repairs the Blaze world in dir, every region of it when it is
// segmented, and prints what it did on out; it returns the exit status.
func runRepair(out io.Writer, dir string) int { return runRepairWith(out, nil, dir) }

// runRepairWith is runRepair showing each database's repair on progress
// (nil: none).
func runRepairWith(out, progressOut io.Writer, dir string) int {
	dbs, err := databases(dir)
	if err != nil {
		return failed("repair", err)
	}
	conf := provider.Config{Log: slog.New(slog.DiscardHandler), SegmentRoot: true} // repair generates nothing
	mended := 0
	for i, d := range dbs {
		c := conf
		c.NoLevelDat = i > 0 // regions keep no settings
		step := progress.Start(progressOut, "repairing "+d)
		rep, err := c.Repair(d)
		step.Done()
		if err != nil {
			return failed("repair", err)
		}
		if rep.LevelDat != "" {
			fmt.Fprintf(out, "%s: %s\n", d, rep.LevelDat)
		}
		if ids := rep.Dictionary; len(ids) > 0 {
			fmt.Fprintf(out, "%s: %s (ids %v) did not read from chunks.dat: written back from dictionary.dat\n", d, count(len(ids), "block dictionary entry", "block dictionary entries"), ids)
		}
		if rep.HeaderRebuilt {
			fmt.Fprintf(out, "%s: %s\n", d, rep.Header)
		} else if rep.Header != "" {
			fmt.Fprintf(out, "%s: %s: written again from the other copy\n", d, rep.Header)
		}
		if rep.LostBytes > 0 || len(rep.Lost) > 0 {
			fmt.Fprintf(out, "%s: %d bytes of chunks.dat that index.dat showed were durable were missing or did not decode; given up:\n", d, rep.LostBytes)
			for _, k := range rep.Lost {
				fmt.Fprintf(out, "%s: given up: %s\n", d, lostName(k, true))
			}
		}
		for _, c := range rep.Skipped {
			fmt.Fprintf(out, "%s: %d damaged bytes at offset %d were skipped; the columns written there went back to their previous versions\n", d, c.Length, c.Offset)
		}
		if ids := rep.DictionaryLost; len(ids) > 0 {
			them, their := "it", "its id"
			if len(ids) > 1 {
				them, their = "them", "their ids"
			}
			fmt.Fprintf(out, "%s: %s (ids %v) damaged, and neither chunks.dat nor dictionary.dat holds %s intact: kept as lost, never removed, so that no other block state takes %s; the columns using %s stay unreadable, and are never overwritten, until a dictionary.dat holding %s (from a backup) is put back\n",
				d, count(len(ids), "block dictionary entry", "block dictionary entries"), ids, them, their, them, them)
		}
		for _, k := range rep.Keys {
			what, gone := "column "+k.Key.String(), "a removed column is generated again"
			if k.Named {
				what, gone = provider.DescribeRecord(k.Name), "it is as if it had never been written"
				if strings.HasPrefix(what, "player spawn") {
					gone = "the player next spawns at the world's spawn"
				}
				if strings.HasPrefix(what, "data of player") {
					gone = "the player next joins as a new player"
				}
			}
			if k.Restored {
				fmt.Fprintf(out, "%s: %s was damaged (%v): back to its newest intact version\n", d, what, k.Err)
			} else {
				fmt.Fprintf(out, "%s: %s was damaged (%v) and no intact version is left: removed (%s)\n", d, what, k.Err, gone)
			}
		}
		if n := len(rep.Found); n > 0 {
			fmt.Fprintf(out, "%s: %s of chunks.dat in all, live or old versions: compacted away\n", d, count(n, "damaged stretch", "damaged stretches"))
		}
		if rep.Compacted || rep.LevelDat != "" || len(rep.DictionaryLost) > 0 || rep.LostBytes > 0 || rep.Header != "" {
			mended++
		}
	}
	if mended == 0 {
		fmt.Fprintf(out, "%s: no damage found; nothing changed\n", dir)
	} else {
		fmt.Fprintf(out, "%s: %d of %d databases repaired\n", dir, mended, len(dbs))
	}
	return exitOK
}

// lostName says what a lost key was and what became of it (repaired: what
// blaze repair made of it), naming a chunk key as the column it holds.
func lostName(k blazedb.LostKey, repaired bool) string {
	what := "column " + k.Key.String()
	if k.Named {
		what = provider.DescribeRecord(k.Name)
	}
	switch {
	case k.Revived && repaired:
		return what + ": its delete was lost; deleted again"
	case k.Revived:
		return what + ": its delete is lost, so an older version came back (blaze repair deletes it again)"
	case k.Older:
		return what + ": its newest version is lost; it reads as an older one"
	case k.Named:
		return what + ": lost; no older version is left"
	}
	return what + ": lost; no older version is left (a missing column is generated again)"
}
