package segment

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider"
)

// A segmented world keeps the side of its regions in its root world's
// engine, as the named record layoutName, so that it is always opened with
// the size it was made with: opened with another, every chunk would be
// looked for in the wrong region, found missing, and generated again by
// Dragonfly, while the stored one lay unseen in its own region.
//
//	+-------+---------------------------------------------------+
//	| bytes | field                                             |
//	+-------+---------------------------------------------------+
//	|     3 | signature "BZS"                                   |
//	|     1 | version (1)                                       |
//	|  uvar | SegmentSize, the side of a region in chunks (≥ 1) |
//	+-------+---------------------------------------------------+
//
// uvar is Go's unsigned varint, in its shortest form; nothing follows it.
// The engine checksums the record. Part of the on-disk format.
const (
	layoutName      = "segment/layout"
	layoutSignature = "BZS"
	layoutVersion   = 1
	maxSegmentSize  = 1 << 20
)

// encodeLayout returns the layout record of regions size chunks wide.
func encodeLayout(size int) []byte {
	b := append([]byte(layoutSignature), layoutVersion)
	return binary.AppendUvarint(b, uint64(size))
}

// parseLayout returns the segment size a layout record holds. A newer
// version gives blazedb.ErrVersion, anything else malformed
// blazedb.ErrCorrupt.
func parseLayout(b []byte) (int, error) {
	if len(b) < 4 || string(b[:3]) != layoutSignature {
		return 0, fmt.Errorf("%w: %s is not a segment layout", blazedb.ErrCorrupt, layoutName)
	}
	if b[3] != layoutVersion {
		if b[3] > layoutVersion {
			return 0, fmt.Errorf("%w: %s is version %d, newer than this build reads (%d)", blazedb.ErrVersion, layoutName, b[3], layoutVersion)
		}
		return 0, fmt.Errorf("%w: %s has version %d", blazedb.ErrCorrupt, layoutName, b[3])
	}
	v, n := binary.Uvarint(b[4:])
	if n <= 0 || 4+n != len(b) || v < 1 || v > maxSegmentSize || binary.PutUvarint(make([]byte, binary.MaxVarintLen64), v) != n {
		return 0, fmt.Errorf("%w: %s holds a malformed segment size", blazedb.ErrCorrupt, layoutName)
	}
	return int(v), nil
}

// layout returns the segment size of the world whose root is meta, and
// records it if the world has none yet: want (zero for the default) for a
// new world; for a world whose record was lost to damage (blaze repair
// drops a damaged record), want once every stored column is found in the
// region want puts it in. A world recorded with another size than a
// nonzero want is refused, and so is a plain world (columns in the root,
// no record).
func (p *Provider) layout(meta *provider.DB, want int) (int, error) {
	eng := meta.Engine()
	b, err := eng.GetNamed(layoutName)
	switch {
	case err == nil:
		size, err := parseLayout(b)
		if err != nil {
			return 0, err
		}
		if want != 0 && want != size {
			return 0, fmt.Errorf("%w: the world's regions are %d chunks wide, but Config.SegmentSize is %d (leave it zero to use the world's)", blazedb.ErrInvalidOptions, size, want)
		}
		return size, nil
	case !errors.Is(err, blazedb.ErrNotFound):
		return 0, fmt.Errorf("read %s: %w", layoutName, err)
	}
	if n := eng.Stats().ChunkKeys; n > 0 {
		return 0, fmt.Errorf("%w: its root holds %d columns, which segments would never read", ErrPlainWorld, n)
	}
	size := want
	if size == 0 {
		size = defaultSegmentSize
	}
	if err := p.checkRegions(size); err != nil {
		return 0, err
	}
	// Durable before any region is made with this size.
	if err := eng.PutNamed(layoutName, encodeLayout(size)); err != nil {
		return 0, err
	}
	// A report of damaged records compaction carries is no failed sync.
	if err := eng.Sync(); err != nil && !blazedb.IsDamageReport(err) {
		return 0, err
	}
	return size, nil
}

// checkRegions opens every region on disk, read-only, and checks that size
// puts each of its columns in it: it is how a world made before the layout
// record existed is opened the first time.
func (p *Provider) checkRegions(size int) error {
	for dim := range int32(3) {
		keys, err := p.onDisk(dim)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := p.checkRegion(k, size); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *Provider) checkRegion(k segKey, size int) error {
	db, err := provider.Config{Log: p.conf.Log, FS: p.conf.FS, ReadOnly: true, NoLevelDat: true, ExternalMaintenance: true}.Open(p.segDir(k))
	if err != nil {
		return err
	}
	defer db.Close()
	places, err := db.Columns()
	if err != nil {
		return err
	}
	for _, pl := range places {
		if got, err := keyIn(pl.Pos, pl.Dim, size); err != nil || got != k {
			return fmt.Errorf("%w: region %s holds the column at %v, which a SegmentSize of %d puts in another region: open the world with the SegmentSize it was made with", blazedb.ErrInvalidOptions, segName(k), pl.Pos, size)
		}
	}
	return nil
}
