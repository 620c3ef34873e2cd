# Blaze: see README.md. Every target works on a fresh machine with Go 1.26.
GO      ?= go
PKGS    := ./...
# Each fuzz target runs for a number of executions, never a duration:
# go test -fuzz with a duration can fail with "context deadline exceeded"
# and no failing input, when the duration ends while the corpus is still
# being replayed (it grows with every longer local run) or, in Go 1.26, by
# a race in the fuzzing coordinator at the deadline (golang/go#75804, fixed
# in Go 1.27), which ended a five-minute `make fuzz` run. `make fuzz` runs
# each target 3,000,000 times: about five minutes for the slowest here.
FUZZTIME ?= 20000x
FUZZLONG ?= 3000000x
# Targets that build a LevelDB world and read it with Dragonfly for each
# input run about a hundred inputs a second, not a hundred thousand.
FUZZTIME_WORLD ?= 500x
BENCHCOUNT ?= 6

.PHONY: all run blaze test test-race test-heavy test-norace test-safe test-arm fuzz-smoke fuzz soak bench lint clean

all: test

DEMO_IMPORT := $(wildcard ../shared/testdata/worlds/example2-1.21.mcworld)

## run: the demo server on a built-in default world in build/demo-world,
## imported from a real world in ../shared when present. ARGS=-offline to
## play without Xbox Live.
# Built, then exec'd: the shell gives its place to the server, which saves
# and closes on Ctrl-C and exits 0, where `go run` exited 1 (and make said
# Error 1) after the same clean close.
run:
	$(GO) build -o bin/demo-server ./cmd/demo-server
	exec bin/demo-server -world build/demo-world $(if $(DEMO_IMPORT),-import $(DEMO_IMPORT)) $(ARGS)

## blaze: the tool, as bin/blaze (convert, check, repair, compact, info,
## render, snapshot, changes, rollback, export, import: bin/blaze -h).
blaze:
	$(GO) build -o bin/blaze ./cmd/blaze

## test: everything CI runs; under 10 minutes on 2 cores.
test: lint test-race test-heavy fuzz-smoke

# The heavy tests without the race detector and the public-path run side
# by side: the first is mostly single-threaded, so the two share the two
# cores a CI machine has; -O keeps each one's output together.
test-heavy:
	$(MAKE) --no-print-directory -j2 -O test-norace test-safe

# Tests that are single-threaded by design and heavy, which run many times
# faster without the race detector: the crash simulations and crash loops,
# the checks that go over every column of the real worlds (about 190 s
# of CPU under it, 15 s without), the round trips of their LevelDB keys
# and the damage sweep over every file of a world (tests/damage_test.go).
# The concurrency of what they drive is tested under the race detector
# elsewhere.
NORACE      := ^(TestCrashSimulation|TestEditionCrash|TestBackupCrash|TestRawStorageMatchesNetworkDecode|TestSnapshotSubChunksAreCopies|TestFlatEncodeRealWorlds|TestConvertRealWorldsBothWays|TestConvertKeepsEveryLevelDBKey|TestConvertExtrasFollowColumns|TestPassReadsRealWorldsAsMCDB|TestDamageSweep)$$
NORACE_PKGS := ./blazedb ./provider ./provider/internal/column ./segment ./internal/convert ./tests

# Everything under the race detector except NORACE. go test runs the
# packages two at a time in the order named, and nearly every package runs
# its tests one after another: the longest are named first (RACE_FIRST,
# longest first), so that no long package starts last and runs alone on
# one core at the end; ./... adds the rest, each package once.
RACE_FIRST := ./cmd/blaze ./provider ./restore ./segment ./tests ./blazedb ./internal/convert ./internal/demo ./overlay
test-race:
	$(GO) test -race -count=1 -timeout 9m -skip '$(NORACE)' $(RACE_FIRST) $(PKGS)

test-norace:
	$(GO) test -count=1 -timeout 9m -run '$(NORACE)' $(NORACE_PKGS)

# The provider-related packages again, built with blaze_safe: every decode
# and encode through Dragonfly's public API instead of
# provider/internal/rawchunk, as after a probe that refused
# (docs/PROVIDER.md, A Dragonfly upgrade). Without the race detector: the
# concurrency is the same both ways and test-race covers it.
SAFE_PKGS := ./provider/... ./overlay ./segment ./restore ./internal/convert
test-safe:
	$(GO) test -tags blaze_safe -count=1 -timeout 9m $(SAFE_PKGS)

