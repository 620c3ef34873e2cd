// Package nbtwalk checks the lengths a little-endian NBT record declares
// before a decoder allocates them.
//
// gophertunnel's NBT decoder allocates a list of as many elements as its
// int32 length says (reflect.MakeSlice, with no check against the bytes
// left), and Dragonfly's disk decoder a palette of as many entries as a
// uint32 says. A damaged record can declare billions: tens of GiB
// allocated, scanned and zeroed by the runtime before the decoder fails on
// the missing bytes, and the process killed for memory (a fatal error no
// recover catches) instead of an error returned. A Walker reads the bytes
// the way those decoders do and refuses a length longer than the bytes
// after it could hold.
//
// A walk refuses nothing the decoders could read: every element takes at
// least MinSize bytes, so a refused length is one the decoder fails on, or
// never reaches because it failed before. Where a walk cannot follow the
// bytes (a short read, a negative length, a tag the decoder refuses), it
// stops with ErrStop and leaves the verdict to the decoder, which fails
// there before it allocates anything larger than the record. The walk has
// no depth limit: stopping above the decoder's would let it go on alone.
//
// Nothing here is shared: a Walker is for one goroutine.
package nbtwalk

import (
	"encoding/binary"
	"errors"
	"fmt"
)

var (
	// ErrBeyondBytes marks a record that declares more than its bytes
	// hold. The error returned is a *BeyondBytesError.
	ErrBeyondBytes = errors.New("a length beyond the bytes that hold it")
	// ErrStop: the walk cannot follow the bytes; the decoder decides.
	ErrStop = errors.New("nbtwalk: walk stopped")
)

// BeyondBytesError is a length refused: N entries of What declared, with
// Left bytes after it. It wraps ErrBeyondBytes.
type BeyondBytesError struct {
	What    string
	N, Left int64
}

func (e *BeyondBytesError) Error() string {
	return fmt.Sprintf("%v: %s of %d entries in %d bytes", ErrBeyondBytes, e.What, e.N, e.Left)
}

func (e *BeyondBytesError) Unwrap() error { return ErrBeyondBytes }

// NBT tag types, as gophertunnel numbers them.
const (
	TagEnd = iota
	TagByte
	TagShort
	TagInt
	TagLong
	TagFloat
	TagDouble
	TagByteArray
	TagString
	TagList
	TagCompound
	TagIntArray
	TagLongArray
)

// MinSize is the fewest bytes a payload of each tag type takes. An end tag
// is no payload: a list of them fails at its first element, so 1 keeps a
// list of them from being allocated beyond its bytes.
var MinSize = [...]int64{
	TagEnd: 1, TagByte: 1, TagShort: 2, TagInt: 4, TagLong: 8, TagFloat: 4, TagDouble: 8,
	TagByteArray: 4, TagString: 2, TagList: 5, TagCompound: 1, TagIntArray: 4, TagLongArray: 4,
}

// Walker reads B from Off, the way the decoders do. Its methods return
// ErrStop where the bytes end or stop making sense.
type Walker struct {
	B   []byte
	Off int
}

// Left is the number of bytes after Off.
func (w *Walker) Left() int64 { return int64(len(w.B) - w.Off) }

// Skip moves past n bytes.
func (w *Walker) Skip(n int64) error {
	if n < 0 || n > w.Left() {
		return ErrStop
	}
	w.Off += int(n)
	return nil
}

// Byte reads one byte.
func (w *Walker) Byte() (byte, error) {
	if w.Left() < 1 {
		return 0, ErrStop
	}
	w.Off++
	return w.B[w.Off-1], nil
}

// Uint32 reads a little-endian uint32.
func (w *Walker) Uint32() (uint32, error) {
	if w.Left() < 4 {
		return 0, ErrStop
	}
	w.Off += 4
	return binary.LittleEndian.Uint32(w.B[w.Off-4:]), nil
}

// count reads a little-endian length of size bytes (2 or 4), signed as the
// NBT decoder reads it: a negative one fails there.
func (w *Walker) count(size int) (int64, error) {
	if w.Left() < int64(size) {
		return 0, ErrStop
	}
	var n int64
	if size == 2 {
		n = int64(int16(binary.LittleEndian.Uint16(w.B[w.Off:])))
	} else {
		n = int64(int32(binary.LittleEndian.Uint32(w.B[w.Off:])))
	}
	w.Off += size
	if n < 0 {
		return 0, ErrStop
	}
	return n, nil
}

// Elements checks n elements of at least size bytes each against the
// bytes left.
func (w *Walker) Elements(what string, n, size int64) error {
	if n*size > w.Left() {
		return &BeyondBytesError{what, n, w.Left()}
	}
	return nil
}

// Tree walks one NBT tree (a named root tag), as gophertunnel's decoder
// reads it into a map.
func (w *Walker) Tree() error {
	t, err := w.Byte()
	if err != nil || t == TagEnd || t > TagLongArray {
		return ErrStop
	}
	if err := w.str(); err != nil {
		return err
	}
	return w.payload(t)
}

func (w *Walker) str() error {
	n, err := w.count(2)
	if err != nil {
		return err
	}
	return w.Skip(n)
}

// payload walks the payload of a tag of type t.
func (w *Walker) payload(t byte) error {
	switch t {
	case TagByte, TagShort, TagInt, TagLong, TagFloat, TagDouble:
		return w.Skip(MinSize[t])
	case TagString:
		return w.str()
	case TagByteArray, TagIntArray, TagLongArray:
		n, err := w.count(4)
		if err != nil {
			return err
		}
		size := int64(1)
		switch t {
		case TagIntArray:
			size = 4
		case TagLongArray:
			size = 8
		}
		if err := w.Elements("an array", n, size); err != nil {
			return err
		}
		return w.Skip(n * size)
	case TagList:
		et, err := w.Byte()
		if err != nil || et > TagLongArray {
			return ErrStop
		}
		n, err := w.count(4)
		if err != nil {
			return err
		}
		if err := w.Elements("a list", n, MinSize[et]); err != nil {
			return err
		}
		if n > 0 && et == TagEnd {
			return ErrStop
		}
		for range n {
			if err := w.payload(et); err != nil {
				return err
			}
		}
		return nil
	case TagCompound:
		for {
			nt, err := w.Byte()
			if err != nil || nt > TagLongArray {
				return ErrStop
			}
			if nt == TagEnd {
				return nil
			}
			if err := w.str(); err != nil {
				return err
			}
			if err := w.payload(nt); err != nil {
				return err
			}
		}
	}
	return ErrStop
}

// Check walks the NBT trees one after another in b (a record of block
// entities, say) and returns the refusal of the first that declares more
// than its bytes hold, if any.
func Check(b []byte) error {
	w := &Walker{B: b}
	for w.Left() > 0 {
		if err := w.Tree(); err != nil {
			return Refusal(err)
		}
	}
	return nil
}

// CheckOne is Check of a record the decoder reads one tree of, ignoring
// what follows it.
func CheckOne(b []byte) error {
	return Refusal((&Walker{B: b}).Tree())
}

// Refusal is err unless the walk merely stopped.
func Refusal(err error) error {
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// AnyLengthOver reports whether a length over limit could be read anywhere
// in b, as a little-endian uint32 at any offset. It is for tests that hand
// a refused record to a decoder to see it fail: the decoder reads past the
// length refused, into elements no walk reached, and would allocate any
// length it met there.
func AnyLengthOver(b []byte, limit uint32) bool {
	for i := 0; i+4 <= len(b); i++ {
		if binary.LittleEndian.Uint32(b[i:]) > limit {
			return true
		}
	}
	return false
}
