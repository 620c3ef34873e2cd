package demo

import "errors"

var (
	// errPlayersClosed: the player database was closed with the server.
	errPlayersClosed = errors.New("demo: player database closed")
)
