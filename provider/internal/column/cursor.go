package column

import (
	"encoding/binary"
	"errors"
	"fmt"
)

var errShort = errors.New("record ends early")

// reader decodes a record without ever reading past its end.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("at byte %d: %s", r.off, fmt.Sprintf(format, args...))
	}
}

func (r *reader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.fail("%v", errShort)
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.off {
		r.fail("%v", errShort)
		return nil
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad uvarint")
		return 0
	}
	r.off += n
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.off += n
	return v
}

// count reads a list length and checks it against limit.
func (r *reader) count(limit int) int {
	n := r.uvarint()
	if n > uint64(limit) {
		r.fail("list of %d exceeds %d", n, limit)
		return 0
	}
	return int(n)
}

// readVarint32 reads a network-encoding palette entry.
func readVarint32(r *reader) uint64 {
	v := r.varint()
	if v < -1<<31 || v >= 1<<31 {
		r.fail("varint32 out of range")
	}
	return uint64(uint32(int32(v)))
}

func readUvarint(r *reader) uint64 { return r.uvarint() }

// A Cursor reads a byte string without ever reading past its end: the
// record decoder's cursor, for the provider's other formats. It is not
// safe for concurrent use.
type Cursor struct{ r reader }

// NewCursor returns a Cursor at the start of b.
func NewCursor(b []byte) *Cursor { return &Cursor{reader{b: b}} }

// Bytes returns the next n bytes, a slice of b.
func (c *Cursor) Bytes(n int) []byte { return c.r.bytes(n) }

// Uvarint reads an unsigned varint.
func (c *Cursor) Uvarint() uint64 { return c.r.uvarint() }

// Count reads a list length and checks it against limit.
func (c *Cursor) Count(limit int) int { return c.r.count(limit) }

// Err returns the first error met, naming the byte it was met at; every
// read after it returns zero values.
func (c *Cursor) Err() error { return c.r.err }

// Left returns the number of bytes not yet read.
func (c *Cursor) Left() int { return len(c.r.b) - c.r.off }
