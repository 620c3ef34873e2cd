package nbtwalk

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxDepth is the deepest nesting of lists and compounds a walk follows:
// the depth at which gophertunnel's decoder refuses a compound's tag.
const MaxDepth = 512

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
	// Owed is the bytes that elements not yet walked, after the one being
	// walked, take at least: a length is checked against the bytes left
	// less these. A caller walking a counted run of elements itself (a
	// palette's entries) sets it for each.
	Owed int64
	// Audit, for tests, walks as the decoder reads: a length is never
	// refused but added to Declared, and the walk goes on into its
	// elements until the bytes end. A test then knows how much a decoder
	// given a refused record would allocate before it fails.
	Audit    bool
	Declared int64
	depth    int
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
	if w.Audit {
		w.Declared += n
		return nil
	}
	if left := w.Left() - w.Owed; n*size > left {
		return &BeyondBytesError{what, n, left}
	}
	return nil
}

// nest enters a list or a compound; the caller calls the function it
// returns when it leaves.
func (w *Walker) nest() (func(), error) {
	if w.depth >= MaxDepth && !w.Audit {
		return nil, ErrTooDeep
	}
	w.depth++
	owed := w.Owed
	return func() { w.depth--; w.Owed = owed }, nil
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
		leave, err := w.nest()
		if err != nil {
			return err
		}
		defer leave()
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
		owed := w.Owed
		for i := range n {
			w.Owed = owed + (n-1-i)*MinSize[et]
			if err := w.payload(et); err != nil {
				return err
			}
		}
		return nil
	case TagCompound:
		leave, err := w.nest()
		if err != nil {
			return err
		}
		defer leave()
		owed := w.Owed
		for {
			w.Owed = owed
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
			w.Owed = owed + 1 // the compound's end tag
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

// Refused reports whether err is a walk's refusal.
func Refused(err error) bool {
	return errors.Is(err, ErrBeyondBytes) || errors.Is(err, ErrTooDeep)
}

// Refusal is err unless the walk merely stopped.
func Refusal(err error) error {
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}
