package demo

import "errors"

var (
	// ErrAmbiguous: the inputs could mean more than one thing, or one
	// would be written inside another; nothing was done.
	ErrAmbiguous = errors.New("demo: ambiguous input")
)
