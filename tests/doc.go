// Package tests holds Blaze's integration tests and the benchmarks that
// compare it with Dragonfly's LevelDB provider (mcdb) on the same data in
// the same run. See docs/BENCHMARKS.md for the figures and how to rerun them.
package tests
