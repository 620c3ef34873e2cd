package blazedb

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// soak returns n, or long when BLAZE_SOAK is set (`make soak`).
func soak(n, long int) int {
	if os.Getenv("BLAZE_SOAK") != "" {
		return long
	}
	return n
}

// crashesPerMode is 2,000 in `make test` and 100,000 under `make soak`.
func crashesPerMode() int { return soak(2_000, 100_000) }

// model is what the workload has done, kept to judge a recovered database.
type model struct {
	// history of every key, oldest first; "" is a delete. Values are
	// unique per operation, so a value names the operation that wrote it.
	history map[string][]string
	// durable[key] is the index into history of the newest state known to
	// be durable; -1 means the initial absence may still be what survives.
	durable map[string]int
	// acked lists keys whose operation returned nil since the last sync
	// point, with the history index each reached.
	acked map[string]int
	// at[key][i] is when history[key][i] was written: the operation's
	// number, shared by the entries of a batch. clock counts operations.
	at    map[string][]int
	clock int
	// snaps are the snapshots the workload took (issue 36), and points
	// the durable points it noted, each with the state it named.
	snaps  map[string]*snapRecord
	points []pointRecord
}

// snapRecord is a snapshot the workload took: the state when it was taken
// (every key's newest value, "" absent), whether CreateSnapshot returned
// nil (so it is durable) and whether a DeleteSnapshot of it began.
type snapRecord struct {
	state    map[string]string
	created  bool
	deleting bool
}

// pointRecord is a point every write below which was durable, and the
// state it named.
type pointRecord struct {
	seq   uint64
	state map[string]string
}

// state returns every key's newest value.
func (m *model) state() map[string]string {
	st := make(map[string]string, len(m.history))
	for k, h := range m.history {
		st[k] = h[len(h)-1]
	}
	return st
}

const groupSize = 4

// witnessKey names, in a batch that puts the group's values again, the
// group batch they came from.
var witnessKey = Key{Dim: 6}

func newModel() *model {
	return &model{history: map[string][]string{}, durable: map[string]int{}, acked: map[string]int{}, at: map[string][]int{}, snaps: map[string]*snapRecord{}}
}

// begin records an operation about to run (it may survive even if the
// crash interrupts it).
func (m *model) begin(key, val string) int {
	if _, ok := m.durable[key]; !ok {
		m.durable[key] = -1
	}
	m.history[key] = append(m.history[key], val)
	m.at[key] = append(m.at[key], m.clock)
	return len(m.history[key]) - 1
}

// ack records that the operation returned nil; if durableNow, it is also
// durable.
func (m *model) ack(key string, i int, durableNow bool) {
	m.acked[key] = i
	if durableNow {
		m.durable[key] = max(m.durable[key], i)
	}
}

// synced marks everything acknowledged so far as durable.
func (m *model) synced() {
	for k, i := range m.acked {
		m.durable[k] = max(m.durable[k], i)
	}
}

// allowed reports whether got ("" for absent) is a state key may recover to.
func (m *model) allowed(key, got string) bool {
	h := m.history[key]
	d := m.durable[key]
	if d < 0 && got == "" {
		return true
	}
	for i := max(d, 0); i < len(h); i++ {
		if h[i] == got {
			return true
		}
	}
	return false
}

// span is a closed range of times: after operations 1 to lo and up to
// hi were applied.
type span struct{ lo, hi int }

// when returns the times at which key held got ("" for absent): after the
// operation that wrote it, until the next that changed it.
func (m *model) when(key, got string) []span {
	// The key's states from the start, when it was absent, at time 0.
	h := append([]string{""}, m.history[key]...)
	at := append([]int{0}, m.at[key]...)
	var out []span
	for i := range h {
		if h[i] != got || (i > 0 && h[i-1] == got) {
			continue
		}
		s := span{at[i], m.clock}
		for j := i + 1; j < len(h); j++ {
			if h[j] != got {
				s.hi = at[j] - 1
				break
			}
		}
		out = append(out, s)
	}
	return out
}

