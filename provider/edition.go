package provider

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
)

// Edition names the contents of a world's columns, so that what was built
// on them (an arena's overlay: package overlay) can tell that they changed.
// It is a random value that a DB replaces once after each Open, in the same
// atomic batch as the first column it writes that differs from the stored
// one: a world whose columns changed has a new edition, after a crash too.
// Storing an identical column writes nothing and leaves the edition alone.
// While a DB writes, its edition names its columns as they will be when it
// closes, so read the edition of a world nothing is writing. Two closed
// worlds with one edition hold the same columns: a copy of a world's files
// keeps its edition until its own first write, and a Backup gets one of
// its own. Damage that puts columns back to older versions gives a new
// edition too: when Open finds some (a read-only open cannot store it, and
// gives another at each open) and after Repair mends any. The zero
// Edition is that of a world whose columns no build recording editions has
// written: a new world, or one older than editions. Writes through
// Engine() bypass all of this. An Edition is a plain value, safe to copy and
// to use from any goroutine.
type Edition [16]byte

// IsZero reports whether e is the zero Edition.
func (e Edition) IsZero() bool { return e == Edition{} }

// String returns e as 32 lowercase hexadecimal digits.
func (e Edition) String() string { return hex.EncodeToString(e[:]) }

// ParseEdition parses the form String returns.
func ParseEdition(s string) (Edition, error) {
	var e Edition
	if len(s) != 2*len(e) {
		return Edition{}, fmt.Errorf("%w: edition %q is not %d hexadecimal digits", blazedb.ErrCorrupt, s, 2*len(e))
	}
	if _, err := hex.Decode(e[:], []byte(s)); err != nil || e.String() != s {
		return Edition{}, fmt.Errorf("%w: edition %q is not %d lowercase hexadecimal digits", blazedb.ErrCorrupt, s, 2*len(e))
	}
	return e, nil
}

// The edition is the named engine record editionName:
//
//	+-------+----------------------------------------+
//	| bytes | field                                  |
//	+-------+----------------------------------------+
//	|     1 | version (1)                            |
//	|    16 | the edition: random, never all zero    |
//	+-------+----------------------------------------+
//
// The engine checksums the record. Part of the on-disk format.
const (
	editionName    = "provider/edition"
	editionVersion = 1
	editionSize    = 1 + len(Edition{})
)

// newEdition returns a random nonzero Edition.
func newEdition() Edition {
	var e Edition
	for e.IsZero() {
		rand.Read(e[:]) // never fails (crypto/rand)
	}
	return e
}

func encodeEdition(e Edition) []byte { return append([]byte{editionVersion}, e[:]...) }

// parseEdition returns the edition a record holds: a newer version gives
// blazedb.ErrVersion, anything else malformed blazedb.ErrCorrupt.
func parseEdition(b []byte) (Edition, error) {
	switch {
	case len(b) > 0 && b[0] > editionVersion:
		return Edition{}, fmt.Errorf("%w: %s is version %d, newer than this build reads (%d)", blazedb.ErrVersion, editionName, b[0], editionVersion)
	case len(b) != editionSize || b[0] != editionVersion:
		return Edition{}, fmt.Errorf("%w: %s is not an edition (%d bytes)", blazedb.ErrCorrupt, editionName, len(b))
	}
	e := Edition(b[1:])
	if e.IsZero() {
		return Edition{}, fmt.Errorf("%w: %s is all zero", blazedb.ErrCorrupt, editionName)
	}
	return e, nil
}

// openEdition returns the edition of the world eng holds, zero if it has
// none. When the engine skipped damage opening the log, some columns fell
// back to older versions that the stored edition does not describe, and a
// damaged edition record describes nothing: either way the world gets a
// new edition, so that nothing built on the world as it was takes it for
// unchanged. A writable open stores it at once (renewed is then true):
// closing writes an index.dat that no longer tells of the damage.
func openEdition(eng *blazedb.DB, readOnly bool) (e Edition, renewed bool, err error) {
	b, err := eng.GetNamed(editionName)
	switch {
	case errors.Is(err, blazedb.ErrNotFound):
	case errors.Is(err, blazedb.ErrCorrupt):
		renewed = true
	case err != nil:
		return Edition{}, false, fmt.Errorf("read %s: %w", editionName, err)
	default:
		if e, err = parseEdition(b); errors.Is(err, blazedb.ErrCorrupt) {
			renewed = true
		} else if err != nil {
			return Edition{}, false, err
		}
	}
	if rec := eng.Recovery(); !renewed && len(rec.Corrupt) == 0 && rec.LostBytes == 0 {
		return e, false, nil
	}
	e = newEdition()
	if readOnly {
		return e, false, nil // a new one at every open, until the world is mended
	}
	if err := eng.PutNamed(editionName, encodeEdition(e)); err != nil {
		return Edition{}, false, fmt.Errorf("renew %s: %w", editionName, err)
	}
	return e, true, nil
}

// renewEdition stores a new edition in the engine in dir, which is not
// open: after a repair that put columns back to older versions or deleted
// them, and in a backup's copy. Close syncs it.
func renewEdition(dir string, opts blazedb.Options) error {
	opts.ReadOnly, opts.ExternalMaintenance, opts.CacheBytes = false, true, -1
	eng, err := blazedb.Open(dir, opts)
	if err != nil {
		return err
	}
	return errors.Join(eng.PutNamed(editionName, encodeEdition(newEdition())), eng.Close())
}

// Edition returns the edition of the world's columns (see Edition). Safe
// for concurrent use; a column being stored meanwhile may or may not have
// changed it yet.
func (db *DB) Edition() Edition { return *db.edition.Load() }
