// Package restore puts an area of a running Dragonfly World back as another
// world.Provider holds it (a template world, an mcdb world, a point-in-time
// view), while players are in the World, within a time budget per tick.
//
// # Model
//
// A Job walks the area's columns in order. Before each slice it loads the
// next source columns from the source provider on its own goroutine, off the
// World's tick, and prepares copies of their block and biome storages and
// their block entities as a load decodes them. Each slice is one
// transaction (World.Do) a tick apart. Comparing on the tick would read
// every storage of the area on the World's thread, so a slice exchanges
// instead: each of the World's sub-chunks is given the copies of the
// source's layer storages (blocks.go) and the chunk the source's biome
// storages (biomes.go), and the slice keeps the World's former storages,
// which only the job then holds; it keeps a copy of each block entity's
// block value, and replaces the entities whose identity or position
// differs. The job compares what it kept with the source off the tick, and
// a later slice commits what differed: counts it, marks the column
// modified, tells the chunk's viewers (a block update per changed block,
// or the whole chunk when many blocks or any biome changed), and puts back
// a differing block entity after comparing it once more. The last checks
// run on the tick when the slice has the time for all of them (a small
// area then takes one tick). When every column is done and every deferred
// comparison made it computes the light of the changed columns and their
// neighbours on private copies, off the tick, and swaps the lit sub-chunks
// in. The clock is checked between units of work (a column, one chunk's
// copy or light), so a slice exceeds Config.TickBudget by at most one
// unit. A paste (Config.Import) compares and sets its blocks on the tick,
// block by block where it covers part of a sub-chunk.
//
// # How the job reaches the World's chunks
//
// Dragonfly v0.11.2 offers no hook to read or swap a column, and no public
// way to the World's provider. The one public path to a chunk the World
// holds is a world.Loader: the job keeps a Loader of radius 0 (with a viewer
// that shows nothing) on every column it works on, which gives it the
// World's own *world.Column and keeps the chunk in memory while the job
// needs it. A column the World does not hold is loaded through the World by
// the same Loader: on a ticking World Dragonfly's chunk workers read it from
// the provider off the tick, and the job works on it in a later slice.
//
// Writing a column the World does not hold straight to the World's provider
// would be cheaper, but it is not safe: between the job's check that the
// chunk is not loaded and its write, a player walking in or a chunk worker
// already under way can read the old column, and the World would then show
// it and, once modified, store it over the restored one. Dragonfly exposes
// neither its provider nor a way to keep a position from loading, so loading
// through the World is the correct way, and with a fast provider the cheap
// one. The columns stay loaded until the World's next unload of unused
// chunks, which saves them.
//
// # Guarantees
//
//   - Blocks of every layer, biomes, block entities and entities of the area
//     end as the source holds them. Columns the source lacks are left alone
//     and counted (Stats.ColumnsMissing). Players are never touched.
//   - Entities are compared by identity (unique id and type) and position:
//     an entity the World holds with the same id and type at the same place
//     is kept as it is, whatever else differs; otherwise the column's entities
//     are replaced by the source's.
//   - Light: Dragonfly computes light only when it loads a chunk (SetBlock
//     leaves it), so the job recomputes it as a load does, for the columns
//     where a change affected light and their neighbours: each is filled
//     again and light is spread over every 3×3 window around them whose
//     chunks are all loaded. This runs on copies (the source's columns for
//     the area, clones for chunks outside it) on the job's goroutine; a
//     slice then swaps each lit sub-chunk into the World where its blocks
//     are still the ones lit. Afterwards the light equals what loading the
//     restored chunks would compute.
//   - A changed column is marked modified, so the World saves it.
//   - The job touches nothing outside the area except the light of the
//     columns next to it.
//   - While the job runs its loaders are viewers of the World: the World
//     ticks (as it does whenever a player is in it) and random block ticks
//     happen near the area.
//
// # Limits
//
// Blocks are written into the chunk directly, as World.BuildStructure does:
// no neighbour updates, no redstone invalidation, and scheduled block
// updates the World already holds for the area still run. Viewers are told
// of changed blocks and biomes a tick after the World holds them, and the
// column's height map is recomputed from then on. The job keeps the area's
// source columns in memory until it is done (they are the light
// computation's copies), and the prefetched ones a second time as the
// copies it gives the World. A cancelled job leaves what it put back
// (committed as it stops), without the light recomputed.
//
// # Structures
//
// Export reads a box of blocks from any provider into a Bedrock
// .mcstructure (github.com/df-mc/structure); Config.Import pastes one into
// a running World with the same budgeted job, comparing and setting only
// the blocks the structure covers (voids keep the World's); Paste writes
// one into a world on disk that no World has open. Structures hold blocks
// (layer 1 only as a liquid) and block entities, not biomes or entities.
//
// # Concurrency
//
// Start returns at once; the job runs on its own goroutine and on the
// World's transactions. A Job is safe for concurrent use. Never wait for
// Done inside a World transaction (a command or event handler): the job
// needs the World's transactions to finish; watch it from a goroutine. On
// a Synchronous World the job's goroutine drives the World: leave the
// World alone until Done is closed.
//
// # What upstream Dragonfly change would make it cheaper
//
// A transaction method that hands out the World's *Column for a position
// (Tx.Column(pos) returning it, loading it if needed) and a way to mark it
// modified and resend it to its viewers (Tx.ColumnChanged(pos)) would
// remove the loaders and the per-column viewer bookkeeping. An accessor
// for a chunk's biome storages (chunk.Chunk.Biomes) would let biomes be
// compared storage against storage on the tick, without the exchange of
// chunk values and the slice that commits a difference later. A
// modification counter on chunk.Chunk (or World.Column) would let a
// restore skip the columns not touched since the last one; there is none
// (Column's modified flag is private and cleared on save).
// Incremental relighting in package chunk (relight the sub-chunks around
// changed blocks instead of filling whole chunks and spreading 3×3
// windows) would remove most of the light work, the largest part of a
// restore that changed many columns (off the tick, but still CPU). A
// Tx.SwapColumn(pos, *chunk.Column) would do the rest.
package restore