// prefixCut returns a time at which every key held what it recovered to,
// or -1: what survives a crash must be the state after some prefix of the
// operations.
func (m *model) prefixCut(recovered map[string]string) int {
	spans := make([][]span, 0, len(recovered))
	cands := []int{0}
	for key, got := range recovered {
		ss := m.when(key, got)
		spans = append(spans, ss)
		for _, s := range ss {
			cands = append(cands, s.lo)
		}
	}
next:
	for _, c := range cands {
		for _, ss := range spans {
			if !slices.ContainsFunc(ss, func(s span) bool { return s.lo <= c && c <= s.hi }) {
				continue next
			}
		}
		return c
	}
	return -1
}

// describe lists each key's recovered state with the times it held, for a
// failure message.
func (m *model) describe(recovered map[string]string) string {
	keys := slices.Sorted(maps.Keys(recovered))
	var b strings.Builder
	fmt.Fprintf(&b, "after %d operations:", m.clock)
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %s: %.30q held at %v (written at %v)", k, recovered[k], m.when(k, recovered[k]), m.at[k])
	}
	return b.String()
}

func chunkKeyName(k Key) string { return fmt.Sprintf("c/%d/%d/%d", k.Dim, k.X, k.Z) }

// workload drives random operations against a DB on fs until one fails
// (normally because the simulated crash point was reached).
type workload struct {
	t    testing.TB
	rng  *rand.Rand
	fs   *vfstest.MemFS
	opts Options
	db   *DB
	m    *model
	op   int
	// group holds the values of the last batch over the group keys, and
	// groupID its id: a batch may put them again (see do).
	group   []string
	groupID string
	// shared makes half the values one of three shared by every key, so
	// that compaction stores them once (issue 41, alias.go).
	shared bool
}

func (w *workload) value(key string) string {
	w.op++
	if w.shared && w.rng.IntN(2) == 0 {
		return fmt.Sprintf("shared#%d#%s", w.rng.IntN(3), strings.Repeat("blaze", 40))
	}
	// Sizes from a few bytes to several KiB, mostly compressible.
	pad := strings.Repeat("blaze", w.rng.IntN(1200))
	if w.rng.IntN(3) == 0 {
		pad += strconv.FormatUint(w.rng.Uint64(), 36)
	}
	return fmt.Sprintf("%s#%d#%s", key, w.op, pad)
}

func (w *workload) randKey() Key {
	return Key{Dim: int32(w.rng.IntN(3)), X: int32(w.rng.IntN(7) - 3), Z: int32(w.rng.IntN(5) - 2)}
}

func (w *workload) safe() bool {
	return w.opts.Durability == DurabilitySafe || w.opts.Durability == DurabilitySafeBatch
}

// step runs one operation and reports whether the workload should go on.
func (w *workload) step() bool {
	return w.do(w.rng.IntN(108))
}

// writeStep runs one put, delete or batch.
func (w *workload) writeStep() bool {
	return w.do(w.rng.IntN(80))
}

