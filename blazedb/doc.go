// Package blazedb is Blaze's storage engine: an append-only log of
// checksummed records with an in-memory index. It stores keys and bytes and
// knows nothing of Minecraft; package provider builds Dragonfly's
// world.Provider on it.
//
// # Model
//
// A database is a directory holding chunks.dat (the log), index.dat (a
// snapshot of the index and the durable part of the log it covers; an
// accelerator that can always be rebuilt, and evidence of what was
// durable, written by Close when anything
// was appended since it was last written, by compaction and by checkpoints
// every Options.IndexCheckpointBytes appended) and
// LOCK. Keys are chunk keys (Key: dimension and chunk X, Z) or named keys
// (short strings, for player data and the like); both live in the one log,
// so one Batch can cover both. The formats are drawn in record.go and
// indexfile.go, and history's in timeline.go, snapshot.go and historyindex.go
// (docs/FORMAT.md lists every format).
//
// Every write appends a record. The index maps each live key to its newest
// record; chunk keys are ordered by the Morton code of (X, Z) within their
// dimension, so Keys returns an area in spatial order and compaction lays
// neighbours out together. Overwritten and deleted records are garbage
// once the history no longer needs them (see History below); compaction (Compact, or automatically past Options.CompactGarbageRatio)
// rewrites the log without them while reads and writes go on. Where a
// rename cannot replace an open file (Windows), it renames the old log
// aside first, and Open puts it back after a crash between the two
// renames (files.go). Compaction also stores a value that two or more
// live chunk keys hold once, written twice apart, with the keys as an
// alias list (alias.go): a flat arena or a void map is a few records.
// Reads of such a key verify the value as any other, and take the second
// copy when the first is damaged; the keys that hold a value are counted
// from the index, never stored.
//
// # History
//
// Every write takes the next sequence number, which its record keeps for
// good, compaction included. A point is a sequence number P naming the
// state every write numbered below P made: Seq is the present point, SeqAt
// the point of a past wall-clock time (to within a second: the log dates
// writes with time marks, timeline.go), a snapshot's Seq the state when it
// was taken. GetAt and GetNamedAt read a key at a point, and ChangedSince
// lists the keys written at or after one, deletions included, with the
// sequence number of each one's newest write.
//
// Compaction keeps every version a read at a point within Options.History
// may need, and every version a named snapshot's point reads
// (CreateSnapshot, Snapshots, DeleteSnapshot), and drops the rest as
// before; so do reads: a point older than the history floor (HistoryFloor)
// and not a snapshot's gives ErrHistory, never a guess. Older versions are
// found through an in-memory history index (key to versions, with
// sequence numbers and offsets, saved in index.dat and rebuilt by
// recovery's scan), so a read at a point costs one search and one read,
// with no copy and no scan. Snapshots are records of the log itself
// (snapshot.go), named keys in a reserved space that Names and ReadNamed
// leave out and writers cannot use (ErrReservedName); Stats counts them
// among the named keys. The design is drawn in history.go and
// compacthistory.go.
//
// # Guarantees
//
//   - A write that returned nil is durable as its Durability mode promises
//     (see the constants); DurabilitySafe and DurabilitySafeBatch promise it
//     on return. Sync makes everything written durable in any mode, and a
//     Batch with Sync set is durable on return in any mode.
//   - A batch is applied atomically: after a crash, all of it or none.
//   - Every read verifies the record's checksum and, for a compressed
//     value, the value's checksum after decompression (a value stored raw
//     is covered by the record's; Check sums it as well). Damage gives an
//     error wrapping ErrCorrupt that names the offset; never a panic,
//     never unverified bytes.
//   - Open recovers from a crash at any point, to every durable write and
//     a prefix of the others: the state after some write, with everything
//     before it and nothing after. A power loss may keep a later unsynced
//     write and lose an earlier one; the later one is then dropped too. So
//     a record that depends on an earlier one (an id it defines, say) never
//     survives without it, whatever the mode.
//   - Damage is told apart by the sync marks in the log (record.go): damage
//     a later mark shows was durable is decay, which Open skips and reports
//     (Recovery), the key falling back to its previous version; any other
//     damage is where a crash cut the unsynced writes, and the log is cut
//     there (only in a read-write open). Every fsync is followed by a mark
//     of what it made durable, written but not itself synced (a crash of
//     the process keeps it; the next fsync makes it durable), and Close and
//     compaction end the log with one. So decay costs the record it hits
//     (a batch: the batch), except after a power cut that took the last
//     fsync's mark: decay in what that fsync synced then looks like a
//     crash's damage, and the records after it are cut with it. Open scans
//     only the log past what index.dat covers; damage in the part it covers
//     is found by Check (and by reads) and mended the same way by Repair.
//     A scan costs about the same with damage as without: at most twice
//     the records after the first damaged one. Damage Open skipped stays
//     in chunks.dat until compaction or Repair drops it, and Check reports
//     it as long as it is there (with the keys its records name and where
//     each stands), whichever open skipped it.
//   - A live record damaged where Open does not look (decay after
//     index.dat covered it) is never dropped by compaction, nor does it
//     stop it: compaction copies its bytes as they are, with the key's
//     newest intact older version just before it, and goes on with the
//     rest, so the log stays bounded, reads of the key fail as before, and
//     Repair can still go back to that version. The damage is reported by
//     every Sync, Compact and Close (IsDamageReport tells such a report
//     from a failure), by Maintain after each compaction that carried it,
//     in a log line at each, and in Stats.DamagedKeys, until the key is
//     written, deleted or repaired (damage.go).
//   - Bytes Blaze knows were durable are never dropped as a crash's torn
//     tail. index.dat covers only durable bytes, so a log shorter than it
//     covers has lost durable data: a read-write Open refuses it with
//     ErrDurableLoss, naming the keys lost and changing nothing, unless
//     Options.AcceptDurableLoss; a read-only Open (blaze check) opens it and
//     names them (Recovery.Lost); Repair accepts the loss and names the
//     keys it gives up. The same holds when the whole log is gone (missing,
//     or too short to hold its header) beside index.dat, which is only
//     ever written beside a log whose header was durable: every key
//     index.dat lists is lost, and an Open that accepts the loss, or
//     Repair, rebuilds the log as its header alone, keeping index.dat's
//     generation (lostlog.go). Without index.dat a missing log is a
//     database never created, and a short file is not taken for a log.
//   - The log's header is kept twice: the header and its copy, the log's
//     first record. One damaged byte in either costs
//     nothing: Open reads the other and reports it (Recovery.HeaderDamage),
//     a read-write Open rewrites a damaged header from its copy, and a
//     damaged copy goes at the next compaction (Repair compacts). Both
//     destroyed leave the log unopenable (ErrCorrupt, not ErrNotBlaze,
//     when records follow) until Repair rebuilds the header from the
//     records and index.dat (header.go).
//   - A database Open creates is durable before anything is written to it:
//     the directories it makes and the database directory's entry in its
//     parent are synced (vfs.MkdirAll), so a power loss never takes a whole
//     database whose writes were acknowledged. That holds for databases
//     opened at once under a parent they both make: the Open that finds
//     the parent made by the other waits until it is durable.
//   - A failed fsync poisons the DB: writes fail with ErrPoisoned until it
//     is reopened, because a retried fsync can report success for lost data.
//     So does a compaction whose rename could not be made durable. Once
//     poisoned, no write and no Sync is acknowledged, not even one an
//     earlier fsync or the compaction's copy seemed to cover.
//   - Putting the value a key already holds appends nothing, in a batch
//     too: the record that holds it is earlier in the log, so it survives
//     whenever the batch does.
//   - A snapshot is durable when CreateSnapshot returns, whatever the
//     durability mode; after a crash, each surviving snapshot reads exactly
//     what it read before, and so does every point below which all writes
//     were durable (a Sync's), for as long as the history keeps it. A
//     snapshot survives restarts and compactions until DeleteSnapshot.
//   - Backup copies an open database as it is at one moment (every write
//     that returned before the call) while reads and writes go on; after a
//     crash its destination is either absent or a whole database
//     (backup.go).
//
// # Ownership
//
// Put and Batch copy what they need before returning: the caller may reuse
// its buffers at once. Get returns a slice the caller owns. GetShared
// returns one that may also be the cache's and other callers': the engine never
// writes to a value's memory once it holds it, so a caller may keep it but
// must never modify it.
//
// # Concurrency
//
// A DB is safe for concurrent use. Appends are serialised by a write lock
// that readers never take; the index is guarded by a read-write lock held
// only for in-memory work; file reads and fsyncs happen outside both. One
// background goroutine syncs (DurabilityBalanced) and starts compactions,
// each of which runs in a goroutine of its own; with
// Options.ExternalMaintenance there are none, and the owner calls Maintain
// instead (package segment runs many databases on one pool that way).
// Background errors are returned by the next Sync, Compact, Maintain or
// Close, and a failed background fsync by every later write.
//
// The history index is guarded with the index: a read at a point holds the
// read lock only to find its version. Reads at points run beside writes
// and compactions like any read; a version a compaction moves is read from
// whichever log the read began in. Between compactions the history is
// trimmed in memory at most once a minute, or once every tenth of the
// horizon when that is shorter (at most once a second), as a write checks
// whether a compaction is due: writers wait while the history is copied, readers
// only for the swap. Snapshots are created and deleted one at a time.
package blazedb
