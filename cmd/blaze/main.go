package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider"
)

// commands lists blaze's commands in the order the usage shows them, each
// with its part of the usage (blaze CMD -h prints it alone).
var commands = []command{
	{"convert", `  blaze convert [-q] [-compression lz4|zstd|snappy|none] SRC DST
      Copies the world in SRC to DST, which must be missing or empty and not
      inside SRC: a LevelDB world (SRC/db) becomes a Blaze world, a Blaze
      world (SRC/blaze) a LevelDB one; SRC may not hold both. SRC may be a
      Bedrock .mcworld file; a DST ending in .mcworld is written as one
      (a LevelDB world, zipped). -compression is the codec of a Blaze
      DST's column data (default lz4; zstd is smaller, slower to write).
      The progress display is drawn on a terminal; otherwise each phase
      is logged as a line (-q: neither). Every column,
      level.dat and player spawns are copied and every column is verified
      after writing, in DST.convert-tmp, renamed to DST when done (a run cut
      short leaves no DST; the next run deletes DST.convert-tmp). SRC is
      never changed. Columns and player spawns that cannot be read are
      listed at the end; the exit status is then 2.
  blaze convert -players SRC DST
      Copies the players' data (inventories, positions) between Dragonfly's
      playerdb folder and a Blaze world, which keeps it beside its chunks: a
      playerdb folder SRC into the Blaze world DST, which must not be open,
      or a Blaze world SRC into a new playerdb folder DST. Records that
      cannot be read are listed; the exit status is then 2.
`},
	{"check", `  blaze check [-q] DIR
      Verifies the Blaze world in DIR without writing to it: the log and its
      index, every record's checksums, and every column and player spawn
      read back as a server reads them. Lists what is damaged, including
      damaged stretches of chunks.dat an earlier open skipped, until
      compaction or repair drops them; the exit status is then 2. Its
      progress, each log's check and then the columns read, is drawn on a
      terminal and logged as lines otherwise (-q: neither), as compact's
      and repair's are.
`},
	{"compact", `  blaze compact [-q] [-recompress [-compression lz4|zstd|snappy|none]] [-archive | -unpack] DIR
      Rewrites DIR's chunks.dat without the records that newer ones replaced
      (a server also does this by itself, in the background) and prints the
      sizes before and after. It packs every column's data, the versions
      the history keeps too: all of a column in one frame, at the strongest
      setting of its codec (LZ4 level 9, or zstd's best), which loads as
      fast. -archive packs it in zstd's best instead, whatever its codec:
      smaller, slower to load, for worlds kept rather than played (arena
      templates, backups). -unpack undoes packing, each part of a column in
      a frame of -compression's codec, as servers store them and as builds
      before packed columns read them. -recompress also brings every column's data
      to the codec -compression names (default lz4): a column keeps the
      codec it was stored in otherwise. A column whose newest record is damaged is
      kept as it is, with its newest intact older version, and named; the
      exit status is then 2 (blaze repair mends it).
`},
	{"repair", `  blaze repair [-q] DIR
      Mends what check reports as damaged: block dictionary entries that
      do not read are written back from the world's copy (dictionary.dat);
      a column whose newest record is damaged goes back to its newest intact
      version, or is removed (and generated again) when none is left; then
      compacts, leaving the damaged bytes behind. Prints each thing it
      changed.
`},
	{"info", `  blaze info [-template TEMPLATE] DIR
      Prints what the Blaze world in DIR holds without writing to it: its
      columns in each dimension and where they lie (the least and greatest
      chunk x and z), a segmented world's regions each with theirs, player
      spawns, and the size of its logs, live and garbage (what compaction
      drops); whether index.dat was used and what opening found damaged or
      torn. An arena overlay (demo-server -arena TEMPLATE -world DIR) is
      described as one: the columns its match changed, and the template
      edition it began on, compared with TEMPLATE's when given. It reads
      the index and the block dictionary, not the columns: blaze check
      verifies those.
`},
	{"render", `  blaze render [-dim overworld|nether|end] [-at POINT] [-template TEMPLATE] DIR OUT.png
      Draws a top-down map of the Blaze world in DIR into OUT.png without
      writing to the world: one pixel per block, in the colour of the
      highest block (shaded by height, north up), transparent where no
      column is stored, with white lines between the regions of a
      segmented world. -at draws the world as it was at POINT, a
      snapshot's name or an RFC 3339 time as changes and rollback read
      it (or now). An arena overlay (demo-server -arena TEMPLATE -world DIR) is
      drawn with the chunks its match changed outlined in magenta, over
      TEMPLATE's map when given.
`},
	{"snapshot", `  blaze snapshot create|list|delete WORLD [NAME]
      Names the world's present state (create), lists the snapshots with
      when each was taken, or deletes one. A snapshot costs no copy: the
      world's log keeps the versions it reads until it is deleted.
`},
	{"changes", `  blaze changes WORLD -since POINT
      Lists the columns (dimension, chunk X, chunk Z) changed after POINT:
      a snapshot's name or an RFC 3339 time (2026-11-27T04:00:00Z) within
      the history the world keeps (6 hours by default).
`},
	{"rollback", `  blaze rollback WORLD -to POINT [-area X1,Z1,X2,Z2] [-dim overworld|nether|end]
      Puts the columns changed after POINT back as they were then (those
      made since are removed): all of them, or those in the area (chunk
      coordinates, inclusive) of one dimension or all. It first takes a
      snapshot named before-rollback-TIME, so it can be undone with
      blaze rollback WORLD -to that name. Run with the server stopped.
      Without -area and -dim, the players' data kept in a plain world goes
      back too. All three work on plain and segmented worlds.
`},
	{"export", `  blaze export WORLD -at POINT -area X1,Z1,X2,Z2 [-dim D] [-y Y1,Y2] OUT.mcstructure
      Writes the blocks (with their block entities; no biomes or entities)
      of the area (chunk coordinates, inclusive; from Y1 to Y2, by default
      the dimension's whole height; overworld unless -dim) as they were at
      POINT into a Bedrock .mcstructure: POINT is a snapshot's name, an RFC
      3339 time or now. The structure's origin is the area's lowest corner.
`},
	{"import", `  blaze import WORLD IN.mcstructure -at X,Y,Z [-dim overworld|nether|end]
      Pastes a .mcstructure into the world with its lowest corner at X,Y,Z
      (blocks; structure voids keep the world's block). It first takes a
      snapshot named before-import-TIME to undo it with blaze rollback.
      Both work on plain and segmented worlds. Run with the server stopped.
`},
	{"promote", `  blaze promote ARENA TEMPLATE
      Writes the columns an arena changed (its overlay in ARENA) into its
      template world TEMPLATE in one crash-safe step that gives the
      template a new edition: every arena over it, ARENA too, forgets its
      match at its next start. Neither may be open (a running server holds
      them); a TEMPLATE the arena's changes were not made on is refused.
`},
	{"restore", `  blaze restore s3://BUCKET/PREFIX DIR [-at TIME]
      Rebuilds in DIR, which must not exist, the world a server shipped to
      that replica (demo-server -replica), as it was at TIME (an RFC 3339
      time; default the newest shipped), and verifies every record before
      DIR appears; a segmented world comes back with each of its regions
      as it was then. The object store's endpoint and credentials are read
      from AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY and AWS_REGION.
`},
	{"replica", `  blaze replica points s3://BUCKET/PREFIX
  blaze replica prune s3://BUCKET/PREFIX -before TIME
      points lists, oldest first, the times that replica can be restored
      to (blaze restore -at TIME), one a line: each time objects were
      shipped, with the writer's epoch and what was shipped then. prune
      deletes what no restore at TIME (RFC 3339) or later reads, after
      which a restore before TIME is refused; a server may be shipping
      meanwhile. The endpoint and credentials are read as
      restore reads them.
`},
	{"publish", `  blaze publish WORLD s3://BUCKET/PREFIX
      Uploads the Blaze world in WORLD, which no server may have open, as an
      arena template and prints its content digest: servers pull it by that
      digest into a local cache, verified (demo-server -arena
      s3://BUCKET/PREFIX@DIGEST). The endpoint and credentials are read as
      restore reads them.
`},
	{"version", `  blaze version
      Prints blaze's module version, the source revision it was built from
      and the Go version that built it.
`},
}

