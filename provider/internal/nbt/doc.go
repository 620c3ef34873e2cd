// Package nbt is the provider's little-endian NBT: a decoder that gives
// the values gophertunnel's decoder gives, a canonical encoding (every
// compound's entries sorted by name, so that an unchanged block entity
// encodes to the same bytes), and deep copies and comparisons of decoded
// values. Every function is safe for concurrent use; none keeps its
// arguments.
package nbt
