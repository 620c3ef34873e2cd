package provider

import (
	"log/slog"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider/internal/column"
	"github.com/df-mc/dragonfly/server/world"
)

// Config holds the optional parameters of a DB, in the shape of Dragonfly's
// mcdb.Config. The zero Config gives the defaults documented on each field.
// Open takes it by value and never modifies it, so one Config may open
// several worlds at once, from any goroutine; what its pointer fields hold
// (Log, Blocks, FS) must be safe for concurrent use, as they are shared.
type Config struct {
	// Log receives errors and reports. Default slog.Default().
	Log *slog.Logger
	// Blocks is the block registry columns are decoded with until the World
	// calls SetBlockRegistry. Default world.DefaultBlockRegistry.
	Blocks world.BlockRegistry

	// Durability is the engine's fsync policy (see blazedb.Durability).
	// Default blazedb.DurabilityBalanced.
	Durability blazedb.Durability
	// Compression is the codec for column data. Default LZ4. The provider
	// compresses each part of a column record on its own (see internal/column/format.go),
	// so the engine itself stores records as they are.
	Compression blazedb.Compression
	// Recompress has every compaction (blaze compact -recompress) bring
	// the frames of the column records it copies to Compression, the
	// history's versions too (see frameRecoder). Default false: a frame
	// keeps the codec it was written in, and a store compresses only the
	// parts of a column that changed, so a world changes codec part by
	// part.
	Recompress bool
	// Packing is how compaction stores the column records it copies:
	// default PackingCold, the columns not stored since the compaction
	// before with every part in one frame, at the strongest setting of
	// their codec, which loads as fast; PackingArchive, in zstd's best
	// (smaller, slower loads); PackingOff, as stored (see Packing).
	// Recompress brings records to Compression first; PackingArchive
	// overrides it.
	Packing Packing
	// CacheBytes is the engine's cache of records. Default 32 MiB (less than
	// the engine's own default: the column cache already keeps recently used
	// columns, and a second full copy of them would double the memory);
	// negative disables it.
	CacheBytes int64
	// ColumnCacheBytes is the budget of decoded columns kept for hot loads,
	// counted by their encoded size. Default 64 MiB; negative disables it.
	ColumnCacheBytes int64
	// SyncInterval is DurabilityBalanced's longest fsync delay. Default 1s.
	SyncInterval time.Duration
	// History is how long the engine keeps every version of every column
	// and player spawn, for At and ChangedSince over a time (see
	// blazedb.Options.History). Default blazedb.DefaultHistory; negative
	// keeps only what snapshots read.
	History time.Duration
	// ExternalMaintenance starts no goroutine: the owner calls DB.Maintain
	// regularly (see blazedb.Options.ExternalMaintenance). Cold loads are
	// then cached by Maintain instead of a background worker.
	ExternalMaintenance bool
	// ReadOnly opens without writing anything: stores fail and level.dat is
	// never rewritten.
	ReadOnly bool
	// NoLevelDat opens a database that is part of a larger world whose
	// owner keeps the settings (a segment's region): Open neither reads nor
	// writes level.dat or levelname.txt, and neither does Close or
	// SaveSettings; Settings starts from Dragonfly's defaults and lives
	// only in memory, sparing a region the reading, parsing and (on Close)
	// atomic replacing of both files.
	NoLevelDat bool
	// SegmentRoot allows opening the root world of a segmented world
	// (package segment), a directory holding regions/: segment sets it, and
	// so do the tools that read or mend a segmented world region by region.
	// Without it such a directory is refused with ErrSegmentedWorld, as a
	// plain provider would find none of the chunks kept in the regions: a
	// World would generate them again, or (read-only, say as an arena's
	// template) show an empty world.
	SegmentRoot bool
	// AcceptDurableLoss opens a world whose log lost bytes that index.dat
	// shows were durable, without them, instead of refusing it with
	// blazedb.ErrDurableLoss (see blazedb.Options.AcceptDurableLoss): the
	// loss is logged as an error, and the columns lost are generated again
	// when loaded. Default false: blaze check names what was lost, and
	// blaze repair gives it up by name.
	AcceptDurableLoss bool
	// dictLost, set only by Repair after the engine gave up durable bytes,
	// has the open look in dictionary.dat for every entry the engine
	// lacks, as an open that sees the loss itself does.
	dictLost bool
	// FS is the filesystem. Default the operating system's.
	FS vfs.FS
}

func (c Config) withDefaults() Config {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	c.Log = c.Log.With("provider", "blaze")
	if c.Blocks == nil {
		c.Blocks = world.DefaultBlockRegistry
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = 32 << 20
	}
	if c.ColumnCacheBytes == 0 {
		c.ColumnCacheBytes = 64 << 20
	}
	if c.FS == nil {
		c.FS = vfs.Default
	}
	return c
}

func (c Config) engineOptions() blazedb.Options {
	return blazedb.Options{
		Durability:   c.Durability,
		Compression:  blazedb.CompressionNone, // records compress their own parts
		CacheBytes:   c.CacheBytes,
		SyncInterval: c.SyncInterval,
		History:      c.History,
		ReadOnly:     c.ReadOnly,

		Recoder:             c.recoder(),
		ExternalMaintenance: c.ExternalMaintenance,
		AcceptDurableLoss:   c.AcceptDurableLoss,
		FS:                  c.FS,
		Logger:              c.Log,
	}
}

// recoder is the engine's Recoder: one that packs column records as
// Packing says and, with Recompress, brings their frames to Compression
// (LZ4 by default); nil when neither applies.
func (c Config) recoder() blazedb.Recoder {
	var r frameRecoder
	if c.Recompress {
		r.comp = c.Compression
		if r.comp == blazedb.CompressionDefault {
			r.comp = blazedb.CompressionLZ4
		}
	}
	switch c.Packing {
	case PackingArchive:
		r.pack, r.comp = true, blazedb.CompressionZstd
	case PackingOff:
	default:
		r.pack = column.Packs(r.comp)
	}
	if !r.pack && r.comp == blazedb.CompressionDefault {
		return nil
	}
	return r
}
