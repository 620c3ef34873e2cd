package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/mcworld"
	"github.com/blazeworld/blaze/internal/progress"
)

// convertOptions are blaze convert's flags.
type convertOptions struct {
	quiet          bool
	compression    blazedb.Compression
	compressionSet bool // -compression was given
	players        bool // -players: players' data, not a world
}

// isMcworld reports whether path names an .mcworld file.
func isMcworld(path string) bool { return strings.EqualFold(filepath.Ext(path), ".mcworld") }

// runConvert converts src to dst and prints a summary; it returns the exit
// status: 0 when everything was converted, 2 when some columns, player
// spawns or LevelDB records could not be read or carried, 1 when the
// conversion stopped. An .mcworld src is unpacked first (as the demo
// server's -import does, with mcworld.Unpack); an .mcworld dst is
// converted to a directory beside it, then zipped (mcworld.Pack).
func runConvert(src, dst string, o convertOptions) int {
	var progressOut io.Writer
	if !o.quiet {
		progressOut = os.Stderr
	}
	if isMcworld(src) {
		tmp, err := os.MkdirTemp("", "blaze-convert-mcworld-*")
		if err != nil {
			return failed("convert", err)
		}
		defer os.RemoveAll(tmp)
		step := progress.Start(progressOut, "unpacking "+src)
		err = mcworld.Unpack(src, tmp)
		step.Done()
		if err != nil {
			return failed("convert", fmt.Errorf("unpack %s: %w", src, err))
		}
		src = tmp
	}
	kind, err := convert.Kind(src)
	if err != nil {
		return failed("convert", err)
	}
	if o.compressionSet && kind != "leveldb" {
		return failed("convert", fmt.Errorf("-compression is the codec of a Blaze world made from a LevelDB one: %s is a Blaze world", src))
	}
	zipTo := ""
	if isMcworld(dst) {
		if kind != "blaze" {
			return failed("convert", fmt.Errorf("an .mcworld holds a LevelDB world: %s is one already; give a directory to make a Blaze world in", src))
		}
		if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
			return failed("convert", fmt.Errorf("%w: %s exists", convert.ErrDestinationNotEmpty, dst))
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dst), ".blaze-convert-mcworld-*")
		if err != nil {
			return failed("convert", err)
		}
		defer os.RemoveAll(tmp)
		zipTo, dst = dst, filepath.Join(tmp, "world")
	}
	co := convert.Options{Compression: o.compression, Progress: progressOut}
	r, err := convert.Convert(src, dst, co)
	if err == nil && zipTo != "" {
		step := progress.Start(progressOut, "zipping "+zipTo)
		err = mcworld.Pack(dst, zipTo)
		step.Done()
		if err != nil {
			err = fmt.Errorf("write %s: %w", zipTo, err)
		}
	}
	if r != nil {
		if r.Leftover != "" {
			fmt.Printf("deleted %s, which a conversion cut short had left\n", r.Leftover)
		}
		to := r.To
		if zipTo != "" {
			to += " (" + zipTo + ")"
		}
		fmt.Printf("%s -> %s: %d columns and %d player spawns copied and verified in %v\n",
			r.From, to, r.Columns, r.Players, r.Took.Round(1e6))
		if n := r.ColumnRecords + r.WorldRecords; n > 0 {
			fmt.Printf("%d LevelDB records Blaze does not read carried: %d with columns, %d of the world\n", n, r.ColumnRecords, r.WorldRecords)
		}
		for _, f := range r.FailedRecords {
			fmt.Println("could not carry", f)
		}
		if r.To == "leveldb" {
			fmt.Println("note: LevelDB keeps each entity's UniqueID equal to its ID, and the scheduled-update tick only with scheduled updates")
		}
		for _, f := range r.Failed {
			fmt.Println("could not read", f)
		}
		for _, f := range r.FailedPlayers {
			fmt.Println("could not read", f)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "blaze convert:", err)
		return exitFailed
	}
	if len(r.Failed) > 0 || len(r.FailedPlayers) > 0 || len(r.FailedRecords) > 0 {
		return exitDamaged
	}
	return exitOK
}
