// Package overlay puts a disposable, writable overlay over a read-only
// template world, so that a minigame arena resets in milliseconds however
// large its map: ResetOverlay forgets every change of the match at once.
//
// Reads go to the overlay first, then to the template; writes go only to
// the overlay. The template is never written through an overlay, and many
// overlays may share one template (and its caches). Each overlay adds only
// what its match changed, as whole columns, which over a changed map would
// show the old map through the new one. So CURRENT records the template's
// edition (provider.DB.Edition, segment.Provider.Edition), which changes
// whenever a Blaze world's columns do, and Open forgets the match (a reset,
// logged as a warning) when the template's edition is not the recorded
// one. A template of another kind (a LevelDB world) has no edition, and
// nothing tells that it changed: call ResetOverlay before serving an
// overlay over such a changed map. Open a template read-only: one written
// while an overlay is in use changes under the match, which nothing can
// undo.
//
// Prefetch, Pin and Unpin are provider.DB's (prefetch.go), so a
// prefetch.Prefetcher serves an arena: a prefetch goes to the overlay for a
// column the match changed and to the template for the rest, and a pin
// holds in both, across resets, until Unpin or Shutdown.
//
// # History
//
// An overlay offers no snapshots, views or ChangedSince: its generations
// are Blaze worlds whose engines keep history, but a reset discards a
// generation with all of it, by design. Take snapshots of the template
// world instead (opened writable by its owner, provider.DB.Snapshot). A
// provider.View of the template (a map as it was at a snapshot) can be
// the template itself: it never changes while open, but has no edition,
// so, as for a LevelDB template, call ResetOverlay when the overlay was
// last used over another point.
//
// # On disk
//
//	dir/CURRENT        names the current generation and the template's edition:
//	                   "blaze-overlay 2 gen-000007 9f86d081884c7d659a2feaa0c55ad015\n"
//	                   (its format is drawn in generation.go)
//	dir/gen-000007/    a Blaze world (level.dat, blaze/) holding the changes
//
// An empty generation (the spare) is prepared in the background after Open
// and after every reset, so ResetOverlay only renames a new CURRENT into
// place (the commit point) and swaps the spare in. It waits for no fsync:
// the commit is made durable in the background, and before any fsync of
// the new generation, so before any write of the new match is promised
// durable (commit.go). The old generation is discarded unsynced and deleted
// in the background once the commit is durable. After a crash at any point
// the overlay opens either reset or not, never half: Open follows CURRENT
// (completing a reset whose CURRENT the crash cut short) and deletes every
// other generation it finds. A crash may undo a reset that returned, as
// the demo resets its arena at every start anyway; a write to the new
// generation that was promised durable is never lost. A reset that fails
// before its commit returns an error and leaves the match in place, on
// disk too; one whose commit was made returns an error only to report
// earlier background work that failed ("reset done, but ..."), and the
// reset stands. A damaged CURRENT (one
// that is not the format of generation.go) names no generation and no
// template edition that can be trusted: Open logs an error and resets,
// rather than refuse to serve the arena. So it does when the generation
// CURRENT names does not open whole (blazedb.ErrCorrupt: durable data
// lost, its log's header destroyed). A CURRENT of a version this build
// does not read, newer or from before the first release, is no damage:
// Open refuses it (blazedb.ErrVersion) and changes nothing.
package overlay