// command is one of blaze's commands and its part of the usage.
type command struct {
	name, usage string
}

const exitStatuses = `exit status:
  0   done
  1   the command failed (the reason is on stderr)
  2   it found damage or something it could not read: check and compact
      name it, convert copies the rest and lists it
  64  the command line is wrong (the usage is on stderr)
`

// usage is the whole usage: every command's, then the exit statuses.
func usage() string {
	var b strings.Builder
	b.WriteString("usage:\n")
	for _, c := range commands {
		b.WriteString(c.usage)
	}
	b.WriteString("  blaze help [COMMAND]\n      Prints this, or one command's usage (also blaze COMMAND -h).\n")
	b.WriteString("Flags may come before, between or after the operands; -- ends them.\n")
	b.WriteString(exitStatuses)
	return b.String()
}

// usageOf is the usage of the command name, or the whole usage if there
// is no such command.
func usageOf(name string) string {
	for _, c := range commands {
		if c.name == name {
			return "usage:\n" + c.usage + exitStatuses
		}
	}
	return usage()
}

// Exit statuses.
const (
	exitOK      = 0
	exitFailed  = 1 // the command could not do its work
	exitDamaged = 2 // it did, and found something unreadable
	exitUsage   = 64
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run runs the command line args (without the program's name) and returns
// the exit status.
func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage())
		return exitUsage
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "-h", "-help", "--help", "help":
		switch {
		case len(args) == 0:
			fmt.Fprint(os.Stdout, usage())
			return exitOK
		case len(args) == 1 && known(args[0]):
			fmt.Fprint(os.Stdout, usageOf(args[0]))
			return exitOK
		}
	case "version":
		return versionCmd(args)
	case "convert":
		return convertCmd(args)
	case "check":
		return checkCmd(args)
	case "compact":
		return compactCmd(args)
	case "repair":
		return repairCmd(args)
	case "info":
		return infoCmd(args)
	case "render":
		return renderCmd(args)
	case "snapshot":
		return snapshotCmd(args)
	case "changes":
		return changesCmd(args)
	case "rollback":
		return rollbackCmd(args)
	case "export":
		return exportCmd(args)
	case "import":
		return importCmd(args)
	case "promote":
		return promoteCmd(args)
	case "restore":
		return restoreCmd(args)
	case "publish":
		return publishCmd(args)
	case "replica":
		return replicaCmd(args)
	}
	fmt.Fprint(os.Stderr, usage())
	return exitUsage
}

