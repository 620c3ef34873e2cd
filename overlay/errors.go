package overlay

import "errors"

// ErrShutdown: the overlay was shut down.
var ErrShutdown = errors.New("overlay: shut down")

// ErrPromote: Promote refused, because the template is not a Blaze world
// (provider.DB) opened to write by this process.
var ErrPromote = errors.New("overlay: cannot promote into the template")
