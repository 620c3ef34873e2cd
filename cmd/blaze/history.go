package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/segment"
	"github.com/df-mc/dragonfly/server/world"
)

// The history commands (issue 36): snapshots, changes and rollback, all
// offline, on plain and segmented worlds.

// openHistory opens the plain Blaze world in dir, read-only unless write.
func openHistory(dir string, write bool) (*provider.DB, error) {
	return provider.Config{Log: slog.New(slog.DiscardHandler), ExternalMaintenance: true, ReadOnly: !write}.Open(dir)
}

// historied is what the history commands use of a world, plain or
// segmented.
type historied interface {
	Snapshot(name string) error
	Snapshots() ([]provider.SnapshotInfo, error)
	DeleteSnapshot(name string) error
	ChangedSince(point string) ([]provider.Place, error)
	Revert(point string, in func(provider.Place) bool) (int, error)
	Close() error
}

// openHistoried opens the Blaze world in dir, plain or segmented, for a
// history command, read-only unless write (a plain world). A segmented world is opened writable
// (package segment has no read-only mode): closing it rewrites level.dat.
func openHistoried(dir string, write bool) (historied, error) {
	if _, err := databases(dir); err != nil { // refuses what is no Blaze world, or two
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "regions")); err != nil {
		db, err := openHistory(dir, write)
		if err != nil {
			return nil, err // not a nil *provider.DB in an interface
		}
		return db, nil
	}
	p, err := segment.Config{Log: slog.New(slog.DiscardHandler)}.Open(dir)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func snapshotCmd(args []string) int {
	ops, code, ok := parseArgs(flag.NewFlagSet("snapshot", flag.ContinueOnError), args, -1)
	if !ok {
		return code
	}
	switch {
	case len(ops) < 2:
	case ops[0] == "list" && len(ops) == 2:
		return runSnapshotList(os.Stdout, ops[1])
	case ops[0] == "create" && len(ops) == 3:
		return runSnapshotCreate(os.Stdout, ops[1], ops[2])
	case ops[0] == "delete" && len(ops) == 3:
		return runSnapshotDelete(os.Stdout, ops[1], ops[2])
	}
	return usageError("snapshot")
}

func runSnapshotCreate(out io.Writer, dir, name string) int {
	db, err := openHistoried(dir, true)
	if err != nil {
		return failed("snapshot create", err)
	}
	err = db.Snapshot(name)
	if err = errors.Join(err, db.Close()); err != nil {
		return failed("snapshot create", err)
	}
	fmt.Fprintf(out, "%s: snapshot %q taken\n", dir, name)
	return exitOK
}

func runSnapshotDelete(out io.Writer, dir, name string) int {
	db, err := openHistoried(dir, true)
	if err != nil {
		return failed("snapshot delete", err)
	}
	err = db.DeleteSnapshot(name)
	if err = errors.Join(err, db.Close()); err != nil {
		return failed("snapshot delete", err)
	}
	fmt.Fprintf(out, "%s: snapshot %q deleted; the next compaction drops what only it kept\n", dir, name)
	return exitOK
}

func runSnapshotList(out io.Writer, dir string) int {
	if _, err := databases(dir); err != nil {
		return failed("snapshot list", err)
	}
	// A segmented world's snapshots are its root's: read that alone.
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler), ExternalMaintenance: true, ReadOnly: true, SegmentRoot: true}.Open(dir)
	if err != nil {
		return failed("snapshot list", err)
	}
	ss, err := db.Snapshots()
	if err = errors.Join(err, db.Close()); err != nil {
		return failed("snapshot list", err)
	}
	for _, s := range ss {
		fmt.Fprintf(out, "%s\t%s\n", s.Name, s.Time.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(out, "%s\n", count(len(ss), "snapshot", "snapshots"))
	return exitOK
}

func changesCmd(args []string) int {
	fs := flag.NewFlagSet("changes", flag.ContinueOnError)
	since := fs.String("since", "", "a snapshot's name or an RFC 3339 time")
	ops, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return code
	}
	if *since == "" {
		return usageError("changes")
	}
	return runChanges(os.Stdout, ops[0], *since)
}

func runChanges(out io.Writer, dir, since string) int {
	db, err := openHistoried(dir, false)
	if err != nil {
		return failed("changes", err)
	}
	places, err := db.ChangedSince(since)
	if err = errors.Join(err, db.Close()); err != nil {
		return failed("changes", err)
	}
	for _, p := range places {
		fmt.Fprintf(out, "%s\t%d\t%d\n", dimName(p.Dim), p.Pos[0], p.Pos[1])
	}
	fmt.Fprintf(out, "%s changed since %s\n", count(len(places), "column", "columns"), since)
	return exitOK
}

