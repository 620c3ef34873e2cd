// Package rawchunk builds Dragonfly's chunk values (paletted storages,
// sub-chunks, chunks) straight from bits per index, index words and
// palettes, and reads a storage's words and palette back, through private
// fields of Dragonfly's chunk types. It is the only importer of unsafe in
// the provider.
//
// Nothing here is used before Probe has proved, on this process's
// Dragonfly, that the values a Builder builds equal field by field and
// method by method those Dragonfly's own decoder builds from the same
// bytes (probe.go). Get returns the proved Builder, or nil and the reason
// the probe refused, and then the caller uses Dragonfly's public decoder
// and encoders. Built with the blaze_safe tag, Get always returns nil.
//
// Reading the record format, checking indices against palettes and
// translating palette entries are the caller's: a Builder trusts what it
// is given.
package rawchunk
