package worldmap

import "errors"

// ErrTooLarge: the world's extent in the dimension drawn is wider or
// taller than MaxSide blocks.
var ErrTooLarge = errors.New("worldmap: world too large to draw")
