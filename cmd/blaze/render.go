package main

import (
	"bytes"
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
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

func renderCmd(args []string) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	dimName := fs.String("dim", "overworld", "the dimension to draw: overworld, nether or end")
	ops, code, ok := parseArgs(fs, args, 2)
	if !ok {
		return code
	}
	dim, ok := dimensions[strings.ToLower(*dimName)]
	if !ok {
		fmt.Fprintf(os.Stderr, "blaze render: unknown dimension %q (want overworld, nether or end)\n", *dimName)
		return exitUsage
	}
	return runRender(os.Stdout, ops[0], ops[1], dim)
}

var dimensions = map[string]world.Dimension{"overworld": world.Overworld, "nether": world.Nether, "end": world.End}

// runRender draws a top-down map of dim in the Blaze world in dir, without
// writing to it, into the PNG file out (replaced if it exists), and returns
// the exit status.
func runRender(stdout io.Writer, dir, out string, dim world.Dimension) int {
	dbs, err := databases(dir)
	if err != nil {
		return failed("render", err)
	}
	m := worldmap.New(dim, nil)
	for i, d := range dbs {
		db, err := provider.Config{Log: slog.New(slog.DiscardHandler), ReadOnly: true, NoLevelDat: i > 0, SegmentRoot: true,
			ColumnCacheBytes: -1, ExternalMaintenance: true}.Open(d)
		if err != nil {
			return failed("render", err)
		}
		err = m.Add(db, i)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return failed("render", fmt.Errorf("%s: %w", d, err))
		}
	}
	if m.Columns() == 0 {
		return failed("render", fmt.Errorf("%s has no columns in the %v", dir, dim))
	}
	img, origin, err := m.Image()
	if err != nil {
		return failed("render", err)
	}
	if err := writePNG(out, img); err != nil {
		return failed("render", err)
	}
	b := img.Bounds()
	fmt.Fprintf(stdout, "%s: %s of the %v, %d×%d blocks from chunk (%d, %d) at the top left (north up)\n",
		out, count(m.Columns(), "column", "columns"), dim, b.Dx(), b.Dy(), origin[0], origin[1])
	return exitOK
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
