package vfstest

import "errors"

// ErrCrashed is returned by every mutating operation of a MemFS after its
// simulated crash point.
var ErrCrashed = errors.New("vfstest: simulated crash")
