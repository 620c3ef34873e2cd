// Package segment routes chunks into per-region Blaze databases, so that a
// region can be deleted or compacted on its own: a world of many arenas or
// plots, or a map whose far regions are trimmed.
//
// # On disk
//
//	dir/level.dat, dir/blaze/       settings, player spawns and the size of
//	                                the regions (a Blaze world; layout.go)
//	dir/regions/<dim>/r.<x>.<z>/    one Blaze database per region of
//	                                SegmentSize x SegmentSize chunks,
//	                                without a level.dat of its own
//
// Region x of chunk x is floor(x / SegmentSize). Segments are opened when
// first used and closed when idle, with at most MaxOpen open while idle
// ones can be closed. One pool of Workers goroutines does the background
// work of every open segment (syncing, compaction, caching): no segment
// has goroutines of its own.
//
// DeleteSegmentFor renames the region's directory to a "deleting-" name,
// the atomic point, syncs the parent directory, then removes it. After a
// crash the region is either wholly there or wholly gone: Open finishes
// the removal of any "deleting-" directory.
//
// Backup copies the root and every region into a new directory while the
// world is in use, each region whole as it is when the backup reaches it.
//
// Edition names the columns of every region at once (edition.go), so that
// an overlay over a segmented template can tell that its map changed.
//
// Prefetch, Pin and Unpin are provider.DB's (prefetch.go), so a
// prefetch.Prefetcher serves a segmented world: a prefetch opens a closed
// region ahead of the player, and a region holding pinned columns stays
// open.
//
// Regions lists a segmented world's region databases for tools: blaze
// check, compact and convert read a segmented world region by region.
//
// Engine (the root's) and ShipRegions are what a replicator ships the
// world through (ship.go; replica.StartSegmented): ShipRegions offers the
// open regions, those closed after being written to, and those deleted,
// so that shipping never reopens an idle region it has shipped.
//
// # Durability
//
// Durability is each region's database's, as Config.Durability sets it;
// closing a region makes it durable. After a power loss:
//
//   - in each region, what survives is a prefix of the stores made to
//     that region, as in one Blaze database;
//   - in DurabilitySafe and DurabilitySafeBatch, every store that
//     returned survives, in every region;
//   - in every mode, every store that returned before a Sync that
//     returned survives, in every region (and the root's settings and
//     player spawns);
//   - across regions there is no order: in DurabilityBalanced and
//     DurabilityFast a power loss may keep a later store in one region
//     and lose an earlier one, acknowledged, in another.
//
// The last is not fixable by syncing regions in order: each region is a
// file of its own, and the operating system writes any file's pages back
// whenever it likes, so only one log shared by every region could keep
// one order, which would cost regions their independence. A process crash
// loses nothing in any mode. TestCrashSimulation asserts exactly these.
//
// # History
//
// Snapshot, Snapshots, DeleteSnapshot, At (a View), ChangedSince and
// Revert work across regions, as provider.DB's do on a plain world: each
// region's engine keeps its own history (blazedb.Options.History), as the
// root's keeps the players', and history.go says how a point spans them (a
// snapshot is one of the same name in every region and the root, taken
// region after region).
package segment
