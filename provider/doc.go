// Package provider is Blaze as Dragonfly's world.Provider: set a *DB as a
// server's WorldProvider in place of Dragonfly's LevelDB provider (mcdb).
//
// # Model
//
// A world directory holds level.dat and levelname.txt in Dragonfly's own
// format, level.dat.blaze, a checksummed copy of level.dat (leveldat.go),
// blaze/, the engine (package blazedb), and dictionary.dat, a copy of the
// block dictionary outside the engine's log (dictcopy.go). Each
// column is one engine record keyed by (dimension, x, z) whose layout is
// drawn in internal/column/format.go: the sub-chunks in the layout of
// Dragonfly's network encoding, with palette entries as ids into the
// world's block dictionary (dictionary.go), then biomes, block entities,
// entities and scheduled updates. Each part is compressed on its own (Config.Compression), so a
// store compresses only the parts that changed since the column was last
// stored or loaded; the engine stores records as they are. Compaction packs
// the records it copies (Config.Packing, packing.go; issue 41): every part
// in one frame at its codec's strongest setting, which a store of the
// column, changed, writes in parts again. Player spawns and dictionary
// entries are named engine records.
//
// Decoding builds Dragonfly's paletted storages straight from a record's
// index words (internal/column/raw.go), a column's storages from a few shared
// allocations, through eight private fields of Dragonfly's chunk types
// (package internal/rawchunk, the provider's only use of unsafe) that a
// probe proves against Dragonfly's own decoder when the process starts; if
// it refuses, or the build has the blaze_safe tag, decoding goes through
// NetworkDecode and encoding through Dragonfly's encoders.
//
// A cold load reads its record into a pooled buffer, hands the decoded
// column to the caller and queues the key for the snapshot worker
// (snapshotworker.go), which reads the record again and decodes the
// cache's own copy once loads have paused for a millisecond, so that a
// burst of loads does not compete with its own second decodes.
//
// # Guarantees
//
//   - Every part of a column comes back exactly, in all three dimensions.
//   - A missing column satisfies errors.Is(err, leveldb.ErrNotFound);
//     all damage wraps blazedb.ErrCorrupt, and a CorruptionError names
//     the file and the record (a record that reads and does not decode
//     wraps ErrColumnCorrupt too; one whose checksum fails a
//     *blazedb.CorruptionError with the offset); never a panic, and one
//     bad column never hides another. Config.Repair (blaze repair) puts a
//     damaged column back at its newest intact version, or removes it when
//     none is left.
//   - Block states survive a change of runtime ids; a state the registry
//     does not know fails the load with ErrUnknownState, and that column is
//     not overwritten while the DB is open and the column cannot be read
//     (quarantine.go): a store over it is refused until a registry is set
//     under which it decodes again. A column using a dictionary entry that
//     was lost fails the same way, and its error wraps ErrColumnCorrupt too.
//   - A block dictionary entry that does not read from the engine (damaged,
//     decoding badly, or lost with a stretch of the log recovery skipped) is taken from
//     dictionary.dat when the world opens, and written back unless the
//     world is read-only (DictionaryRestored lists them): damage to the log
//     costs at most the entries added since the world last closed. A copy
//     whose lineage (dictcopy.go) is not this world's is never used. The
//     copy follows new entries while the world is open (within about a
//     second, off the store's path), so no single fault loses an entry;
//     Repair never deletes one that no copy holds, but keeps it as lost
//     (its id is never reused) until a copy that holds it is put back. An
//     entry is written in the batch of the first column that uses it, and
//     the engine recovers a prefix of its writes after a crash, so no
//     column survives one without its entries.
//   - level.dat that is missing from a world that exists, damaged, or
//     different from its checksummed copy is read from level.dat.blaze,
//     loudly, and written back by a read-write open (SettingsRecovery
//     says what was found); Repair writes either file from the other.
//   - Storing an unchanged column writes nothing; a column that could not
//     read back as given (a layer missing, an index beyond its palette) is
//     refused with ErrInvalidColumn and writes nothing either (in Balanced
//     and Fast, one whose content does not encode is refused by the store
//     worker, and the next call that can report it returns the error).
//   - The world's Edition (edition.go) changes with the first column
//     written after each open, in the same atomic batch, and when damage
//     puts columns back to older versions: what was built on the world's
//     columns (an arena's overlay) can tell that they changed.
//   - Backup copies the open world as it is at the call (backup.go);
//     after a crash its destination is absent or a whole world.
//   - Writes are as durable as Config.Durability promises (blazedb). After
//     a crash at any point the world opens with every column and player
//     spawn the mode had made durable, exactly (crash_test.go). In
//     DurabilityBalanced and DurabilityFast a column store is queued and
//     written off the World's tick (storequeue.go, storeworker.go): a
//     process crash can lose the stores of the last second, 64 MiB at most,
//     and keeps every store acknowledged before some moment. Sync and
//     Close write the queue first; loads read it. A checkpoint
//     (checkpoint.go) writes it before it arms, holding the checkpoint's
//     gate, which the store worker never takes; while a checkpoint is
//     gathered a store is not queued but goes into its batch, so that none
//     lands beside or after it.
//
// # Ownership
//
// LoadColumn returns a column the caller owns alone: the cache keeps its
// own private snapshot and hands out deep copies. No two of its sub-chunks
// share a storage either: where a record writes a biome storage as a repeat
// of the one below, Dragonfly's decoders make both sub-chunks point at one
// storage (a SetBiome in either would change both); Blaze copies it. A copy
// Prefetch made ahead of time is handed out to one LoadColumn, under the
// cache's lock, and never to anyone else. StoreColumn has taken what
// it keeps of the column (a private copy; in Safe modes its encoding too)
// when it returns,
// so the World may go on mutating the column. The private copy of the
// blocks comes from a few shared allocations, as a decoded column's do, and
// leaves out the light: a World computes a loaded chunk's light afresh.
//
// # Concurrency
//
// A DB is safe for concurrent use: the worlds of three dimensions call it at
// once, beside the engine's background work, a snapshot worker and a store
// worker, which waits for a burst of stores (a Save) to pause before it
// takes them and encodes each batch it takes on up to GOMAXPROCS goroutines
// (or, with ExternalMaintenance, the owner's Maintain, and no store
// queue), and prefetching. Locks are
// held only for memory work; no I/O happens under the column cache's lock.
//
// # Lock order
//
// The provider's mutexes, what each guards, and the order they are taken
// in: a goroutine holding one takes only those below it. The engine's
// locks come after all of them (the engine never calls back).
//
//  0. checkpointMu (one Checkpoint at a time in a process), then
//     playerDBs (the DBs serving players), then DB.ckpt.mu: held for
//     reading across each column or player write, which a pending
//     checkpoint gathers into its batch (checkpoint.go), and for writing
//     while a checkpoint arms, after the store queue drains, or ends.
//  1. DB.backupMu, DB.editMu, copyKeeper.mu (DB.copier), viewPins.mu
//     (DB.views): never two at once, and each held across engine I/O.
//     backupMu lets one Backup run at a time; editMu is held across the
//     first column write (or Revert's batch) after Open, which writes the
//     new edition, so that no column reaches the log under the old one;
//     copyKeeper.mu makes one write of dictionary.dat at a time and guards
//     its pending error; viewPins.mu guards the Views open on each
//     snapshot, held across DeleteSnapshot so that none opens meanwhile.
//  2. DB.regMu: the block registry and the column cache built for it;
//     SetBlockRegistry holds it while the dictionary resolves its entries
//     under the new registry.
//  3. DB.setMu: level.dat's data, the Settings, and writing level.dat.
//  4. dictionary.mu: the dictionary's entries, both id maps, its registry
//     and chunk templates, and the state of dictionary.dat. The column
//     codec takes it through its Dictionary (Lock, Registry, Decoding,
//     Unknown) briefly, to translate ids, never across encoding or I/O.
//  5. entryCache.mu (sharedEntries, one per process): decoded entries and
//     their resolutions by registry.
//
// These are leaves, under which no other lock is taken: columnCache.mu
// (the cache's list, index and pins), quarantine.mu (the quarantined
// columns), fillQueue.mu (the snapshot worker's jobs), storeQueue.mu (the
// queued stores, waited on through its condition variable, which releases
// it; the store worker writes with it released) and View.regMu (a View's
// registry error).
package provider
