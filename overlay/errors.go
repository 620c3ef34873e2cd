package overlay

import "errors"

// ErrShutdown: the overlay was shut down.
var ErrShutdown = errors.New("overlay: shut down")