# Each fuzz target runs briefly (FUZZTIME); `make fuzz` runs them for longer.
fuzz-smoke:
	$(GO) test ./blazedb -run '^$$' -fuzz '^FuzzOpenLog$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./blazedb -run '^$$' -fuzz '^FuzzDecodeRecord$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./blazedb -run '^$$' -fuzz '^FuzzDecodeIndex$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./blazedb -run '^$$' -fuzz '^FuzzDecompress$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./blazedb -run '^$$' -fuzz '^FuzzDecodeSnapshot$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./blazedb -run '^$$' -fuzz '^FuzzDecodeAliasList$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./blazedb -run '^$$' -fuzz '^FuzzDecodeIndexPayload$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider/internal/column -run '^$$' -fuzz '^FuzzDecodeColumn$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider/internal/column -run '^$$' -fuzz '^FuzzRecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider/internal/column -run '^$$' -fuzz '^FuzzDecodeFlatSub$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider/internal/column -run '^$$' -fuzz '^FuzzEqualBiomes$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider/internal/column -run '^$$' -fuzz '^FuzzEncodeFlatSub$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider/internal/nbt -run '^$$' -fuzz '^FuzzCanonicalNBT$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider -run '^$$' -fuzz '^FuzzParseDictCopy$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider -run '^$$' -fuzz '^FuzzParseEdition$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider -run '^$$' -fuzz '^FuzzLoadEntry$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider -run '^$$' -fuzz '^FuzzReadLevelDat$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider -run '^$$' -fuzz '^FuzzParseLevelCopy$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider -run '^$$' -fuzz '^FuzzDecodeExtras$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./overlay -run '^$$' -fuzz '^FuzzParseCurrent$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./segment -run '^$$' -fuzz '^FuzzParseLayout$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./blazedb -run '^$$' -fuzz '^FuzzReadLogHeader$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./provider -run '^$$' -fuzz '^FuzzDecodePlayerData$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./replica -run '^$$' -fuzz '^FuzzDecodeManifest$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./replica -run '^$$' -fuzz '^FuzzParseObjectName$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./internal/convert -run '^$$' -fuzz '^FuzzPassReadsAsMCDB$$' -fuzztime $(FUZZTIME_WORLD) -fuzzminimizetime 20x
	$(GO) test ./internal/convert -run '^$$' -fuzz '^FuzzPaletteChecks$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x
	$(GO) test ./internal/nbtwalk -run '^$$' -fuzz '^FuzzTree$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 20x

fuzz:
	$(MAKE) fuzz-smoke FUZZTIME=$(FUZZLONG) FUZZTIME_WORLD=50000x

## test-arm: every test, built for 64-bit and 32-bit ARM Linux (a Raspberry
## Pi, an ARM cloud server) and run under QEMU's user emulation, without the
## race detector. About 25 minutes on 2 cores; not part of `make test`.
# Needs qemu-user-static and the kernel's binfmt_misc entries for it, so
# that go test (and the tests that start a copy of their own binary) can
# run an ARM binary as it would a native one. Debian registers them when
# it installs qemu-user-static with binfmt-support; where it did not,
# `go test` fails with "exec format error" (README, Platforms, says how).
test-arm:
	GOARCH=arm64 $(GO) test -count=1 -timeout 40m $(PKGS)
	GOARCH=arm GOARM=7 $(GO) test -count=1 -timeout 40m $(PKGS)

## soak: 100,000 simulated crashes per durability mode, 20,000 of concurrent
## writers per mode, and more SIGKILLs;
## 5,000 crashes of a world in use (the provider's simulation), and 2,000
## of its three dimensions storing at once; 1,000 of a segmented world's;
## and the damage sweep with every byte of each small file of a world flipped.
soak:
	BLAZE_SOAK=1 $(GO) test ./blazedb ./provider ./segment -run 'Crash' -count=1 -timeout 6h -v
	BLAZE_SOAK=1 $(GO) test ./tests -run '^TestDamageSweep$$' -count=1 -timeout 6h -v
	BLAZE_SOAK=1 $(GO) test ./replica -run '^TestServerKilledMidUpload$$' -count=1 -timeout 1h -v

