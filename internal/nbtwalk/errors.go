package nbtwalk

import (
	"errors"
	"fmt"
)

var (
	// ErrBeyondBytes marks a record that declares more than its bytes
	// hold. The error returned is a *BeyondBytesError.
	ErrBeyondBytes = errors.New("nbtwalk: a length beyond the bytes that hold it")
	// ErrTooDeep marks a record nesting lists and compounds deeper than
	// MaxDepth.
	ErrTooDeep = fmt.Errorf("nbtwalk: NBT nested deeper than %d", MaxDepth)
	// ErrStop: the walk cannot follow the bytes; the decoder decides.
	ErrStop = errors.New("nbtwalk: walk stopped")
)
