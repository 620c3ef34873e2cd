package blazedb

import (
	"sync/atomic"
	"time"
)

// defaultSlowFsync is how long an fsync of chunks.dat may take before it
// is logged as a warning: on a healthy disk one takes milliseconds, and a
// writer that waits for it (the Safe modes, Sync) holds its World's tick
// that long. etcd warns from the same second.
const defaultSlowFsync = time.Second

// testKnobs are the hooks and thresholds that only tests change, gathered
// in one place so that a reader sees every way a test reaches into the
// engine. Each DB has its own (DB.knobs), so that tests running in
// parallel do not see each other's; nothing but tests sets them, and
// their zero values are the engine's behaviour.
type testKnobs struct {
	// compactCopied, when set, runs inside an explicit Compact after the
	// snapshot is copied and before the catch-up with later writes.
	// Background compactions never run it. Set by the goroutine that
	// calls Compact, before the call.
	compactCopied func()
	// aliasListKeys, when not 0, replaces maxAliasListKeys (alias.go).
	// Set before the DB is used.
	aliasListKeys int
	// slowFsync, in nanoseconds, replaces defaultSlowFsync when not 0.
	// Atomic: a test changes it while writers fsync.
	slowFsync atomic.Int64
}

// slowFsyncAfter returns the threshold of a slow fsync.
func (k *testKnobs) slowFsyncAfter() time.Duration {
	if d := k.slowFsync.Load(); d > 0 {
		return time.Duration(d)
	}
	return defaultSlowFsync
}
