//go:build !blaze_safe

package rawchunk

import "sync"

// Forced reports whether the build forces the public path (the blaze_safe
// build tag): then Get never gives a Builder.
const Forced = false

var probed = sync.OnceValues(Probe)

// Get returns the process's Builder, proved by Probe on first use, or nil
// and the probe's reason when it refused: then every decode and encode
// goes through Dragonfly's own, and the caller says so loudly.
func Get() (*Builder, error) { return probed() }
