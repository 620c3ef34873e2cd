package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/internal/worldmap"
	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

func renderCmd(args []string) int {
	var o renderOptions
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	dimName := fs.String("dim", "overworld", "the dimension to draw: overworld, nether or end")
	fs.StringVar(&o.at, "at", "", "a snapshot's name, an RFC 3339 time or now: the world as it was then")
	fs.StringVar(&o.template, "template", "", "the template of the arena overlay DIR")
	ops, code, ok := parseArgs(fs, args, 2)
	if !ok {
		return code
	}
	dim, ok := dimensions[strings.ToLower(*dimName)]
	if !ok {
		fmt.Fprintf(os.Stderr, "blaze render: unknown dimension %q (want overworld, nether or end)\n", *dimName)
		return exitUsage
	}
	o.dim = dim
	return runRenderWith(os.Stdout, ops[0], ops[1], o)
}

var dimensions = map[string]world.Dimension{"overworld": world.Overworld, "nether": world.Nether, "end": world.End}

// renderOptions are blaze render's flags.
type renderOptions struct {
	dim      world.Dimension
	at       string // a point of the world's history (-at); "" for now
	template string // the template of an arena overlay (-template)
}

// runRender draws a top-down map of dim in the Blaze world in dir as it is
// now (see runRenderWith).
func runRender(stdout io.Writer, dir, out string, dim world.Dimension) int {
	return runRenderWith(stdout, dir, out, renderOptions{dim: dim})
}

// runRenderWith draws a top-down map of o.dim in the Blaze world in dir,
// without writing to it, into the PNG file out (replaced if it exists),
// and returns the exit status. With o.at, the world is drawn as it was at
// that point of its history, read as blaze changes and rollback read it.
// An arena overlay is drawn with the chunks its match changed outlined,
// over its template's map when o.template names it.
func runRenderWith(stdout io.Writer, dir, out string, o renderOptions) int {
	m := worldmap.New(o.dim, nil)
	var changed []world.ChunkPos
	what := fmt.Sprintf("the %v", o.dim)
	switch {
	case isOverlay(dir):
		if o.at != "" {
			return failed("render", fmt.Errorf("%s is an arena overlay, whose match keeps no history to draw -at: draw its template -at a point instead", dir))
		}
		var err error
		if changed, err = addOverlay(m, dir, o.template); err != nil {
			return failed("render", err)
		}
		what += fmt.Sprintf(" (%s changed by the arena's match, outlined)", count(len(changed), "column", "columns"))
	case o.template != "":
		return failed("render", fmt.Errorf("-template names the template of an arena overlay, and %s is not an overlay", dir))
	default:
		if err := addWorld(m, dir, o.at); err != nil {
			return failed("render", err)
		}
		if o.at != "" && o.at != pointNow {
			what += " at " + o.at
		}
	}
	if m.Columns() == 0 {
		return failed("render", fmt.Errorf("%s has no columns in %s", dir, what))
	}
	img, origin, err := m.Image()
	if err != nil {
		return failed("render", err)
	}
	worldmap.Highlight(img, origin, changed)
	if err := writePNG(out, img); err != nil {
		return failed("render", err)
	}
	b := img.Bounds()
	fmt.Fprintf(stdout, "%s: %s of %s, %d×%d blocks from chunk (%d, %d) at the top left (north up)\n",
		out, count(m.Columns(), "column", "columns"), what, b.Dx(), b.Dy(), origin[0], origin[1])
	return exitOK
}

// openRead opens the database d of a world read-only, reading nothing it
// need not; the first of a world (root) reads its level.dat.
func openRead(d string, root bool) (*provider.DB, error) {
	return provider.Config{Log: slog.New(slog.DiscardHandler), ReadOnly: true, NoLevelDat: !root, SegmentRoot: true,
		ColumnCacheBytes: -1, ExternalMaintenance: true}.Open(d)
}

// addWorld adds the columns of the Blaze world in dir, plain or segmented,
// to m: as they are (point "" or now), or as they were at point. Each
// database's are told apart (a segmented world's regions).
func addWorld(m *worldmap.Map, dir, point string) error {
	dbs, err := databases(dir)
	if err != nil {
		return err
	}
	for i, d := range dbs {
		db, err := openRead(d, i == 0)
		if err != nil {
			return err
		}
		if i == 0 && point == pointNow {
			// As export reads it: a snapshot named now makes it ambiguous.
			err = refuseNowSnapshot(db)
		}
		switch {
		case err != nil:
		case point == "" || point == pointNow:
			err = m.Add(db, i)
		default:
			err = addAt(m, db, point, i, i > 0)
		}
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	return nil
}

// refuseNowSnapshot returns an error wrapping provider.ErrPoint if db
// has a snapshot named now, which -at now would leave ambiguous.
func refuseNowSnapshot(db *provider.DB) error {
	ss, err := db.Snapshots()
	for _, s := range ss {
		if s.Name == pointNow {
			err = fmt.Errorf("%w: %q names a snapshot as well as the present", provider.ErrPoint, pointNow)
		}
	}
	return err
}

// addAt adds the columns of db as they were at point (provider.DB.At) to
// m: those there now and those changed since (removed since, or made
// since and then missing at the point). A segmented world's point is its
// root's, so the root (region false) must know it; a region that does not
// (provider.ErrPoint) was made after the point, and had no columns then,
// as package segment reads it.
func addAt(m *worldmap.Map, db *provider.DB, point string, source int, region bool) error {
	v, err := db.At(point)
	if region && errors.Is(err, provider.ErrPoint) {
		return nil
	}
	if err != nil {
		return err
	}
	defer v.Close()
	now, err := db.Columns()
	if err != nil {
		return err
	}
	since, err := db.ChangedSince(point)
	if err != nil {
		return err
	}
	seen := map[world.ChunkPos]bool{}
	var positions []world.ChunkPos
	for _, p := range append(now, since...) {
		if p.Dim == m.Dimension() && !seen[p.Pos] {
			seen[p.Pos] = true
			positions = append(positions, p.Pos)
		}
	}
	return m.AddColumns(v, positions, source)
}

// addOverlay adds to m the columns the match of the arena overlay in dir
// changed, over those of its template when template is not "", and
// returns where they are.
func addOverlay(m *worldmap.Map, dir, template string) ([]world.ChunkPos, error) {
	st, err := overlay.ReadState(dir)
	if err != nil {
		return nil, err
	}
	if template != "" {
		if err := addWorld(m, template, ""); err != nil {
			return nil, fmt.Errorf("template: %w", err)
		}
	}
	db, err := openRead(st.Generation, true)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	places, err := db.Columns()
	if err != nil {
		return nil, err
	}
	var changed []world.ChunkPos
	for _, p := range places {
		if p.Dim == m.Dimension() {
			changed = append(changed, p.Pos)
		}
	}
	// Source -1: a changed column keeps the line (or none) of the template
	// column it replaces.
	if err := m.AddColumns(db, changed, -1); err != nil {
		return nil, err
	}
	return changed, nil
}

// writePNG writes img to path as ReplaceFile replaces a file (through a
// temporary file, synced and renamed), so that a failed write leaves no
// half a picture, and a symbolic link at path is replaced, not written
// through.
func writePNG(path string, img image.Image) error {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return err
	}
	return vfs.ReplaceFile(vfs.Default, filepath.Dir(path), filepath.Base(path), buf.Bytes())
}
