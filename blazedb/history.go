package blazedb

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"
)

// History: the log already holds every version of every key; compaction
// keeps those a read at a point may still need and drops the rest.
//
// A point is a sequence number P naming the state made by every write
// numbered below P: DB.Seq is the present, a snapshot's Seq the state when
// it was taken, SeqAt a past time. Reads at P are exact when P is at or
// above the history floor (the oldest point no compaction has dropped
// anything needed for) or P is a snapshot's point; others fail with
// ErrHistory. (Except after an Open that skipped a damaged stretch the
// index did not cover: its versions are then missing at every point, as
// in the present, and the version before each is read, until Repair
// raises the floor past them. A known gap: Open should raise it.)
//
// In memory, a chain per key changed since the floor (or whose older
// versions a snapshot pins) lists its versions, oldest first, each with its
// sequence number and where its record is, the last one being the key's
// present state (a deletion included). A key without a chain has held its
// present state since before the floor. So opening a read at a point costs
// nothing, and a read is one search of one chain and one read of one
// record. Chains are rebuilt by recovery's scan (a key's records are met in
// sequence order, in every log) and saved in index.dat (indexfile.go).
//
// Compaction (compacthistory.go) writes, per chain, the versions still
// needed as records keeping their sequence numbers (deletions as delete
// records), before the live records, so a scan of the new log rebuilds the
// same chains. A version v_i, the newest of its key from s_i until s_{i+1},
// is visible at the points (s_i, s_{i+1}]; it is kept when one of them is at
// or above the new floor or is a snapshot's point.

// version is one version of a key that the history holds: the record that
// wrote it, or a deletion (off < 0) with the size of its delete record.
// seq 0 before the first version of a chain stands for "written before the
// history began".
type version struct {
	seq  uint64
	off  int64
	size uint32
	vsum uint32
}

func (v version) deleted() bool { return v.off < 0 }
func (v version) entry() entry  { return entry{off: v.off, size: v.size, vsum: v.vsum} }

// history is the history an index holds. Like the index it belongs to, it
// is guarded by DB.mu, changed only under DB.writeMu too, and a clone is
// read-only: chains are never modified in place, only appended to past
// what a clone sees, or replaced.
type history struct {
	chains chainMap
	floor  uint64            // reads at points >= floor are exact
	points []timePoint       // the timeline (timeline.go), ascending
	pins   map[string]uint64 // snapshot name -> its point
	next   uint64            // the present point: the next sequence number
	bytes  int64             // bytes of the records compaction keeps for history
	count  int               // versions held, present ones included
	// off: Options.History is negative. Without snapshots nothing is
	// kept and the floor follows the present.
	off bool
}

func newHistory() *history {
	return &history{chains: newChainMap(0), pins: map[string]uint64{}}
}

func (h *history) clone() *history {
	c := *h
	c.chains = h.chains.clone()
	c.points = h.points[:len(h.points):len(h.points)]
	c.pins = make(map[string]uint64, len(h.pins))
	for n, p := range h.pins {
		c.pins[n] = p
	}
	return &c
}

// ensureHistory gives ix a history if it has none (an index rebuilt by
// scanning).
func (ix *index) ensureHistory() {
	if ix.hist == nil {
		ix.hist = newHistory()
	}
}

// putAt sets k's entry to e, written with sequence number seq, and records
// the version in the history.
func (ix *index) putAt(k rkey, e entry, seq uint64) {
	old, had := ix.put(k, e)
	if ix.hist != nil {
		ix.hist.note(k, old, had, version{seq: seq, off: e.off, size: e.size, vsum: e.vsum})
	}
}

// delAt deletes k with a delete record of size bytes and sequence number
// seq, and records the deletion in the history.
func (ix *index) delAt(k rkey, seq uint64, size uint32) {
	old, had := ix.del(k)
	if ix.hist != nil {
		ix.hist.note(k, old, had, version{seq: seq, off: -1, size: size})
	}
}

