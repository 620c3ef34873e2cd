// Package convert copies a world between Dragonfly's LevelDB format (mcdb)
// and Blaze, in either direction: every column, level.dat and player spawns,
// and every other LevelDB key, carried as extra records (extras.go).
// A segmented Blaze world (package segment) converts whole, every region's
// columns into the one LevelDB world. It never changes the source (a
// LevelDB source is read from a temporary copy, since opening a LevelDB
// world rewrites its files), refuses a non-empty destination, a destination
// inside the source, a source inside the directory it would build in and a
// source holding both kinds of world, reports the
// columns it could not read instead of stopping at the first (among them
// those Dragonfly's LevelDB reader reads from damaged bytes into columns
// that cannot be right, which Blaze refuses to store with
// provider.ErrInvalidColumn), and verifies every column it wrote.
//
// A LevelDB source is read in one pass of one iterator (ldbpass.go), its
// columns decoded on every core exactly as Dragonfly's LevelDB provider
// decodes them (ldbreader.go); a Blaze source is read with its provider.
//
// The destination appears whole or not at all: the world is built in a
// sibling directory, the destination's name with BuildSuffix added, which
// is synced and renamed to the destination once every column is verified.
// A conversion cut short (killed, a power loss) leaves only that sibling,
// which no tool takes for a world, and the next conversion to the same
// destination deletes it before it starts.
package convert
