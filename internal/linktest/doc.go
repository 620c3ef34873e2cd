// Package linktest sets symbolic-link traps for tests: a directory outside
// any world holding files whose content is known, and links to it from
// inside a world, so that a test can check that Blaze never deleted,
// truncated or wrote through a link it did not create (issue 35 item 6).
package linktest
