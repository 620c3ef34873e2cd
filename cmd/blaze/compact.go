package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/progress"
	"github.com/blazeworld/blaze/provider"
)

// runCompact compacts the Blaze world in dir, every region of it when it is
// segmented, and prints the sizes of its logs before and after on out; it
// returns the exit status.
func runCompact(out io.Writer, dir string) int { return runCompactWith(out, dir, compactOptions{}) }

// runCompactWith is runCompact with blaze compact's flags.
func runCompactWith(out io.Writer, dir string, o compactOptions) int {
	dbs, err := databases(dir)
	if err != nil {
		return failed("compact", err)
	}
	var before, after, live int64
	damaged := false
	for _, d := range dbs {
		step := progress.Start(o.progress, "compacting "+d)
		b, a, l, err := compact(d, o)
		step.Done()
		if blazedb.IsDamageReport(err) {
			// Compacted around records that stay damaged.
			for _, e := range findings(err) {
				fmt.Fprintf(out, "%s: damaged: %v\n", d, e)
			}
			damaged = true
		} else if err != nil {
			return failed("compact", err)
		}
		before, after, live = before+b, after+a, live+l
	}
	what := "chunks.dat"
	if len(dbs) > 1 {
		what = fmt.Sprintf("the logs of the world and its %d regions", len(dbs)-1)
	}
	fmt.Fprintf(out, "%s: %s %s -> %s (%s of live records)\n", dir, what, size(before), size(after), size(live))
	switch {
	case o.packing == provider.PackingArchive:
		fmt.Fprintln(out, "column data packed in zstd (archive)")
	case o.packing == provider.PackingOff:
		fmt.Fprintf(out, "column data unpacked, in %v\n", o.codec())
	case o.recompress:
		fmt.Fprintf(out, "column data recompressed with %v and packed\n", o.codec())
	}
	if damaged {
		fmt.Fprintf(out, "the damaged columns were kept as they are, with their newest intact older versions where there are any: blaze repair %s puts each back at that version, or removes it when there is none\n", dir)
		return exitDamaged
	}
	return exitOK
}

// compactOptions are blaze compact's flags.
type compactOptions struct {
	recompress  bool
	compression blazedb.Compression
	packing     provider.Packing // -archive, -unpack (PackingOff with recompress)
	progress    io.Writer        // each database's compaction shown (nil: none)
}

// codec is the codec -recompress brings column data to.
func (o compactOptions) codec() blazedb.Compression {
	if o.compression == blazedb.CompressionDefault {
		return blazedb.CompressionLZ4
	}
	return o.compression
}

// compact compacts the database in dir (recompressing as o asks) and
// returns the size of its log before and after, and of its live records. The settings are the
// server's: level.dat is neither read nor rewritten.
func compact(dir string, o compactOptions) (before, after, live int64, err error) {
	db, err := provider.Config{Log: slog.New(slog.DiscardHandler), ExternalMaintenance: true, NoLevelDat: true, SegmentRoot: true,
		Recompress: o.recompress, Compression: o.codec(), Packing: o.packing}.Open(dir) // compaction generates nothing
	if err != nil {
		return 0, 0, 0, err
	}
	eng := db.Engine()
	b := eng.Stats()
	err = eng.Compact()
	a := eng.Stats()
	if blazedb.IsDamageReport(err) {
		// Close repeats the report: it is the one of them to keep.
		err = nil
	}
	if err = errors.Join(err, db.Close()); err != nil && !blazedb.IsDamageReport(err) {
		return 0, 0, 0, err
	}
	return b.LogBytes, a.LogBytes, a.LiveBytes, err
}

// size formats n bytes for people.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