// area is the part of a world a rollback covers: chunk coordinates,
// inclusive, in one dimension or all.
type area struct {
	all            bool // no -area: every column
	x1, z1, x2, z2 int32
	dim            world.Dimension // nil: every dimension
	ylo, yhi       int             // the heights export reads
}

func (a area) has(p provider.Place) bool {
	if a.dim != nil && p.Dim != a.dim {
		return false
	}
	return a.all || (p.Pos[0] >= a.x1 && p.Pos[0] <= a.x2 && p.Pos[1] >= a.z1 && p.Pos[1] <= a.z2)
}

// parseArea reads -area X1,Z1,X2,Z2 (chunk coordinates, either corner
// first) and -dim.
func parseArea(s, dim string) (area, error) {
	a := area{all: s == ""}
	if !a.all {
		parts := strings.Split(s, ",")
		if len(parts) != 4 {
			return a, fmt.Errorf("-area %q: want X1,Z1,X2,Z2", s)
		}
		var v [4]int32
		for i, p := range parts {
			n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
			if err != nil {
				return a, fmt.Errorf("-area %q: %v", s, err)
			}
			v[i] = int32(n)
		}
		a.x1, a.z1, a.x2, a.z2 = min(v[0], v[2]), min(v[1], v[3]), max(v[0], v[2]), max(v[1], v[3])
	}
	switch dim {
	case "":
	case "overworld":
		a.dim = world.Overworld
	case "nether":
		a.dim = world.Nether
	case "end":
		a.dim = world.End
	default:
		return a, fmt.Errorf("-dim %q: want overworld, nether or end", dim)
	}
	return a, nil
}

func dimName(d world.Dimension) string {
	switch d {
	case world.Nether:
		return "nether"
	case world.End:
		return "end"
	}
	return "overworld"
}

func rollbackCmd(args []string) int {
	fs := flag.NewFlagSet("rollback", flag.ContinueOnError)
	to := fs.String("to", "", "a snapshot's name or an RFC 3339 time")
	ar := fs.String("area", "", "X1,Z1,X2,Z2 in chunks")
	dim := fs.String("dim", "", "overworld, nether or end")
	ops, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return code
	}
	if *to == "" {
		return usageError("rollback")
	}
	a, err := parseArea(*ar, *dim)
	if err != nil {
		fmt.Fprintf(os.Stderr, "blaze rollback: %v\n", err)
		return exitUsage
	}
	return runRollback(os.Stdout, ops[0], *to, a)
}

// runRollback puts the columns of a changed since point back as they
// were. It first takes a snapshot of the world as it is, named for the
// moment, so that the rollback can be undone exactly (a time would be
// exact only to a second).
func runRollback(out io.Writer, dir, point string, a area) int {
	db, err := openHistoried(dir, true)
	if err != nil {
		return failed("rollback", err)
	}
	var undo string
	_, err = db.ChangedSince(point) // a point that does not read takes no snapshot
	if err == nil {
		undo, err = undoSnapshot(db, "rollback")
	}
	var n, players int
	if err == nil {
		n, err = db.Revert(point, a.has)
	}
	// The whole world rolled back: its players too (issue 40).
	if pdb, ok := db.(*provider.DB); ok && err == nil && a.all && a.dim == nil {
		players, err = pdb.RevertPlayers(point)
	}
	if err = errors.Join(err, db.Close()); err != nil {
		if undo != "" {
			err = fmt.Errorf("%w (snapshot %q holds the world as it was before)", err, undo)
		}
		return failed("rollback", err)
	}
	fmt.Fprintf(out, "%s: %s rolled back to %s\n", dir, count(n, "column", "columns"), point)
	if players > 0 {
		fmt.Fprintf(out, "%s: %s data rolled back too\n", dir, count(players, "player's", "players'"))
	}
	fmt.Fprintf(out, "snapshot %q holds the world as it was before: undo with `blaze rollback %s -to %s`, and delete it with `blaze snapshot delete %s %s` once it is not needed\n", undo, dir, undo, dir, undo)
	return exitOK
}

// undoSnapshot takes the snapshot a rollback (or an import: what) can be
// undone to, named before-WHAT-YYYYMMDDTHHMMSSZ (-2, -3… when taken twice
// in a second).
func undoSnapshot(db historied, what string) (string, error) {
	base := "before-" + what + "-" + time.Now().UTC().Format("20060102T150405Z")
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		err := db.Snapshot(name)
		if errors.Is(err, blazedb.ErrExists) && i < 100 {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, nil
	}
}
