// Command benchtable reads `go test -bench` output and prints one table:
// each workload, Blaze in each durability mode, mcdb, and how many times
// faster (or smaller) Blaze is. Benchmarks are paired by name: the segment
// "blaze-<mode>" or "mcdb" names the contender; the rest names the workload.
// Each cell is the median over the runs (-count). A benchmark whose time
// means nothing (a disk size, a replayed trace) reports ns/op as 0, which
// go test leaves out, so only its own metrics appear. A second table then
// reads each performance target of issues #3 and #5 off the same figures
// (the cold load against its codec floor from the provider package's
// benchmarks, in the second file) and says whether it is met. A third puts
// the time a cold load may take to be 15× faster than mcdb's beside what
// no load can avoid: Blaze's hot load (a copy of a column already in
// memory) and Dragonfly's NetworkDecode of the same columns.
//
//	go run ./internal/cmd/benchtable bench.txt [bench-engine.txt]
package main
