// Package column is the provider's column record: its format (format.go),
// the encoder (encode.go) and decoder (decode.go), frames (frame.go), the
// byte cursor they read with (cursor.go), the checks of packed palettes
// (palette.go), the fast paths through package rawchunk (raw.go), and the
// store queue's flat sub-chunks, encoded as they are (flatsub.go).
//
// Block ids come through a Dictionary (the provider's block dictionary
// implements it); a column's previous version comes as a Prev, a value.
// The package knows nothing of the cache, the engine's keys or the world.
// A decode never panics and never guesses: bad bytes give an error
// wrapping ErrCorrupt. An encode refuses a column whose record would not
// read back.
package column
