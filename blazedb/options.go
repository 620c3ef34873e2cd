package blazedb

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
)

// Durability chooses when appended bytes are fsynced. Each mode's promise
// is tested by the crash simulation in crash_test.go. It is a plain value,
// safe to copy and share.
type Durability uint8

const (
	// DurabilityBalanced (the default) hands every write to the operating
	// system before returning, so a crash of the process loses nothing, and
	// fsyncs in the background at least every Options.SyncInterval (and
	// whenever Options.SyncBytes are pending). A power loss or kernel crash
	// loses at most the writes of the last interval.
	DurabilityBalanced Durability = iota
	// DurabilityFast hands every write to the operating system and never
	// fsyncs except in Sync, Close, compaction, a Batch with Sync set, a
	// checkpoint of index.dat, CreateSnapshot and an Open that recovers
	// after a crash. A process crash loses nothing; a power loss may lose
	// anything written since the last Sync.
	DurabilityFast
	// DurabilitySafe returns from a write only after an fsync that started
	// after the write's bytes were written has succeeded.
	DurabilitySafe
	// DurabilitySafeBatch gives the promise of DurabilitySafe with group
	// commit: concurrent writers share one fsync instead of queueing one
	// each. A lone writer pays the same as in DurabilitySafe.
	DurabilitySafeBatch
)

func (d Durability) String() string {
	switch d {
	case DurabilityBalanced:
		return "balanced"
	case DurabilityFast:
		return "fast"
	case DurabilitySafe:
		return "safe"
	case DurabilitySafeBatch:
		return "safebatch"
	}
	return fmt.Sprintf("Durability(%d)", uint8(d))
}

// ParseDurability parses the names printed by Durability.String.
func ParseDurability(s string) (Durability, error) {
	for _, d := range []Durability{DurabilityBalanced, DurabilityFast, DurabilitySafe, DurabilitySafeBatch} {
		if d.String() == s {
			return d, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown durability %q (want fast, balanced, safe or safebatch)", ErrInvalidOptions, s)
}

// Options configures a DB. The zero value gives the defaults documented on
// each field. Open copies the struct and never modifies the caller's value,
// so one Options may be passed to several Opens at once, from any goroutine.
type Options struct {
	// Durability is the fsync policy. Default DurabilityBalanced.
	Durability Durability
	// SyncInterval is the longest time DurabilityBalanced leaves written
	// bytes unsynced. Default 1s. Read only in DurabilityBalanced.
	SyncInterval time.Duration
	// SyncBytes makes DurabilityBalanced sync early once this many bytes are
	// unsynced. Default 8 MiB.
	SyncBytes int64
	// Compression is the codec for new values. Default CompressionLZ4. Every
	// record stores its codec, so changing this never affects old records.
	Compression Compression
	// Recompress has compaction bring every put it copies to Compression
	// (recompress.go): a value stored in another codec, or raw, is stored
	// again in Compression (raw still when Compression does not shrink
	// it). Each record's raw value and its checksum are unchanged. Off,
	// compaction copies records in the codec they were written in.
	Recompress bool
	// Recoder, when set, is given the raw value of every chunk record
	// compaction copies, to store the value it returns in its place: for
	// an owner whose values hold compressed parts of their own (package
	// provider's frames), to bring those to its codec. Default nil: values
	// are copied as they are.
	Recoder Recoder
	// CacheBytes is the byte budget of the value cache. Default 128 MiB.
	// Negative disables the cache.
	CacheBytes int64
	// CompactGarbageRatio starts a background compaction when garbage bytes
	// exceed this fraction of the log. Default 0.5. Must be in (0, 1).
	CompactGarbageRatio float64
	// CompactMinBytes is the smallest log that is compacted automatically.
	// Default 16 MiB.
	CompactMinBytes int64
	// DisableAutoCompaction turns off compaction by garbage ratio; Compact
	// still works.
	DisableAutoCompaction bool
	// IndexCheckpointBytes rewrites index.dat in the background once this
	// many bytes have been appended since it last described the log, so
	// that Open after a crash scans at most about this much of the log
	// (see checkpoint.go). Default 256 MiB; negative turns it off, leaving
	// index.dat to Close and compaction.
	IndexCheckpointBytes int64
	// History is how long compaction keeps the versions a key had: reads
	// at any point in the last History (GetAt, SeqAt, ChangedSince) are
	// exact, and older ones fail with ErrHistory, except at a named
	// snapshot's point, which compaction keeps until DeleteSnapshot.
	// Default DefaultHistory; negative keeps no history beyond snapshots
	// (compaction keeps only live records and what snapshots pin).
	History time.Duration
	// ExternalMaintenance starts no background goroutine: the owner calls
	// Maintain regularly (at least every SyncInterval/2), which does the
	// periodic sync of DurabilityBalanced, the automatic compaction and the
	// index checkpoints.
	// For owners of many databases with a shared pool of workers.
	ExternalMaintenance bool
	// ReadOnly opens without writing anything: no lock file is created, a
	// torn tail is ignored rather than cut, and writes return ErrReadOnly.
	ReadOnly bool
	// AcceptDurableLoss lets a read-write Open go on when the log has lost
	// bytes that were durable (ErrDurableLoss): the keys that lost their
	// newest durable versions fall back to the older versions the log
	// still holds, or are gone, and Recovery (and the log, at error level)
	// names each. Off, such an Open fails and changes nothing. Repair sets
	// it. A read-only Open always goes on, and reports the loss the same
	// way.
	AcceptDurableLoss bool
	// FS is the filesystem. Default vfs.Default, the operating system's.
	FS vfs.FS
	// Logger receives recovery and background reports, a warning for each
	// fsync of chunks.dat that takes a second or more, a line at Info for
	// each compaction, and a summary at Close (Info after a session that
	// wrote, else Debug). Default slog.Default(). Errors are also returned
	// by calls, never only logged.
	Logger *slog.Logger
}

// DefaultHistory is the default Options.History. docs/BENCHMARKS.md
// ("Keeping history") measures what it costs on disk.
const DefaultHistory = 6 * time.Hour

func (o Options) withDefaults() (Options, error) {
	if o.History == 0 {
		o.History = DefaultHistory
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = time.Second
	}
	if o.SyncBytes == 0 {
		o.SyncBytes = 8 << 20
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 128 << 20
	}
	if o.CompactGarbageRatio == 0 {
		o.CompactGarbageRatio = 0.5
	}
	if o.CompactMinBytes == 0 {
		o.CompactMinBytes = 16 << 20
	}
	if o.IndexCheckpointBytes == 0 {
		o.IndexCheckpointBytes = 256 << 20
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.Durability > DurabilitySafeBatch:
		return o, fmt.Errorf("%w: durability %d", ErrInvalidOptions, o.Durability)
	case o.SyncInterval < 0:
		return o, fmt.Errorf("%w: negative SyncInterval", ErrInvalidOptions)
	case o.SyncBytes < 0:
		return o, fmt.Errorf("%w: negative SyncBytes", ErrInvalidOptions)
	case o.CompactGarbageRatio <= 0 || o.CompactGarbageRatio >= 1:
		return o, fmt.Errorf("%w: CompactGarbageRatio %v not in (0, 1)", ErrInvalidOptions, o.CompactGarbageRatio)
	case o.CompactMinBytes < 0:
		return o, fmt.Errorf("%w: negative CompactMinBytes", ErrInvalidOptions)
	case !o.Compression.valid():
		return o, fmt.Errorf("%w: compression %d", ErrInvalidOptions, o.Compression)
	}
	return o, nil
}
