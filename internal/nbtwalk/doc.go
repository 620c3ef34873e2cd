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
// A length is checked against the bytes left less those the elements not
// yet walked of the enclosing lists take at least (Walker.Owed): checked
// against the bytes left alone, a chain of lists each as long as the bytes
// after it allows made the decoder allocate the square of the record's
// size. So what the decoder allocates before it fails or ends is at most
// the record's size times the ratio of an element's Go size to its
// MinSize (16 for a list of compounds read into []any).
//
// A walk refuses nothing the decoders could read, but for one departure: a
// refused length is one the decoder fails on (it needs more elements, each
// of at least MinSize bytes, than the bytes can hold), or never reaches
// because it failed before. The departure is nesting deeper than MaxDepth,
// refused with ErrTooDeep: the decoder refuses compounds that deep itself,
// but not lists nested in lists, which it follows by recursion as deep as
// the bytes go, as the walk would (a few MiB of nested lists overflow the
// stack: a fatal error). Where a walk cannot follow the bytes (a short
// read, a negative length, a tag the decoder refuses), it stops with
// ErrStop and leaves the verdict to the decoder, which fails there before
// it allocates more than the bound above.
//
// Nothing here is shared: a Walker is for one goroutine.
package nbtwalk