// note appends v to k's chain. old is the entry k held, if had.
func (h *history) note(k rkey, old entry, had bool, v version) {
	h.next = max(h.next, v.seq+1)
	if k.named && isSnapshotName(k.name) {
		name := k.name[len(snapshotPrefix):]
		if v.deleted() {
			delete(h.pins, name)
		} else {
			h.pins[name] = v.seq
		}
	}
	c, ok := h.chains.get(k)
	if !ok && h.off && len(h.pins) == 0 {
		h.floor = max(h.floor, v.seq+1) // nothing to keep
		return
	}
	if !ok && had {
		c = []version{{off: old.off, size: old.size, vsum: old.vsum}}
		h.count++
	}
	if n := len(c); n > 0 && !c[n-1].deleted() {
		h.bytes += int64(c[n-1].size) // the present version becomes history
	}
	if v.deleted() {
		h.bytes += int64(v.size)
	}
	h.chains.set(k, append(c, v))
	h.count++
}

// exact reports whether reads at p are exact.
func (h *history) exact(p uint64) bool {
	if p >= h.floor {
		return true
	}
	for _, q := range h.pins {
		if q == p {
			return true
		}
	}
	return false
}

// at returns the version of k visible at p, given its present entry (cur,
// ok): found is false when k had no value at p.
func (h *history) at(k rkey, p uint64, cur entry, ok bool) (e entry, found bool) {
	c, has := h.chains.get(k)
	if !has {
		return cur, ok
	}
	i := sort.Search(len(c), func(i int) bool { return c[i].seq >= p })
	if i == 0 || c[i-1].deleted() {
		return entry{}, false
	}
	return c[i-1].entry(), true
}

// keep decides which versions of chain c a compaction at floor f keeps,
// given the snapshots' points (sorted): keep[i] for each version, and
// whether the chain survives at all (when it does not, the key has held its
// present state since before f and before every pin).
func keepVersions(c []version, f uint64, pins []uint64) (keep []bool, survives bool) {
	keep = make([]bool, len(c))
	n := len(c) - 1
	pinned := func(lo, hi uint64) bool { // a pin in (lo, hi]
		i := sort.Search(len(pins), func(i int) bool { return pins[i] > lo })
		return i < len(pins) && pins[i] <= hi
	}
	for i := 0; i < n; i++ {
		if c[i+1].seq >= f || pinned(c[i].seq, c[i+1].seq) {
			keep[i], survives = true, true
		}
	}
	last := c[n]
	switch {
	case last.seq >= f:
		survives = true
	case !last.deleted() && len(pins) > 0 && pins[0] <= last.seq:
		survives = true // a pin before it reads the key as absent
	}
	keep[n] = survives
	return keep, survives
}

// trimmed returns a copy of h keeping only what reads at points from f on
// and at the pins need, with f as its floor; points before the one that
// gives f are dropped too.
func (h *history) trimmed(f uint64) *history {
	f = max(f, h.floor)
	pins := h.pinList()
	n := newHistory()
	n.floor, n.next = f, h.next
	for name, p := range h.pins {
		n.pins[name] = p
	}
	for k, c := range h.chains.all() {
		keep, ok := keepVersions(c, f, pins)
		if !ok {
			continue
		}
		kept := make([]version, 0, len(c))
		for i, v := range c {
			if keep[i] {
				kept = append(kept, v)
			}
		}
		n.chains.set(k, kept)
	}
	n.points = trimPoints(h.points, f)
	n.recount()
	return n
}

// recount sets bytes and count from the chains.
func (h *history) recount() {
	h.bytes, h.count = 0, 0
	for _, c := range h.chains.all() {
		h.count += len(c)
		for i, v := range c {
			if i < len(c)-1 || v.deleted() {
				h.bytes += int64(v.size)
			}
		}
	}
}

func (h *history) pinList() []uint64 {
	pins := make([]uint64, 0, len(h.pins))
	for _, p := range h.pins {
		pins = append(pins, p)
	}
	slices.Sort(pins)
	return pins
}

