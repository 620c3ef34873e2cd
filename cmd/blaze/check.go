package main

import (
	"errors"
	"fmt"
	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldcheck"
	"io"
)

// runCheck checks the world in dir, drawing progress on progress (nil for
// none) and the findings on out; it returns the exit status.
func runCheck(out, progress io.Writer, dir string) int {
	if err := oneWorld(dir); err != nil {
		return failed("check", err)
	}
	r, err := worldcheck.Check(dir, worldcheck.Options{Progress: progress})
	if err != nil {
		return failed("check", err)
	}
	for _, d := range r.Databases {
		rec := d.Recovery
		if d.Opened && !rec.IndexLoaded {
			fmt.Fprintf(out, "%s: index.dat was not used (%s): the log was scanned\n", d.Dir, rec.IndexProblem)
		}
		if rec.HeaderDamage != "" {
			fmt.Fprintf(out, "%s: damaged: %s; nothing is lost (the header of chunks.dat is kept twice), and blaze repair writes it again\n", d.Dir, rec.HeaderDamage)
		}
		if rec.LostBytes > 0 || len(rec.Lost) > 0 {
			fmt.Fprintf(out, "%s: DURABLE DATA LOST: %d bytes of chunks.dat that index.dat shows were durable are missing or do not decode (the file was cut short or damaged, which no crash does)\n", d.Dir, rec.LostBytes)
			for _, k := range rec.Lost {
				fmt.Fprintf(out, "%s: lost: %s\n", d.Dir, lostName(k, false))
			}
		} else if rec.TornBytes > 0 {
			fmt.Fprintf(out, "%s: the last %d bytes of chunks.dat are writes a crash left unsynced, which the durability mode never promised to keep, so nothing promised is lost; the next read-write open removes them\n", d.Dir, rec.TornBytes)
		}
		// The engine's check names every damaged stretch still in
		// chunks.dat, those this open skipped (rec.Corrupt) and those an
		// earlier open skipped alike, with the keys written there and
		// where each stands now, so rec.Corrupt is not listed twice.
		if d.Engine == nil {
			for _, c := range rec.Corrupt {
				fmt.Fprintf(out, "%s: damaged: %d bytes of chunks.dat at offset %d (%s); the columns written there are read from their previous versions\n", d.Dir, c.Length, c.Offset, c.Reason)
			}
		}
		for _, err := range findings(d.Engine) {
			fmt.Fprintf(out, "%s: damaged: %v\n", d.Dir, err)
		}
		printSettings(out, d)
		if d.DictionaryCopyStale {
			fmt.Fprintf(out, "%s: dictionary.dat, the copy of the block dictionary, is missing or not current: the next time the world is opened to write, it is written\n", d.Dir)
		}
		if ids := d.DictionaryRestored; len(ids) > 0 {
			fmt.Fprintf(out, "%s: %s (ids %v) read from dictionary.dat, not from chunks.dat: repair writes the copy back\n", d.Dir, count(len(ids), "block dictionary entry", "block dictionary entries"), ids)
		}
	}
	for _, f := range r.Failed {
		fmt.Fprintln(out, "cannot read", f)
	}
	dbs := "1 database"
	if n := len(r.Databases); n != 1 {
		dbs = fmt.Sprintf("%d databases (the world's and its regions')", n)
	}
	if r.ColumnExtras+r.WorldExtras > 0 {
		fmt.Fprintf(out, "%d LevelDB records kept for conversion back read: %d with columns, %d of the world\n", r.ColumnExtras+r.WorldExtras, r.ColumnExtras, r.WorldExtras)
	}
	fmt.Fprintf(out, "%s: %d columns, %d player spawns and %d players' data read from %s in %v", dir, r.Columns, r.Players, r.PlayerData, dbs, r.Took.Round(1e6))
	if r.Damaged() {
		fmt.Fprintf(out, "; %d unreadable\n", len(r.Failed))
		fmt.Fprintf(out, "blaze repair %s mends it: it writes damaged dictionary entries back from dictionary.dat, and puts each damaged column back at its newest intact version, or removes it\n", dir)
		return exitDamaged
	}
	fmt.Fprintln(out, "; no damage found")
	return exitOK
}

// findings splits an engine error into its findings, one for each damaged
// stretch or record or other problem, for a line each: the errors it joins,
// found through the context wrapped around them.
func findings(err error) []error {
	switch e := err.(type) {
	case nil:
		return nil
	case *blazedb.CorruptionError:
		return []error{e}
	case interface{ Unwrap() []error }:
		var out []error
		for _, x := range e.Unwrap() {
			out = append(out, findings(x)...)
		}
		return out
	}
	u := errors.Unwrap(err)
	if u == nil {
		return []error{err}
	}
	if sub := findings(u); len(sub) != 1 || sub[0] != u {
		return sub
	}
	return []error{err} // with its context
}

// printSettings prints what opening the database d found of level.dat and
// its checksummed copy, level.dat.blaze.
func printSettings(out io.Writer, d worldcheck.Database) {
	s := d.Settings
	switch {
	case s.Defaults:
		fmt.Fprintf(out, "%s: damaged: %v: the settings are lost; a server would use Dragonfly's defaults, named after levelname.txt\n", d.Dir, s.LevelDat)
	case s.FromCopy && s.LevelDat != nil:
		fmt.Fprintf(out, "%s: damaged: %v: the settings read from its checksummed copy, level.dat.blaze; repair writes level.dat back\n", d.Dir, s.LevelDat)
	}
	if s.Copy == nil {
		return
	}
	if s.Damaged() && !s.FromCopy && !s.Defaults {
		fmt.Fprintf(out, "%s: damaged: %v; level.dat reads: repair writes the copy again\n", d.Dir, s.Copy)
	} else if !s.Damaged() {
		fmt.Fprintf(out, "%s: %v: the next time the world is opened to write, it is written\n", d.Dir, s.Copy)
	}
}
