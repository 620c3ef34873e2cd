package blazedb

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by DB methods wrap one of these with
// context; test them with errors.Is.
var (
	// ErrNotFound: the key has no value.
	ErrNotFound = errors.New("blazedb: not found")
	// ErrCorrupt: stored bytes failed verification. The error names the file
	// and offset (see CorruptionError).
	ErrCorrupt = errors.New("blazedb: corrupt data")
	// ErrClosed: the DB was closed.
	ErrClosed = errors.New("blazedb: database closed")
	// ErrReadOnly: a write was attempted on a read-only DB.
	ErrReadOnly = errors.New("blazedb: database is read-only")
	// ErrLocked: another DB holds the directory. The error wrapping it says
	// whether that DB is in this process or another.
	ErrLocked = errors.New("blazedb: database locked")
	// ErrNotBlaze: the directory holds something other than a Blaze database.
	ErrNotBlaze = errors.New("blazedb: not a blaze database")
	// ErrVersion: the files are of a format version this build does not
	// read: a newer one, or (ErrOldVersion) one from before the first
	// release. The error names the version found and the ones read.
	ErrVersion = errors.New("blazedb: unsupported format version")
	// ErrOldVersion: the files are of a format version that no release
	// wrote, from before the first one, whose reader is gone. It wraps
	// ErrVersion and not ErrCorrupt: the bytes are intact and mean what
	// their version says, so nothing that mends or discards damage
	// (Repair, an overlay's reset, the provider's quarantine) may touch
	// them. From the first release on every version written stays read
	// (version_test.go), so only these versions give it.
	ErrOldVersion = fmt.Errorf("%w: a version from before the first release", ErrVersion)
	// ErrPoisoned: an earlier fsync or write failed in a way that leaves the
	// durable state unknown. Every later write fails until the DB is reopened.
	ErrPoisoned = errors.New("blazedb: database poisoned by an earlier I/O failure")
	// ErrTooLarge: a key or value exceeds the format's limits.
	ErrTooLarge = errors.New("blazedb: key or value too large")
	// ErrInvalidOptions: Options failed validation.
	ErrInvalidOptions = errors.New("blazedb: invalid options")
	// ErrHistory: a read at a point (GetAt, ChangedSince, SeqAt) older
	// than the history kept (see Options.History and snapshots).
	ErrHistory = errors.New("blazedb: history not kept")
	// ErrExists: a snapshot of that name exists already.
	ErrExists = errors.New("blazedb: already exists")
	// ErrReservedName: a named key in the space the engine keeps for its
	// own records (snapshots).
	ErrReservedName = errors.New("blazedb: reserved name")
	// ErrDurableLoss: bytes that Blaze has evidence were durable (index.dat
	// covered them) are missing from the log or damaged, so keys lost their
	// newest durable versions. A read-write Open refuses such a database
	// unless Options.AcceptDurableLoss is set; the error names what is
	// lost. It wraps ErrCorrupt.
	ErrDurableLoss = fmt.Errorf("%w: durable data lost", ErrCorrupt)
	// ErrGenerationGone: ReadLogAt asked for a generation of chunks.dat
	// that a compaction has replaced (shiplog.go).
	ErrGenerationGone = errors.New("blazedb: the log's generation was replaced")
)

// CorruptionError describes damaged bytes. It wraps ErrCorrupt. Nothing
// changes it once returned, so it may be shared between goroutines.
type CorruptionError struct {
	File   string // base name of the file, e.g. "chunks.dat"
	Offset int64  // byte offset of the damaged record or structure
	Reason string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("blazedb: corrupt data in %s at offset %d: %s", e.File, e.Offset, e.Reason)
}

func (e *CorruptionError) Unwrap() error { return ErrCorrupt }

func corruptf(file string, off int64, format string, args ...any) error {
	return &CorruptionError{File: file, Offset: off, Reason: fmt.Sprintf(format, args...)}
}