func (w *workload) do(r int) bool {
	w.m.clock++
	switch {
	case r < 45:
		k := w.randKey()
		name := chunkKeyName(k)
		v := w.value(name)
		i := w.m.begin(name, v)
		if w.db.Put(k, []byte(v)) != nil {
			return false
		}
		w.m.ack(name, i, w.safe())
	case r < 50:
		// Put the same value again: elided, but still durable on return.
		k := w.randKey()
		name := chunkKeyName(k)
		h := w.m.history[name]
		if len(h) == 0 || h[len(h)-1] == "" {
			return true
		}
		v := h[len(h)-1]
		i := w.m.begin(name, v)
		if w.db.Put(k, []byte(v)) != nil {
			return false
		}
		w.m.ack(name, i, w.safe())
	case r < 60:
		k := w.randKey()
		name := chunkKeyName(k)
		i := w.m.begin(name, "")
		if w.db.Delete(k) != nil {
			return false
		}
		w.m.ack(name, i, w.safe())
	case r < 65:
		name := fmt.Sprintf("player/%d", w.rng.IntN(4))
		v := w.value("n/" + name)
		i := w.m.begin("n/"+name, v)
		if w.db.PutNamed(name, []byte(v)) != nil {
			return false
		}
		w.m.ack("n/"+name, i, w.safe())
	case r < 80:
		// A batch over the group keys (always all of them, with one id)
		// plus a few random keys.
		var b Batch
		type pend struct {
			name string
			i    int
		}
		var ps []pend
		if w.group != nil && w.rng.IntN(3) == 0 {
			// The group's values again, which the keys already hold,
			// perhaps not durably, and a witness naming the batch they
			// came from. A witness found after a crash says this batch
			// survived, so the group must show that batch or a later one,
			// never an earlier: an elided put must not tear the batch.
			for g, v := range w.group {
				k := Key{Dim: 7, X: int32(g)}
				b.Put(k, []byte(v))
				ps = append(ps, pend{chunkKeyName(k), w.m.begin(chunkKeyName(k), v)})
			}
			w.op++
			v := "witness#" + w.groupID + "#" + strconv.Itoa(w.op)
			b.Put(witnessKey, []byte(v))
			ps = append(ps, pend{chunkKeyName(witnessKey), w.m.begin(chunkKeyName(witnessKey), v)})
		} else {
			w.op++
			id := strconv.Itoa(w.op)
			w.group, w.groupID = make([]string, groupSize), id
			for g := 0; g < groupSize; g++ {
				k := Key{Dim: 7, X: int32(g)}
				v := "batch#" + id + "#" + strings.Repeat("g", w.rng.IntN(300))
				b.Put(k, []byte(v))
				ps = append(ps, pend{chunkKeyName(k), w.m.begin(chunkKeyName(k), v)})
				w.group[g] = v
			}
		}
		for j := w.rng.IntN(3); j > 0; j-- {
			k := w.randKey()
			name := chunkKeyName(k)
			if w.rng.IntN(4) == 0 {
				b.Delete(k)
				ps = append(ps, pend{name, w.m.begin(name, "")})
			} else {
				v := w.value(name)
				b.Put(k, []byte(v))
				ps = append(ps, pend{name, w.m.begin(name, v)})
			}
		}
		// A batch that asks for Sync is durable on return in every mode.
		b.Sync = w.rng.IntN(4) == 0
		if w.db.Apply(&b) != nil {
			return false
		}
		for _, p := range ps {
			w.m.ack(p.name, p.i, w.safe() || b.Sync)
		}
	case r < 88:
		if w.db.Sync() != nil {
			return false
		}
		w.m.synced()
	case r < 94:
		// Writers go on while compaction copies: some writes land in the
		// stretch it catches up with under the write lock.
		failed := false
		w.db.knobs.compactCopied = func() {
			for j := w.rng.IntN(4); j > 0 && !failed; j-- {
				failed = !w.writeStep()
			}
		}
		err := w.db.Compact()
		w.db.knobs.compactCopied = nil
		if err != nil || failed {
			return false
		}
	case r >= 100 && r < 104:
		// Issue 36: a snapshot, durable on return in every mode.
		w.op++
		name := "s" + strconv.Itoa(w.op)
		rec := &snapRecord{state: w.m.state()}
		w.m.snaps[name] = rec
		if _, err := w.db.CreateSnapshot(name); err != nil {
			return false
		}
		rec.created = true
	case r >= 104 && r < 106:
		for _, name := range slices.Sorted(maps.Keys(w.m.snaps)) {
			if rec := w.m.snaps[name]; rec.created && !rec.deleting {
				rec.deleting = true
				if w.db.DeleteSnapshot(name) != nil {
					return false
				}
				break
			}
		}
	case r >= 106:
		// A durable point: every write below it is durable.
		if w.db.Sync() != nil {
			return false
		}
		w.m.synced()
		p, err := w.db.Seq()
		if err != nil {
			return false
		}
		w.m.points = append(w.m.points, pointRecord{seq: p, state: w.m.state()})
	default:
		if w.db.Close() != nil {
			return false
		}
		w.m.synced()
		db, err := Open("/db", w.opts)
		if err != nil {
			if !w.fs.Crashed() {
				w.t.Fatalf("reopen without a crash: %v", err)
			}
			w.db = nil
			return false
		}
		w.db = db
	}
	return true
}