// horizon returns the floor the history should have at now under
// Options.History: the point of the state at now minus the horizon, as the
// timeline knows it (the present point when history is off).
func (db *DB) horizon(h *history, now time.Time) uint64 {
	if db.opts.History < 0 {
		return h.next
	}
	f, ok := h.pointAt(now.Add(-db.opts.History).UnixNano())
	if !ok {
		return h.floor
	}
	return max(f, h.floor)
}

// trimHistory drops from memory the versions no read can reach any more,
// so that they count as garbage and compaction reclaims them. It gives way
// to a compaction (which trims as it copies). Writers wait while the
// history is copied; readers only for the swap.
func (db *DB) trimHistory(now time.Time) {
	if !db.compactMu.TryLock() {
		return
	}
	defer db.compactMu.Unlock()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	db.mu.RLock()
	if db.log == nil {
		db.mu.RUnlock()
		return
	}
	h := db.idx.hist
	db.mu.RUnlock()
	f := db.horizon(h, now)
	if f <= h.floor && h.off == (db.opts.History < 0) {
		// The floor has not moved: what a trim could drop is only what
		// a scan found below it, which waits for the floor to move.
		db.lastTrim.Store(now.UnixNano())
		return
	}
	n := h.trimmed(f)
	n.off = db.opts.History < 0
	db.mu.Lock()
	db.idx.hist = n
	db.mu.Unlock()
	db.lastTrim.Store(now.UnixNano())
}

// trimEvery is how often, at most, the history is trimmed between
// compactions.
const trimEvery = time.Minute

// maybeTrimHistory trims the history when it was last trimmed trimEvery
// ago (or a tenth of the horizon, when that is shorter).
func (db *DB) maybeTrimHistory() {
	every := trimEvery
	if h := db.opts.History / 10; h > 0 && h < every {
		every = max(h, time.Second)
	}
	now := time.Now()
	if now.UnixNano()-db.lastTrim.Load() < int64(every) || db.opts.ReadOnly {
		return
	}
	db.trimHistory(now)
}

// historyBytes is what compaction keeps of the log besides live records
// and marks: not garbage.
func (db *DB) historyBytes() int64 {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.idx == nil || db.idx.hist == nil {
		return 0
	}
	return db.idx.hist.bytes + db.idx.hist.pointBytes()
}

// Seq returns the present point: the sequence number the next write will
// take. Reads at it see every write that has returned.
func (db *DB) Seq() (uint64, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.log == nil {
		return 0, ErrClosed
	}
	return db.idx.hist.next, nil
}

// HistoryFloor returns the oldest point at which every read is exact:
// points before it are readable only if a snapshot names them.
func (db *DB) HistoryFloor() (uint64, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.log == nil {
		return 0, ErrClosed
	}
	return db.idx.hist.floor, nil
}

// GetAt returns the value a chunk key had at point seq: the state every
// write numbered below seq made (see Seq, SeqAt and snapshots). A key
// absent then gives ErrNotFound; a point older than the history kept gives
// ErrHistory. A point not reached yet reads the present. The caller owns
// the slice.
func (db *DB) GetAt(k Key, seq uint64) ([]byte, error) {
	v, err := db.getAt(rkey{chunk: k}, seq)
	if err != nil {
		return nil, fmt.Errorf("blazedb: get %v at %d: %w", k, seq, err)
	}
	return v, nil
}

// GetNamedAt is GetAt for a named key.
func (db *DB) GetNamedAt(name string, seq uint64) ([]byte, error) {
	v, err := db.getAt(rkey{named: true, name: name}, seq)
	if err != nil {
		return nil, fmt.Errorf("blazedb: get %q at %d: %w", name, seq, err)
	}
	return v, nil
}

func (db *DB) getAt(k rkey, p uint64) ([]byte, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	db.mu.RLock()
	l := db.log
	if l == nil {
		db.mu.RUnlock()
		return nil, ErrClosed
	}
	h := db.idx.hist
	if !h.exact(p) {
		db.mu.RUnlock()
		return nil, fmt.Errorf("%w: point %d is older than the history kept (floor %d)", ErrHistory, p, h.floor)
	}
	cur, ok := db.idx.get(k)
	e, found := h.at(k, p, cur, ok)
	if found {
		l.refs.Add(1)
	}
	db.mu.RUnlock()
	db.stats.reads.Add(1)
	if !found {
		return nil, ErrNotFound
	}
	defer l.refs.Done()
	return readEntry(l, e, k.appendTo(nil), nil, false)
}

