package segment

import "errors"

// ErrPlainWorld: the directory holds a plain Blaze world, whose columns
// are in its one database, not in regions: a segmented world opened over
// it would find none of them. Open it with provider.Config, or convert it.
var ErrPlainWorld = errors.New("segment: directory holds a plain world")