// verify opens the recovered filesystem and checks it against the model.
func verify(t testing.TB, fs *vfstest.MemFS, opts Options, m *model, desc string) {
	t.Helper()
	opts.FS = fs
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatalf("%s: reopen after crash: %v", desc, err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Fatalf("%s: Check after crash: %v", desc, err)
	}
	// Every key present must be one the workload wrote...
	seen := map[string]bool{}
	for dim := int32(0); dim < 8; dim++ {
		keys, _ := db.Keys(Area{Dim: dim, MinX: -100, MinZ: -100, MaxX: 100, MaxZ: 100})
		for _, k := range keys {
			seen[chunkKeyName(k)] = true
		}
	}
	names, _ := db.Names()
	for _, n := range names {
		seen["n/"+n] = true
	}
	for k := range seen {
		if _, ok := m.history[k]; !ok {
			t.Fatalf("%s: key %s was never written", desc, k)
		}
	}
	// ...and every key must hold a state allowed by its history.
	group := ""
	groupIDs := map[string]string{}
	recovered := map[string]string{}
	for key := range m.history {
		var got []byte
		var err error
		if strings.HasPrefix(key, "n/") {
			got, err = db.GetNamed(strings.TrimPrefix(key, "n/"))
		} else {
			var k Key
			fmt.Sscanf(key, "c/%d/%d/%d", &k.Dim, &k.X, &k.Z)
			got, err = db.Get(k)
		}
		if errors.Is(err, ErrNotFound) {
			got, err = nil, nil
		}
		if err != nil {
			t.Fatalf("%s: get %s: %v", desc, key, err)
		}
		recovered[key] = string(got)
		if !m.allowed(key, string(got)) {
			h := m.history[key]
			t.Fatalf("%s: key %s recovered %.40q; durable index %d of %d states (last durable %.40q)",
				desc, key, got, m.durable[key], len(h), func() string {
					if d := m.durable[key]; d >= 0 {
						return h[d]
					}
					return "<absent>"
				}())
		}
		if strings.HasPrefix(key, "c/7/") {
			id := "<absent>"
			if len(got) > 0 {
				id = strings.Split(string(got), "#")[1]
			}
			groupIDs[key] = id
		}
	}
	// The group keys are only ever written together by one batch: they
	// must all show the same batch (or all be absent).
	for key, id := range groupIDs {
		if group == "" {
			group = id
		} else if id != group {
			t.Fatalf("%s: batch torn: group key %s holds batch %s, another holds %s", desc, key, id, group)
		}
	}
	// A batch that put the group's values again survived whole: the group
	// shows the batch the witness names, or a later one.
	if wv, err := db.Get(witnessKey); err == nil {
		named, _ := strconv.Atoi(strings.Split(string(wv), "#")[1])
		if shown, err := strconv.Atoi(group); err != nil || shown < named {
			t.Fatalf("%s: batch torn: its witness names group batch %d, the group holds %s", desc, named, group)
		}
	}
	// What survived is the state after some prefix of the operations: a
	// crash loses a stretch of the latest writes, never one from between
	// others.
	if m.prefixCut(recovered) < 0 {
		t.Fatalf("%s: no prefix of the operations leaves what was recovered\n%s", desc, m.describe(recovered))
	}
	verifyHistory(t, db, m, desc)
	// The recovered database must take writes and survive a clean reopen.
	if err := db.Put(Key{X: 1000}, []byte("after")); err != nil {
		t.Fatalf("%s: write after recovery: %v", desc, err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("%s: close after recovery: %v", desc, err)
	}
	db, err = Open("/db", opts)
	if err != nil {
		t.Fatalf("%s: second reopen: %v", desc, err)
	}
	defer db.Close() // the deferred Close above holds the first one
	if v, err := db.Get(Key{X: 1000}); err != nil || string(v) != "after" {
		t.Fatalf("%s: write after recovery lost: %q %v", desc, v, err)
	}
}

// crashReadAt reads a model key at point p; "" is absent.
func crashReadAt(db *DB, key string, p uint64) (string, error) {
	var got []byte
	var err error
	if name, ok := strings.CutPrefix(key, "n/"); ok {
		got, err = db.GetNamedAt(name, p)
	} else {
		var k Key
		fmt.Sscanf(key, "c/%d/%d/%d", &k.Dim, &k.X, &k.Z)
		got, err = db.GetAt(k, p)
	}
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	return string(got), err
}

// verifyHistory checks, after a crash (issue 36), that every snapshot
// whose creation returned survives unless its deletion began, that no
// other does, that each one reads exactly the state it was taken in, and
// that a read at a durable point gives what a read gave then, unless the
// point is older than the history kept.
func verifyHistory(t testing.TB, db *DB, m *model, desc string) {
	t.Helper()
	list, err := db.Snapshots()
	if err != nil {
		t.Fatalf("%s: Snapshots: %v", desc, err)
	}
	present := map[string]SnapshotInfo{}
	for _, s := range list {
		present[s.Name] = s
	}
	for name, rec := range m.snaps {
		s, ok := present[name]
		if !ok {
			if rec.created && !rec.deleting {
				t.Fatalf("%s: snapshot %s was durable and is lost", desc, name)
			}
			continue
		}
		for key := range m.history {
			got, err := crashReadAt(db, key, s.Seq)
			if err != nil || got != rec.state[key] {
				t.Fatalf("%s: snapshot %s (point %d): key %s reads %.40q, %v; it held %.40q", desc, name, s.Seq, key, got, err, rec.state[key])
			}
		}
	}
	for name := range present {
		if m.snaps[name] == nil {
			t.Fatalf("%s: snapshot %s was never taken", desc, name)
		}
	}
	floor, err := db.HistoryFloor()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.points {
		for key := range m.history {
			got, err := crashReadAt(db, key, p.seq)
			if errors.Is(err, ErrHistory) && p.seq < floor {
				continue
			}
			if err != nil || got != p.state[key] {
				t.Fatalf("%s: durable point %d (floor %d): key %s reads %.40q, %v; it held %.40q", desc, p.seq, floor, key, got, err, p.state[key])
			}
		}
	}
}

func runCrash(t testing.TB, mode Durability, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(mode)))
	fs := vfstest.NewMem()
	// One seed in four renames as Windows must, where a compaction cannot
	// rename its log over the open one (files.go).
	windows := seed%4 == 3
	fs.SetWindows(windows)
	fs.MkdirAll("/db", 0o755)
	opts := Options{
		FS: fs, Logger: quiet, Durability: mode,
		Compression:     Compression(rng.IntN(5)),
		SyncBytes:       int64(1 + rng.IntN(64<<10)),
		SyncInterval:    time.Duration(1+rng.IntN(20)) * time.Millisecond,
		CompactMinBytes: int64(rng.IntN(32 << 10)),
		CacheBytes:      int64(rng.IntN(3)-1) * 64 << 10,
		// Checkpoints of index.dat every few records, or none.
		IndexCheckpointBytes: []int64{-1, 2 << 10, 16 << 10}[rng.IntN(3)],
		// History kept (the default), off (snapshots only), or a horizon
		// that every compaction passes.
		History: []time.Duration{0, -1, time.Nanosecond}[rng.IntN(3)],
	}
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	w := &workload{t: t, rng: rng, fs: fs, opts: opts, db: db, m: newModel()}
	// Some history before the crash point is armed.
	for i := rng.IntN(30); i > 0; i-- {
		if !w.step() {
			t.Fatalf("seed %d: operation failed before any crash", seed)
		}
	}
	fs.CrashAfter(1 + rng.IntN(150))
	for i := 0; i < 300 && w.step(); i++ {
	}
	keep := []float64{0, 0, 0.3, 0.7, 1}[rng.IntN(5)]
	clone := fs.CrashClone(rng, keep)
	if w.db != nil {
		w.db.Close() // on the crashed filesystem: must not hang or panic
	}
	verify(t, clone, opts, w.m, fmt.Sprintf("mode %v seed %d keep %.1f windows %v", mode, seed, keep, windows))
}

// TestCrashSimulation crashes random workloads after the k-th mutating
// file operation, for many k, in every durability mode, and checks the
// recovered database against what was acknowledged.
func TestCrashSimulation(t *testing.T) {
	n := crashesPerMode()
	if testing.Short() {
		n = 200
	}
	for _, mode := range []Durability{DurabilityFast, DurabilityBalanced, DurabilitySafe, DurabilitySafeBatch} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			for i := 0; i < n; i++ {
				runCrash(t, mode, uint64(i))
			}
		})
	}
}