## bench: every benchmark with enough runs for benchstat, then one table of
## Blaze against mcdb and one of the targets of issues #3 and #5, each
## marked met or not (docs/BENCHMARKS.md explains each figure).
# Every binary is built before anything runs: the run takes about 50
# minutes, and a tree edited meanwhile must not change what its later steps
# measure. Each runs in its package's directory, as go test would.
# The overlay's benchmarks run a set number of iterations a sample: each
# reset first stores up to 1,000 columns, untimed, and each ArenaMemory
# iteration opens 100 arenas; with the default -benchtime their run alone
# took hours. Each LoadPrefetched iteration prefetches, untimed, too.
# The stores in bursts pause after every 32 (see BenchmarkStoreBurst), so
# they run for a set number of stores a sample.
# BenchmarkSize (issue 41) stores, compacts and measures each of its worlds
# with each provider before its sub-benchmarks, and times its levers'
# decodes over a whole world per iteration: it runs a set number of
# iterations a sample too.
# The replica's benchmarks (issue 39: BenchmarkReplicaCost and
# BenchmarkRestore10k in tests/, those of replica/) start versitygw on
# loopback through internal/s3test, installing it with go install when it
# is missing (they are skipped when it cannot be installed). Each
# shipment of replica/'s is a round trip to it: 50 a sample.
# BENCH narrows the run of tests/ and the engine's packages (BENCH=Walk);
# BURST the bursts' (BURST=mcdb, or BURST=none for none); SIZE the size
# table's (SIZE=flat24, SIZE=real/lever, or SIZE=none for none).
BENCH    ?= .
BURST    ?= .
SIZE     ?= .
BENCHBIN := build/bench
BENCHRUN  = -test.run '^$$' -test.benchmem -test.count $(BENCHCOUNT)
bench:
	rm -rf $(BENCHBIN) bench.txt bench-engine.txt
	$(GO) test -c -o $(BENCHBIN)/ ./tests ./blazedb ./provider ./segment ./overlay ./replica
	$(GO) build -o $(BENCHBIN)/benchtable ./internal/cmd/benchtable
	cd tests && ../$(BENCHBIN)/tests.test $(BENCHRUN) -test.bench '$(BENCH)' -test.skip 'StoreBurst|^BenchmarkSize$$' -test.timeout 3h | tee ../bench.txt
	$(if $(filter none,$(SIZE)),,cd tests && ../$(BENCHBIN)/tests.test $(BENCHRUN) -test.bench '^BenchmarkSize$$/$(SIZE)' -test.benchtime 20x -test.timeout 1h | tee -a ../bench.txt)
	cd tests && ../$(BENCHBIN)/tests.test $(BENCHRUN) -test.bench 'StoreBurst/$(BURST)' -test.benchtime 640x -test.timeout 1h | tee -a ../bench.txt
	for p in blazedb provider segment; do \
		(cd $$p && ../$(BENCHBIN)/$$p.test $(BENCHRUN) -test.bench '$(BENCH)' -test.timeout 2h) | tee -a bench-engine.txt; \
	done
	cd overlay && ../$(BENCHBIN)/overlay.test $(BENCHRUN) -test.bench 'ResetOverlay|ArenaCycle' -test.benchtime 20x -test.timeout 1h | tee -a ../bench-engine.txt
	cd overlay && ../$(BENCHBIN)/overlay.test $(BENCHRUN) -test.bench 'ArenaMemory' -test.benchtime 2x -test.timeout 1h | tee -a ../bench-engine.txt
	cd overlay && ../$(BENCHBIN)/overlay.test $(BENCHRUN) -test.bench 'LoadPrefetched' -test.benchtime 20000x -test.timeout 1h | tee -a ../bench-engine.txt
	cd replica && ../$(BENCHBIN)/replica.test $(BENCHRUN) -test.bench '$(BENCH)' -test.benchtime 50x -test.timeout 1h | tee -a ../bench-engine.txt
	$(BENCHBIN)/benchtable bench.txt bench-engine.txt

# Vetted for Windows and macOS too: the filesystem seam has code for each
# (blazedb/vfs), and a server owner may run Dragonfly on either.
lint:
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet $(PKGS)
	GOOS=windows GOARCH=amd64 $(GO) vet $(PKGS)
	GOOS=darwin GOARCH=arm64 $(GO) vet $(PKGS)

clean:
	rm -rf bench.txt bench-engine.txt bin build
