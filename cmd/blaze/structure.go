package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/internal/nbtwalk"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/restore"
	"github.com/blazeworld/blaze/segment"
	_ "github.com/df-mc/dragonfly/server/block" // registers the blocks a structure names
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/structure"
)

// The structure commands (issue 36): export an area of the world at a
// point of its history to a Bedrock .mcstructure, and paste one into a
// world on disk (package restore: Export, Paste).

// pointNow is the point export reads the present world at.
const pointNow = "now"

func exportCmd(args []string) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	at := fs.String("at", "", "a snapshot's name, an RFC 3339 time or now")
	ar := fs.String("area", "", "X1,Z1,X2,Z2 in chunks")
	dim := fs.String("dim", "overworld", "overworld, nether or end")
	ys := fs.String("y", "", "Y1,Y2: the blocks' heights (default the dimension's)")
	ops, code, ok := parseArgs(fs, args, 2)
	if !ok {
		return code
	}
	if *at == "" || *ar == "" {
		return usageError("export")
	}
	a, err := parseArea(*ar, *dim)
	if err == nil {
		a.ylo, a.yhi, err = parseHeights(*ys, a.dim)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "blaze export: %v\n", err)
		return exitUsage
	}
	return runExport(os.Stdout, ops[0], *at, a, ops[1])
}

// parseHeights reads -y Y1,Y2 (either first), within dim's height range;
// empty is the whole range.
func parseHeights(s string, dim world.Dimension) (int, int, error) {
	r := dim.Range()
	if s == "" {
		return r[0], r[1], nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 2 {
		return 0, 0, fmt.Errorf("-y %q: want Y1,Y2", s)
	}
	var v [2]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return 0, 0, fmt.Errorf("-y %q: %v", s, err)
		}
		v[i] = n
	}
	lo, hi := min(v[0], v[1]), max(v[0], v[1])
	if lo < r[0] || hi > r[1] {
		return 0, 0, fmt.Errorf("-y %q: outside the %v's heights %d to %d", s, dim, r[0], r[1])
	}
	return lo, hi, nil
}

// readAt opens the world in dir, plain or segmented, read-only where it
// can (see openHistoried), and returns a provider of it as it was at
// point, with the function that closes both.
func readAt(dir, point string) (world.Provider, func() error, error) {
	if _, err := databases(dir); err != nil {
		return nil, nil, err
	}
	var (
		db interface {
			Snapshots() ([]provider.SnapshotInfo, error)
		}
		now  world.Provider
		at   func() (world.Provider, error)
		done func() error
	)
	if _, err := os.Stat(filepath.Join(dir, "regions")); err != nil {
		d, err := openHistory(dir, false)
		if err != nil {
			return nil, nil, err
		}
		db, now, done = d, d, d.Close
		at = func() (world.Provider, error) { return d.At(point) }
	} else {
		p, err := segment.Config{Log: slog.New(slog.DiscardHandler)}.Open(dir)
		if err != nil {
			return nil, nil, err
		}
		db, now, done = p, p, p.Close
		at = func() (world.Provider, error) { return p.At(point) }
	}
	if point == pointNow {
		// A snapshot named now would make the point ambiguous.
		ss, err := db.Snapshots()
		for _, s := range ss {
			if s.Name == pointNow {
				err = fmt.Errorf("%w: %q names a snapshot as well as the present", provider.ErrPoint, point)
			}
		}
		if err != nil {
			return nil, nil, errors.Join(err, done())
		}
		return now, done, nil
	}
	v, err := at()
	if err != nil {
		return nil, nil, errors.Join(err, done())
	}
	return v, func() error { return errors.Join(v.Close(), done()) }, nil
}

