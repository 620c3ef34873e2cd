//go:build blaze_safe

package rawchunk

// Forced reports whether the build forces the public path (the blaze_safe
// build tag): then Get never gives a Builder.
const Forced = true

// Get returns nil: built with the blaze_safe tag, every decode and encode
// goes through Dragonfly's own.
func Get() (*Builder, error) { return nil, nil }
