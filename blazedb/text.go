package blazedb

import (
	"encoding"
	"fmt"
)

// Durability and Compression as text, so that they can be set from a
// configuration file: TOML (Dragonfly's config.toml, read with
// github.com/pelletier/go-toml), JSON, YAML and flag.TextVar all use
// encoding.TextMarshaler and encoding.TextUnmarshaler. The names are the
// ones String prints, in lower case; any other text is refused with an
// error that wraps ErrInvalidOptions and lists the valid names, never
// guessed at.
//
//	durability:  "balanced" (the zero value), "fast", "safe", "safebatch"
//	compression: "default" (the zero value, LZ4), "none", "lz4", "snappy", "zstd"

var (
	_ encoding.TextMarshaler   = Durability(0)
	_ encoding.TextUnmarshaler = (*Durability)(nil)
	_ encoding.TextMarshaler   = Compression(0)
	_ encoding.TextUnmarshaler = (*Compression)(nil)
)

// MarshalText returns d's name (see String). A value outside the declared
// modes gives an error wrapping ErrInvalidOptions, so that a configuration
// is never written with a mode that Open would refuse.
func (d Durability) MarshalText() ([]byte, error) {
	if d > DurabilitySafeBatch {
		return nil, fmt.Errorf("%w: durability %d", ErrInvalidOptions, uint8(d))
	}
	return []byte(d.String()), nil
}

// UnmarshalText sets d to the mode named by text, as ParseDurability does.
// On error d is left as it was.
func (d *Durability) UnmarshalText(text []byte) error {
	v, err := ParseDurability(string(text))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// compressionNames are the names of the Compression values, indexed by
// value.
var compressionNames = [...]string{
	CompressionDefault: "default",
	CompressionNone:    "none",
	CompressionLZ4:     "lz4",
	CompressionSnappy:  "snappy",
	CompressionZstd:    "zstd",
}

// String returns c's name: "default", "none", "lz4", "snappy" or "zstd".
func (c Compression) String() string {
	if c.valid() {
		return compressionNames[c]
	}
	return fmt.Sprintf("Compression(%d)", uint8(c))
}

// ParseCompression parses the names printed by Compression.String.
func ParseCompression(s string) (Compression, error) {
	for c, name := range compressionNames {
		if name == s {
			return Compression(c), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown compression %q (want default, none, lz4, snappy or zstd)", ErrInvalidOptions, s)
}

// MarshalText returns c's name (see String). A value outside the declared
// codecs gives an error wrapping ErrInvalidOptions.
func (c Compression) MarshalText() ([]byte, error) {
	if !c.valid() {
		return nil, fmt.Errorf("%w: compression %d", ErrInvalidOptions, uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText sets c to the codec named by text, as ParseCompression
// does. On error c is left as it was.
func (c *Compression) UnmarshalText(text []byte) error {
	v, err := ParseCompression(string(text))
	if err != nil {
		return err
	}
	*c = v
	return nil
}
