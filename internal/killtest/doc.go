// Package killtest kills a child process at a random moment of its work,
// for the tests that check what survives a SIGKILL. The child is a test
// binary that prints one number on a line each time it has made something
// durable (the id of a write, the last block of a save), and nothing else
// unless it fails.
package killtest