// Change is a key changed after a point, with the sequence number of its
// newest change: a plain value, safe to copy and to use from any goroutine.
type Change struct {
	Key     Key    // the chunk key, unless Named
	Name    string // the named key, if Named
	Named   bool
	Seq     uint64 // sequence number of the key's newest write
	Deleted bool   // the newest write deleted the key
}

// ChangedSince lists the keys written at or after point seq (so changed
// since the state seq names), deletions included, chunk keys first in
// dimension and Morton order, then named keys sorted. A point older than
// the history kept gives ErrHistory. Snapshots' own records are not listed.
func (db *DB) ChangedSince(seq uint64) ([]Change, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.log == nil {
		return nil, ErrClosed
	}
	h := db.idx.hist
	if !h.exact(seq) {
		return nil, fmt.Errorf("blazedb: changed since %d: %w: older than the history kept (floor %d)", seq, ErrHistory, h.floor)
	}
	var out []Change
	for k, c := range h.chains.all() {
		last := c[len(c)-1]
		if last.seq < seq || (k.named && isSnapshotName(k.name)) || (last.seq == 0 && len(c) == 1) {
			continue
		}
		out = append(out, Change{Key: k.chunk, Name: k.name, Named: k.named, Seq: last.seq, Deleted: last.deleted()})
	}
	slices.SortFunc(out, func(a, b Change) int {
		return compareRkey(rkey{named: a.Named, chunk: a.Key, name: a.Name}, rkey{named: b.Named, chunk: b.Key, name: b.Name})
	})
	return out, nil
}

// compareRkey orders keys as the index iterates them: chunk keys by
// dimension then Morton code, then named keys by name.
func compareRkey(a, b rkey) int {
	if a.named != b.named {
		if a.named {
			return 1
		}
		return -1
	}
	if a.named {
		return cmp.Compare(a.name, b.name)
	}
	if c := cmp.Compare(a.chunk.Dim, b.chunk.Dim); c != 0 {
		return c
	}
	return cmp.Compare(a.chunk.code(), b.chunk.code())
}

// recovered completes a history after recovery's scan, with the time
// marks it met and the next sequence number.
func (h *history) recovered(points []timePoint, floor, next uint64) {
	for _, p := range points {
		h.addPoint(p)
	}
	h.floor = max(h.floor, floor)
	h.next = max(h.next, next)
}

// checkHistory reads and verifies every older version the history of snap
// holds in l, for Check: the first failure of each key.
func checkHistory(l *logFile, snap *index) []error {
	if snap.hist == nil {
		return nil
	}
	var errs []error
	for _, k := range slices.SortedFunc(snap.hist.chains.keys(), compareRkey) {
		c, _ := snap.hist.chains.get(k)
		for i, v := range c[:len(c)-1] {
			if v.deleted() {
				continue
			}
			if _, err := readEntry(l, v.entry(), k.appendTo(nil), nil, true); err != nil {
				errs = append(errs, fmt.Errorf("key %v, version %d of %d (sequence %d): %w", k, i+1, len(c), v.seq, err))
				break
			}
		}
	}
	return errs
}

// damagedHistory counts the keys with a damaged older version, for Repair.
func (db *DB) damagedHistory() (int, error) {
	db.compactMu.Lock()
	defer db.compactMu.Unlock()
	l, snap, _, _, err := db.snapshot()
	if err != nil {
		return 0, err
	}
	defer l.refs.Done()
	return len(checkHistory(l, snap)), nil
}

// appendVersion appends v to k's chain.
func (h *history) appendVersion(k rkey, v version) {
	c, _ := h.chains.get(k)
	h.chains.set(k, append(c, v))
}
