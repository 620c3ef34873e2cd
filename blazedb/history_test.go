package blazedb

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// historyModel records the state of a few keys at every point.
type historyModel struct {
	keys   []rkey
	cur    map[rkey]string // "" is absent
	points []uint64
	states []map[rkey]string
}

func newHistoryModel() *historyModel {
	m := &historyModel{cur: map[rkey]string{}}
	for i := range 6 {
		m.keys = append(m.keys, rkey{chunk: Key{Dim: int32(i % 2), X: int32(i), Z: -int32(i)}})
	}
	m.keys = append(m.keys, rkey{named: true, name: "player/a"}, rkey{named: true, name: "player/b"})
	return m
}

// record notes the state at the present point.
func (m *historyModel) record(t *testing.T, db *DB) {
	t.Helper()
	p, err := db.Seq()
	if err != nil {
		t.Fatal(err)
	}
	st := map[rkey]string{}
	for k, v := range m.cur {
		st[k] = v
	}
	m.points = append(m.points, p)
	m.states = append(m.states, st)
}

// step writes something random: a put, a delete, a batch or the same value again.
func (m *historyModel) step(t *testing.T, db *DB, rng *rand.Rand, i int) {
	t.Helper()
	k := m.keys[rng.IntN(len(m.keys))]
	v := fmt.Sprintf("%v#%d", k, i)
	var err error
	switch r := rng.IntN(10); {
	case r < 5:
		if k.named {
			err = db.PutNamed(k.name, []byte(v))
		} else {
			err = db.Put(k.chunk, []byte(v))
		}
		m.cur[k] = v
	case r < 7:
		if k.named {
			err = db.DeleteNamed(k.name)
		} else {
			err = db.Delete(k.chunk)
		}
		m.cur[k] = ""
	case r < 9:
		var b Batch
		for j, k := range m.keys[:3] {
			v := fmt.Sprintf("%v#%d#%d", k, i, j)
			b.Put(k.chunk, []byte(v))
			m.cur[k] = v
		}
		b.DeleteNamed("player/b")
		m.cur[rkey{named: true, name: "player/b"}] = ""
		err = db.Apply(&b)
	default:
		if cur := m.cur[k]; cur != "" && !k.named {
			err = db.Put(k.chunk, []byte(cur)) // elided
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

func getAt(db *DB, k rkey, p uint64) (string, error) {
	var v []byte
	var err error
	if k.named {
		v, err = db.GetNamedAt(k.name, p)
	} else {
		v, err = db.GetAt(k.chunk, p)
	}
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	return string(v), err
}

// check reads every key at every recorded point; with floorOK, a point
// below the floor may fail with ErrHistory.
func (m *historyModel) check(t *testing.T, db *DB, what string) {
	t.Helper()
	floor, _ := db.HistoryFloor()
	for i, p := range m.points {
		for _, k := range m.keys {
			got, err := getAt(db, k, p)
			if p < floor && errors.Is(err, ErrHistory) {
				continue
			}
			if err != nil || got != m.states[i][k] {
				t.Fatalf("%s: %v at point %d (floor %d): %q, %v; want %q", what, k, p, floor, got, err, m.states[i][k])
			}
		}
	}
}

// Issue 36 (engine): a key's value as of any point in the history, through
// compaction, a reopen with index.dat and a rebuild by scanning.
func TestHistoryGetAt(t *testing.T) {
	fs := vfstest.NewMem()
	opts := Options{DisableAutoCompaction: true}
	db := open(t, fs, "/db", opts)
	m := newHistoryModel()
	rng := rand.New(rand.NewPCG(1, 2))
	m.record(t, db)
	for i := range 300 {
		m.step(t, db, rng, i)
		m.record(t, db)
		if i%97 == 0 {
			if err := db.Compact(); err != nil {
				t.Fatal(err)
			}
		}
	}
	m.check(t, db, "open")
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	m.check(t, db, "compacted")
	if f, _ := db.HistoryFloor(); f != 0 {
		t.Fatalf("floor %d within the horizon", f)
	}
	db.Close()
	db = open(t, fs, "/db", opts)
	if !db.Recovery().IndexLoaded {
		t.Fatal("index.dat not loaded")
	}
	m.check(t, db, "reopened")
	db.Close()
	fs.Remove("/db/" + indexName)
	db = open(t, fs, "/db", opts)
	m.check(t, db, "rebuilt by scanning")
	// Writes after a reopen extend the same history.
	for i := 300; i < 400; i++ {
		m.step(t, db, rng, i)
		m.record(t, db)
	}
	m.check(t, db, "written after reopening")
}

// Issue 36 (engine): with history off, compaction keeps only what
// snapshots pin; reads before the floor fail with ErrHistory, and reads at
// a snapshot's point stay exact through compaction and reopening, until it
// is deleted.
func TestSnapshotsPinVersions(t *testing.T) {
	fs := vfstest.NewMem()
	opts := Options{DisableAutoCompaction: true, History: -1}
	db := open(t, fs, "/db", opts)
	m := newHistoryModel()
	rng := rand.New(rand.NewPCG(3, 4))
	var snaps []SnapshotInfo
	var states []map[rkey]string
	for i := range 200 {
		m.step(t, db, rng, i)
		if i%40 == 0 {
			s, err := db.CreateSnapshot(fmt.Sprintf("s%d", i))
			if err != nil {
				t.Fatal(err)
			}
			m.record(t, db) // one past the snapshot record
			snaps = append(snaps, s)
			states = append(states, m.states[len(m.states)-1])
		}
	}
	if _, err := db.CreateSnapshot("s0"); !errors.Is(err, ErrExists) {
		t.Fatalf("a second snapshot s0: %v", err)
	}
	if err := db.PutNamed(snapshotPrefix+"x", nil); !errors.Is(err, ErrReservedName) {
		t.Fatalf("a write to a reserved name: %v", err)
	}
	check := func(what string) {
		t.Helper()
		for i, s := range snaps {
			for _, k := range m.keys {
				got, err := getAt(db, k, s.Seq)
				if err != nil || got != states[i][k] {
					t.Fatalf("%s: snapshot %s: %v: %q, %v; want %q", what, s.Name, k, got, err, states[i][k])
				}
			}
		}
		list, err := db.Snapshots()
		if err != nil || len(list) != len(snaps) {
			t.Fatalf("%s: Snapshots: %v %v", what, list, err)
		}
		for i, s := range list {
			if s.Name != snaps[i].Name || s.Seq != snaps[i].Seq || !s.Time.Equal(snaps[i].Time) {
				t.Fatalf("%s: snapshot %d is %+v, want %+v", what, i, s, snaps[i])
			}
		}
	}
	check("open")
	before := db.Stats().LogBytes
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	check("compacted")
	if after := db.Stats().LogBytes; after >= before/2 {
		t.Fatalf("compaction with history off kept %d of %d bytes", after, before)
	}
	if f, _ := db.HistoryFloor(); f == 0 {
		t.Fatal("history off, yet the floor did not move")
	}
	if _, err := db.GetAt(m.keys[0].chunk, snaps[1].Seq-1); !errors.Is(err, ErrHistory) {
		t.Fatalf("a read before the floor: %v", err)
	}
	names, _ := db.Names()
	if slices.ContainsFunc(names, isReservedName) {
		t.Fatalf("Names lists the engine's records: %q", names)
	}
	db.Close()
	db = open(t, fs, "/db", opts)
	check("reopened")
	db.Close()
	fs.Remove("/db/" + indexName)
	db = open(t, fs, "/db", opts)
	check("rebuilt by scanning")
	if err := db.DeleteSnapshot(snaps[0].Name); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteSnapshot(snaps[0].Name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleting it twice: %v", err)
	}
	snaps, states = snaps[1:], states[1:]
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	check("after a delete and compaction")
}

// Issue 36 (engine): the keys changed since a point, deletions included,
// with the sequence number of their newest change.
func TestChangedSince(t *testing.T) {
	db := open(t, vfstest.NewMem(), "/db", Options{})
	db.Put(Key{X: 1}, []byte("a"))
	db.Put(Key{X: 2}, []byte("b"))
	db.PutNamed("p", []byte("x"))
	s, err := db.CreateSnapshot("before")
	if err != nil {
		t.Fatal(err)
	}
	db.Put(Key{X: 1}, []byte("a2"))
	db.Put(Key{X: 1}, []byte("a3"))
	db.Delete(Key{X: 2})
	db.Put(Key{X: 3}, []byte("c"))
	db.Put(Key{X: 3}, []byte("c")) // unchanged: no change
	last, _ := db.Seq()
	got, err := db.ChangedSince(s.Seq)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Key: Key{X: 1}, Seq: s.Seq + 2},
		{Key: Key{X: 2}, Seq: s.Seq + 3, Deleted: true},
		{Key: Key{X: 3}, Seq: s.Seq + 4},
	}
	if !slices.Equal(got, want) || last != s.Seq+5 {
		t.Fatalf("changed since %d: %+v (present %d), want %+v", s.Seq, got, last, want)
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	if again, err := db.ChangedSince(s.Seq); err != nil || !slices.Equal(again, want) {
		t.Fatalf("after compaction: %+v %v", again, err)
	}
	if none, err := db.ChangedSince(last); err != nil || len(none) != 0 {
		t.Fatalf("changed since the present: %+v %v", none, err)
	}
}

// Issue 36 (engine): the timeline maps a time to the point of the state
// then, to within timeStep, and survives compaction and reopening.
func TestSeqAt(t *testing.T) {
	fs := vfstest.NewMem()
	db := open(t, fs, "/db", Options{DisableAutoCompaction: true})
	start := time.Now()
	if p, err := db.SeqAt(start.Add(-time.Hour)); err != nil || p != 0 {
		t.Fatalf("before the first write: %d %v", p, err)
	}
	db.Put(Key{X: 1}, []byte("a"))
	db.Put(Key{X: 1}, []byte("b"))
	time.Sleep(timeStep + 50*time.Millisecond)
	mid := time.Now()
	p1, _ := db.Seq()
	time.Sleep(timeStep + 50*time.Millisecond)
	db.Put(Key{X: 1}, []byte("c"))
	check := func(what string) {
		t.Helper()
		p, err := db.SeqAt(mid)
		if err != nil || p != p1 {
			t.Fatalf("%s: SeqAt(mid) = %d, %v; want %d", what, p, err, p1)
		}
		if v, err := db.GetAt(Key{X: 1}, p); err != nil || string(v) != "b" {
			t.Fatalf("%s: value then: %q %v", what, v, err)
		}
		now, _ := db.Seq()
		if p, err := db.SeqAt(time.Now().Add(2 * timeStep)); err != nil || p != now {
			t.Fatalf("%s: SeqAt(later) = %d %v, want %d", what, p, err, now)
		}
	}
	check("open")
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	check("compacted")
	db.Close()
	fs.Remove("/db/" + indexName)
	db = open(t, fs, "/db", Options{DisableAutoCompaction: true})
	check("rebuilt by scanning")
}

// The timeline's arithmetic, on synthetic points: writes between two time
// marks were made within timeStep of the first.
func TestSeqAtPoints(t *testing.T) {
	s := int64(time.Second)
	h := newHistory()
	h.points = []timePoint{{0, 10 * s}, {5, 20 * s}, {9, 40 * s}}
	h.next = 12
	for _, c := range []struct {
		t    int64
		want uint64
	}{{5 * s, 0}, {10 * s, 0}, {10*s + s/2, 0}, {11 * s, 5}, {19 * s, 5}, {20 * s, 5}, {21 * s, 9}, {40 * s, 9}, {41 * s, 12}} {
		if got, err := h.seqAt(c.t); err != nil || got != c.want {
			t.Errorf("seqAt(%ds) = %d, %v; want %d", c.t/s, got, err, c.want)
		}
	}
	h.floor = 5
	h.points = h.points[1:]
	if _, err := h.seqAt(15 * s); !errors.Is(err, ErrHistory) {
		t.Errorf("a time before the history kept: %v", err)
	}
}

// keepVersions keeps a version when a read at or after the floor or at a
// pin can see it.
func TestKeepVersions(t *testing.T) {
	del := int64(-1)
	c := []version{{seq: 2, off: 40}, {seq: 5, off: del}, {seq: 8, off: 80}, {seq: 12, off: 120}}
	for _, tc := range []struct {
		floor uint64
		pins  []uint64
		keep  []bool
		ok    bool
	}{
		{0, nil, []bool{true, true, true, true}, true},
		{9, nil, []bool{false, false, true, true}, true},
		{13, nil, []bool{false, false, false, false}, false},
		{13, []uint64{4}, []bool{true, false, false, true}, true},
		{13, []uint64{7, 10}, []bool{false, true, true, true}, true},
		{13, []uint64{20}, []bool{false, false, false, false}, false},
	} {
		keep, ok := keepVersions(c, tc.floor, tc.pins)
		if ok != tc.ok || !slices.Equal(keep, tc.keep) {
			t.Errorf("floor %d pins %v: %v %v, want %v %v", tc.floor, tc.pins, keep, ok, tc.keep, tc.ok)
		}
	}
}

// Issue 36 (engine): a damaged old version stops a compaction, as a damaged
// live record does; Repair drops it and raises the floor past it, so that
// no read at a point returns the version before it in its place.
func TestRepairDropsDamagedOldVersion(t *testing.T) {
	fs := vfstest.NewMem()
	opts := Options{FS: fs, Logger: quiet, DisableAutoCompaction: true, Compression: CompressionNone}
	db := open(t, fs, "/db", opts)
	k := Key{X: 1}
	db.Put(k, value(1, 300))
	db.Put(k, value(2, 300))
	db.mu.RLock()
	bad, _ := db.idx.get(rkey{chunk: k})
	db.mu.RUnlock()
	p2, _ := db.Seq() // value 2 is visible here
	db.Put(k, value(3, 300))
	db.Close()
	log, _ := fs.ReadFile("/db/" + logName)
	spoilValueSum(log[bad.off : bad.off+int64(bad.size)])
	fs.WriteFile("/db/"+logName, log)

	if _, err := Repair("/db", opts); err != nil {
		t.Fatal(err)
	}
	db = open(t, fs, "/db", opts)
	if _, err := db.GetAt(k, p2); !errors.Is(err, ErrHistory) {
		t.Fatalf("a read where the dropped version was: %v", err)
	}
	if v, err := db.Get(k); err != nil || string(v) != string(value(3, 300)) {
		t.Fatalf("the present value: %v", err)
	}
}

// Issue 36 (engine): between compactions the history is trimmed in memory
// as the horizon moves, and what falls out of it becomes garbage that
// automatic compaction reclaims; reads before the new floor fail.
func TestTrimMakesOldVersionsGarbage(t *testing.T) {
	db := open(t, vfstest.NewMem(), "/db", Options{DisableAutoCompaction: true, History: time.Nanosecond})
	for i := range 20 {
		if err := db.Put(Key{X: int32(i % 2)}, value(i, 500)); err != nil {
			t.Fatal(err)
		}
	}
	early := uint64(5)
	if _, err := db.GetAt(Key{X: 0}, early); err != nil {
		t.Fatalf("before the trim: %v", err)
	}
	before := db.Stats()
	if before.GarbageBytes != 0 || before.HistoryBytes == 0 {
		t.Fatalf("before the trim: %+v", before)
	}
	time.Sleep(timeStep + 10*time.Millisecond) // past the writes' time mark
	db.trimHistory(time.Now())
	after := db.Stats()
	if after.GarbageBytes < before.HistoryBytes/2 || after.HistoryBytes >= before.HistoryBytes/2 {
		t.Fatalf("after the trim: %d garbage, %d history bytes (%d before)", after.GarbageBytes, after.HistoryBytes, before.HistoryBytes)
	}
	if _, err := db.GetAt(Key{X: 0}, early); !errors.Is(err, ErrHistory) {
		t.Fatalf("a read before the new floor: %v", err)
	}
}

// Issue 36 (engine): a backup holds the snapshots, which read there what
// they read in the database.
func TestBackupKeepsSnapshots(t *testing.T) {
	fs := vfstest.NewMem()
	db := open(t, fs, "/db", Options{History: -1})
	db.Put(Key{X: 1}, []byte("old"))
	s, err := db.CreateSnapshot("before")
	if err != nil {
		t.Fatal(err)
	}
	db.Put(Key{X: 1}, []byte("new"))
	if err := db.Backup("/copy"); err != nil {
		t.Fatal(err)
	}
	b := open(t, fs, "/copy", Options{History: -1})
	list, err := b.Snapshots()
	if err != nil || len(list) != 1 || list[0].Seq != s.Seq {
		t.Fatalf("snapshots in the backup: %+v %v", list, err)
	}
	if v, err := b.GetAt(Key{X: 1}, s.Seq); err != nil || string(v) != "old" {
		t.Fatalf("the snapshot in the backup reads %q, %v", v, err)
	}
}
