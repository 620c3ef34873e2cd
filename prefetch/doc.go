// Package prefetch warms Blaze's column cache with the chunks players are
// about to reach, so that a walking, sprinting or flying player never waits
// on the disk inside the World's tick.
//
// UpdatePlayer takes a player's position (usually from a player handler on
// every move, see Handler; a server whose worlds each have a provider and a
// Prefetcher of their own routes each world's players with Handler.For). From successive positions the prefetcher keeps
// a velocity, predicts the chunks that will come into view along it
// (further at higher speed), by the rule Dragonfly's World loads them by
// (a round view), and hands them to a bounded pool of workers that call
// the provider's Prefetch, which decodes each column and keeps a ready
// copy that the World's LoadColumn then takes without decoding or cloning
// anything. Any Blaze provider serves (see Source): a provider.DB, a
// segment.Provider, whose prefetch also opens a closed region ahead of the
// player, or an overlay.Provider, an arena. Chunks within another player's
// view, or within the player's own view from the last few chunks it left,
// are skipped: the World holds them already. A turn or a teleport drops
// the predictions that no longer apply, and Teleport, told of a teleport
// before it happens (Handler passes on Dragonfly's HandleTeleport),
// queues the whole view where the player is about to appear.
// UpdatePlayer never blocks: when the queue is full, predictions are
// dropped, and queued again when the player's path next changes (a move
// that changes none of the chunks behind the player, its own or those
// ahead predicts nothing anew, and one that changes it queues only what
// its prediction adds to the last one's). PinArea keeps an area (a spawn,
// an arena) in the cache however much else is loaded.
//
// Concurrency: a Prefetcher is safe for concurrent use, and a Handler is
// if the handler it wraps is. The workers call only the Source's Prefetch,
// beside the World and never holding the World's own lock.
package prefetch