func known(name string) bool {
	for _, c := range commands {
		if c.name == name {
			return true
		}
	}
	return false
}

// parseArgs parses args for the command fs names, which takes n operands
// (any number if n < 0), with its flags before, between or after them
// (blaze convert SRC DST -q; blaze rollback WORLD -to POINT); -- ends the
// flags. On -h it prints the command's usage on stdout and returns exitOK
// and false; on a wrong command line, the usage on stderr, exitUsage and
// false.
func parseArgs(fs *flag.FlagSet, args []string, n int) ([]string, int, bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var ops []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(os.Stdout, usageOf(fs.Name()))
			return nil, exitOK, false
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "blaze %s: %v\n", fs.Name(), err)
			return nil, usageError(fs.Name()), false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			ops = append(ops, rest...)
			break
		}
		ops = append(ops, rest[0])
		args = rest[1:]
	}
	if n >= 0 && len(ops) != n {
		return nil, usageError(fs.Name()), false
	}
	return ops, exitOK, true
}

// usageError prints the usage of the command name on stderr and returns
// exitUsage.
func usageError(name string) int {
	fmt.Fprint(os.Stderr, usageOf(name))
	return exitUsage
}

// parse parses args for the command name, which takes n operands, and its
// -q flag if quiet is not nil.
func parse(name string, args []string, n int, quiet *bool) ([]string, int, bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if quiet != nil {
		fs.BoolVar(quiet, "q", false, "no progress bar")
	}
	return parseArgs(fs, args, n)
}

func convertCmd(args []string) int {
	var o convertOptions
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.BoolVar(&o.quiet, "q", false, "no progress display")
	fs.TextVar(&o.compression, "compression", blazedb.CompressionDefault, "codec of a Blaze destination")
	fs.BoolVar(&o.players, "players", false, "the players' data, between a playerdb folder and a Blaze world")
	ops, code, ok := parseArgs(fs, args, 2)
	if !ok {
		return code
	}
	fs.Visit(func(f *flag.Flag) { o.compressionSet = o.compressionSet || f.Name == "compression" })
	if o.players {
		return runConvertPlayers(ops[0], ops[1])
	}
	return runConvert(ops[0], ops[1], o)
}

func checkCmd(args []string) int {
	var quiet bool
	ops, code, ok := parse("check", args, 1, &quiet)
	if !ok {
		return code
	}
	var progress io.Writer = os.Stderr
	if quiet {
		progress = nil
	}
	return runCheck(os.Stdout, progress, ops[0])
}

func compactCmd(args []string) int {
	var o compactOptions
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	fs.BoolVar(&o.recompress, "recompress", false, "bring column data to -compression")
	fs.TextVar(&o.compression, "compression", blazedb.CompressionDefault, "codec for -recompress")
	archive := fs.Bool("archive", false, "pack column data in zstd's best, for worlds kept rather than played")
	unpack := fs.Bool("unpack", false, "unpack column data into frames of -compression, as builds before packing read")
	quiet := fs.Bool("q", false, "no progress display")
	ops, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return code
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "compression" })
	if set && !o.recompress && !*unpack {
		fmt.Fprintln(os.Stderr, "blaze compact: -compression is the codec -recompress brings column data to: give -recompress too")
		return usageError("compact")
	}
	switch {
	case *archive && *unpack:
		fmt.Fprintln(os.Stderr, "blaze compact: -archive packs and -unpack unpacks: give one")
		return usageError("compact")
	case *archive:
		o.packing = provider.PackingArchive
	case *unpack:
		o.packing, o.recompress = provider.PackingOff, true
	}
	if !*quiet {
		o.progress = os.Stderr
	}
	return runCompactWith(os.Stdout, ops[0], o)
}

func infoCmd(args []string) int {
	var template string
	fs := flag.NewFlagSet("info", flag.ContinueOnError)
	fs.StringVar(&template, "template", "", "the template of the arena overlay DIR")
	ops, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return code
	}
	return runInfoWith(os.Stdout, ops[0], template)
}

func repairCmd(args []string) int {
	var quiet bool
	ops, code, ok := parse("repair", args, 1, &quiet)
	if !ok {
		return code
	}
	var progress io.Writer = os.Stderr
	if quiet {
		progress = nil
	}
	return runRepairWith(os.Stdout, progress, ops[0])
}