// runExport writes the blocks of a (its chunks, between its heights) as
// the world in dir held them at point into the .mcstructure file out
// (replaced if it exists), with the structure's origin at the area's
// lowest corner.
func runExport(stdout io.Writer, dir, point string, a area, out string) int {
	if a.dim == nil {
		a.dim = world.Overworld
	}
	src, done, err := readAt(dir, point)
	if err != nil {
		return failed("export", err)
	}
	lo := cube.Pos{int(a.x1) << 4, a.ylo, int(a.z1) << 4}
	hi := cube.Pos{int(a.x2)<<4 + 15, a.yhi, int(a.z2)<<4 + 15}
	s, err := restore.Export(src, a.dim, lo, hi)
	if err = errors.Join(err, done()); err != nil {
		return failed("export", err)
	}
	var buf bytes.Buffer
	if err := structure.Write(&buf, s); err != nil {
		return failed("export", err)
	}
	// As blaze render writes its picture: no half a file, and a link at
	// out is replaced, not written through.
	if err := vfs.ReplaceFile(vfs.Default, filepath.Dir(out), filepath.Base(out), buf.Bytes()); err != nil {
		return failed("export", err)
	}
	d := s.Dimensions()
	fmt.Fprintf(stdout, "%s: %d×%d×%d blocks of the %v from %v to %v, as at %s\n", out, d[0], d[1], d[2], a.dim, lo, hi, point)
	return exitOK
}

func importCmd(args []string) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	at := fs.String("at", "", "X,Y,Z: where the structure's lowest corner goes")
	dim := fs.String("dim", "overworld", "overworld, nether or end")
	ops, code, ok := parseArgs(fs, args, 2)
	if !ok {
		return code
	}
	if *at == "" {
		return usageError("import")
	}
	pos, err := parsePos(*at)
	var a area
	if err == nil {
		a, err = parseArea("", *dim)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "blaze import: %v\n", err)
		return exitUsage
	}
	return runImport(os.Stdout, ops[0], ops[1], pos, a.dim)
}

// parsePos reads X,Y,Z.
func parsePos(s string) (cube.Pos, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return cube.Pos{}, fmt.Errorf("-at %q: want X,Y,Z", s)
	}
	var p cube.Pos
	for i, s := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return cube.Pos{}, fmt.Errorf("-at %q: %v", s, err)
		}
		p[i] = n
	}
	return p, nil
}

// readStructure reads the .mcstructure file. Its NBT is walked first: the
// decoder would allocate whatever length a damaged file declares (GiBs)
// before it failed on the missing bytes.
func readStructure(file string) (structure.Structure, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return structure.Structure{}, err
	}
	if err := nbtwalk.CheckOne(b); err != nil {
		return structure.Structure{}, fmt.Errorf("decode structure: %w", err)
	}
	return structure.Read(bytes.NewReader(b))
}

// runImport pastes the structure in file into the world in dir (which no
// server has open) with its lowest corner at at. As rollback does, it
// first takes a snapshot, named before-import-TIME, to undo it with.
func runImport(stdout io.Writer, dir, file string, at cube.Pos, dim world.Dimension) int {
	s, err := readStructure(file)
	if err != nil {
		return failed("import", fmt.Errorf("%s: %w", file, err))
	}
	db, err := openHistoried(dir, true)
	if err != nil {
		return failed("import", err)
	}
	to, ok := db.(world.Provider)
	if !ok { // both kinds of world are providers
		return failed("import", errors.Join(fmt.Errorf("%s: not a world provider", dir), db.Close()))
	}
	undo, err := undoSnapshot(db, "import")
	if err == nil {
		err = restore.Paste(to, dim, s, at)
		if errors.Is(err, restore.ErrArea) {
			// Refused before anything was written: nothing to undo.
			if derr := db.DeleteSnapshot(undo); derr == nil {
				undo = ""
			}
		}
	}
	if err = errors.Join(err, db.Close()); err != nil {
		if undo != "" {
			err = fmt.Errorf("%w (snapshot %q holds the world as it was before)", err, undo)
		}
		return failed("import", err)
	}
	d := s.Dimensions()
	fmt.Fprintf(stdout, "%s: %d×%d×%d blocks pasted into the %v at %v\n", dir, d[0], d[1], d[2], dim, at)
	fmt.Fprintf(stdout, "snapshot %q holds the world as it was before: undo with `blaze rollback %s -to %s`, and delete it with `blaze snapshot delete %s %s` once it is not needed\n", undo, dir, undo, dir, undo)
	return exitOK
}
