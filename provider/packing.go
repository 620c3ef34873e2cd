package provider

import (
	"encoding"
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
)

// Packing is how compaction stores the column records it copies
// (Config.Packing; issue 41). A store compresses each part of a column on
// its own, fast, so that storing it again compresses only what changed;
// compaction then packs every record it copies that is not packed yet:
// the columns written since the compaction before, which are the world's
// coldest by then (what is stored again afterwards is written as a store
// writes it, until the next compaction). Packed, every part of a column
// is in one frame (a column record of version 3, which builds before it
// do not read). A record once packed is left as it is by every later
// compaction with the same Packing; the history's versions are packed
// too. Damage still costs only the record it hits. It is a plain value,
// safe to copy and share.
type Packing uint8

const (
	// PackingDefault is PackingCold.
	PackingDefault Packing = iota
	// PackingCold packs each record at the strongest setting of its own
	// codec (with Recompress, Compression's): LZ4 at high compression
	// (level 9), whose blocks decode as fast as those stores write, or
	// zstd at its best level. Records in Snappy or stored raw are not
	// packed.
	PackingCold
	// PackingArchive packs every record in zstd at its best level,
	// whatever its codec: the smallest, with cold loads about two and a
	// half times PackingCold's. For worlds kept rather than played: arena
	// templates, backups.
	PackingArchive
	// PackingOff packs nothing: compaction copies records as stores wrote
	// them. With Recompress it also unpacks packed records into frames of
	// Compression, as stores write them, which builds before version 3
	// read.
	PackingOff
)

var (
	_ encoding.TextMarshaler   = Packing(0)
	_ encoding.TextUnmarshaler = (*Packing)(nil)
)

// packingNames are the names of the Packing values, indexed by value.
var packingNames = [...]string{PackingDefault: "default", PackingCold: "cold", PackingArchive: "archive", PackingOff: "off"}

func (p Packing) valid() bool { return int(p) < len(packingNames) }

// String returns p's name: "default", "cold", "archive" or "off".
func (p Packing) String() string {
	if p.valid() {
		return packingNames[p]
	}
	return fmt.Sprintf("Packing(%d)", uint8(p))
}

// ParsePacking parses the names printed by Packing.String.
func ParsePacking(s string) (Packing, error) {
	for p, name := range packingNames {
		if name == s {
			return Packing(p), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown packing %q (want default, cold, archive or off)", blazedb.ErrInvalidOptions, s)
}

// MarshalText returns p's name (see String); a value outside the declared
// ones gives an error wrapping blazedb.ErrInvalidOptions.
func (p Packing) MarshalText() ([]byte, error) {
	if !p.valid() {
		return nil, fmt.Errorf("%w: packing %d", blazedb.ErrInvalidOptions, uint8(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText sets p to the value named by text, as ParsePacking does.
// On error p is left as it was.
func (p *Packing) UnmarshalText(text []byte) error {
	v, err := ParsePacking(string(text))
	if err != nil {
		return err
	}
	*p = v
	return nil
}
