package overlay

import "errors"

// ErrShutdown: the overlay was shut down.
var ErrShutdown = errors.New("overlay: shut down")

// ErrPromote: Promote refused, because the template is not a Blaze world
// (provider.DB) opened to write by this process.
var ErrPromote = errors.New("overlay: cannot promote into the template")

// ErrStale: an Open with Config.KeepMatch found a match it would have
// forgotten (the template is not the one its changes were made on).
var ErrStale = errors.New("overlay: the match was made on another template")
