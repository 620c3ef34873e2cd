// Command blaze is Blaze's tool for server owners.
//
//	blaze convert SRC DST
//
// copies the world in SRC to DST: a LevelDB (Dragonfly mcdb or Bedrock)
// world becomes a Blaze world and a Blaze world a LevelDB one. See package
// internal/convert for what it promises.
package main

import (
	"flag"
	"fmt"
	"os"
)

const usage = `usage: blaze convert [-q] SRC DST

Copies the world in SRC to DST, which must be missing or empty: a LevelDB
world (SRC/db) becomes a Blaze world, a Blaze world (SRC/blaze) a LevelDB one.
Every column, level.dat and player spawns are copied and every column is
verified after writing. SRC is never changed. Columns that cannot be read are
listed at the end; the exit status is then 2.
`

func main() {
	if len(os.Args) < 2 || os.Args[1] != "convert" {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(64)
	}
	os.Exit(convertCmd(os.Args[2:]))
}

func convertCmd(args []string) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	quiet := fs.Bool("q", false, "no progress bar")
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	if err := fs.Parse(args); err != nil || fs.NArg() != 2 {
		fs.Usage()
		return 64
	}
	return runConvert(fs.Arg(0), fs.Arg(1), *quiet)
}
