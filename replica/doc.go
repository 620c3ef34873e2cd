// Package replica keeps a Blaze world's copy off the machine, in an
// S3-compatible object store (issue 39), and rebuilds the world from it as
// of any point in time.
//
// # Model
//
// A world's chunks.dat is an append-only log: within one generation its
// durable bytes never change, and a compaction starts a new generation.
// A Replicator ships it as immutable objects (layout.go): at most every
// Config.Interval the durable bytes appended since the last shipment,
// a whole copy after each compaction (the generation changed) and first
// in each epoch, unless the replica's log is a prefix of this one (the
// same generation, and the SHA-256 its last object carries of its bytes
// what the local log's first bytes hash to: resume.go), and level.dat,
// levelname.txt, dictionary.dat and the engine's index.dat whole when they
// changed. Restore picks,
// for a time, the newest whole copy shipped by then and the bytes
// appended after it by then.
//
// A segmented world (package segment, StartSegmented) is shipped as a
// plain world for its root, which holds the regions' size (the layout
// record), and likewise for each region under a prefix of its own
// (segments.go): the open regions at every shipment, one closed after
// being written to once more, every region first in each epoch (resumed
// or whole), and
// a mark when a region is deleted, before which a restore takes none of
// its objects. Restore rebuilds every region the replica held at the time
// asked for, each verified as the root is.
//
// # Guarantees
//
//   - Shipping never blocks a store or the World's tick: a goroutine reads
//     the log through blazedb.DB.DurableLog and ReadLogAt, which take no
//     lock a writer waits for, and the files, which are replaced by rename.
//   - Only durable bytes are shipped, so a crash of the machine never
//     leaves the replica holding bytes the local log lost. On total loss
//     of the machine, what was durable up to Interval (plus the engine's
//     own sync interval) before is lost.
//   - A failed shipment is retried with backoff (Interval, doubling, up
//     to MaxBackoff), counted in Stats, logged, and returned by the next
//     call that reports (Ship, Err, Close). Local data is only read.
//   - A restore is verified before its directory appears: the log opens
//     read-only with nothing torn or damaged and the engine's Check reads
//     every record (checksums end to end); an object whose length is not
//     what its name says, or a gap in the log, is ErrCorrupt.
//
// # One writer
//
// The manifest names the writer that owns the replica and its epoch. Start
// takes it by a conditional write: If-None-Match: * when there is none,
// else If-Match on the ETag it read, with the epoch one higher; it refuses
// (ErrOwned) while another owner's lease runs (Config.Lease after its last
// renewal). Every shipment first renews the manifest with If-Match on the
// ETag this writer last wrote: when another writer took the replica (this
// one paused past its lease, or Config.Takeover), that fails and the writer
// is fenced (ErrFenced) and uploads nothing more. Objects carry their
// writer's epoch, and a restore reads an epoch's objects only from before
// the next epoch began (by the writers' clocks), so a fenced writer's late
// upload changes nothing.
//
// # Templates
//
// PublishTemplate uploads a closed world as an arena template named by the
// SHA-256 of its manifest (template.go); PullTemplate brings it into a
// local cache, verified, for overlays to share.
//
// # Concurrency
//
// A Replicator is safe for concurrent use. A Store is safe for concurrent
// use. Restore may run while a writer ships: it reads what was shipped by
// the time it lists the objects.
package replica
