package replica

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
)

// testStore returns a store at a fresh prefix of a bucket on srv.
func testStore(t testing.TB, srv *s3test.Server, prefix string) *Store {
	t.Helper()
	s, err := OpenStore("s3://worlds/"+prefix, Endpoint{URL: srv.URL, AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MakeBucket(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

func openWorld(t testing.TB, dir string) *provider.DB {
	t.Helper()
	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// columns is what a world should hold: by position, nil for absent.
type columns map[world.ChunkPos]*chunk.Column

// synthetic returns the column of seed, made once: making one costs more
// than storing it. The provider snapshots what it stores and nothing here
// changes a column, so one value serves to store and to compare.
func synthetic(seed uint64) *chunk.Column {
	made.Lock()
	defer made.Unlock()
	if made.m == nil {
		made.m = map[uint64]*chunk.Column{}
	}
	if c, ok := made.m[seed]; ok {
		return c
	}
	c := worldtest.Synthetic(seed, world.Overworld, world.DefaultBlockRegistry)
	made.m[seed] = c
	return c
}

var made struct {
	sync.Mutex
	m map[uint64]*chunk.Column
}

func store(t *testing.T, db *provider.DB, want columns, seeds map[world.ChunkPos]uint64) {
	t.Helper()
	for pos, seed := range seeds {
		col := synthetic(seed)
		if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
		want[pos] = col
	}
	// The provider writes stores off the caller's goroutine (issue 42);
	// the log, which the replica ships, holds them once Sync returns.
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
}

// compareWorld opens the world in dir and compares it column by column
// with want.
func compareWorld(t *testing.T, dir string, want columns) {
	t.Helper()
	db, err := provider.Config{Log: quiet, ReadOnly: true}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for pos, w := range want {
		got, err := db.LoadColumn(pos, world.Overworld)
		if w == nil {
			if !errors.Is(err, leveldb.ErrNotFound) {
				t.Errorf("%s: column %v stored after the point restored: %v", dir, pos, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: column %v: %v", dir, pos, err)
			continue
		}
		if err := colcmp.Compare(got, w); err != nil {
			t.Errorf("%s: column %v: %v", dir, pos, err)
		}
	}
}

func clone(c columns) columns {
	out := columns{}
	for k, v := range c {
		out[k] = v
	}
	return out
}

// Issue 39 items 2 and 3: a world shipped as it is written, through a
// compaction (a whole copy of the new generation), restored at two points
// in time, each compared column by column with what was stored by then.
func TestShipAndRestoreAtTwoPoints(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "a/world")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	db := openWorld(t, dir)
	rep, err := Start(ctx, db.Engine(), dir, st, Config{Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}

	want := columns{{9, 9}: nil}
	store(t, db, want, map[world.ChunkPos]uint64{{0, 0}: 1, {1, 0}: 2, {0, 1}: 3})
	if err := rep.Ship(ctx); err != nil {
		t.Fatal(err)
	}
	first := clone(want)
	t1 := time.Now()
	time.Sleep(5 * time.Millisecond)

	// Overwritten, compacted (a new generation), then more.
	store(t, db, want, map[world.ChunkPos]uint64{{0, 0}: 100, {9, 9}: 4})
	if err := db.Engine().Compact(); err != nil {
		t.Fatal(err)
	}
	store(t, db, want, map[world.ChunkPos]uint64{{1, 0}: 101, {5, 5}: 5})
	first[world.ChunkPos{5, 5}] = nil
	if err := rep.Ship(ctx); err != nil {
		t.Fatal(err)
	}
	t2 := time.Now()
	s := rep.Stats()
	if s.FullCopies != 2 || s.Epoch != 1 || s.Fenced || s.Failures != 0 {
		t.Errorf("stats after a compaction: %+v; want two whole copies, epoch 1", s)
	}
	gen, durable, err := db.Engine().DurableLog()
	if err != nil || s.Generation != gen || s.Shipped != durable {
		t.Errorf("shipped generation %d to %d, the log is at %d to %d (%v)", s.Generation, s.Shipped, gen, durable, err)
	}
	level, _ := os.ReadFile(filepath.Join(dir, "level.dat"))
	time.Sleep(5 * time.Millisecond)
	// Stored after the last shipment, and never shipped (Close would).
	store(t, db, clone(want), map[world.ChunkPos]uint64{{7, 7}: 7})
	want[world.ChunkPos{7, 7}] = nil

	for _, c := range []struct {
		name string
		at   time.Time
		want columns
	}{{"first", t1, first}, {"second", t2, want}} {
		out := filepath.Join(t.TempDir(), c.name)
		rep, err := Restore(ctx, st, out, c.at)
		if err != nil {
			t.Fatalf("restore at %v: %v", c.at, err)
		}
		if rep.Objects == 0 || rep.AsOf.After(c.at) {
			t.Errorf("restore report %+v at %v", rep, c.at)
		}
		compareWorld(t, out, c.want)
	}
	if level != nil {
		out := filepath.Join(t.TempDir(), "latest")
		if _, err := Restore(ctx, st, out, t2); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(out, "level.dat")); !bytes.Equal(got, level) {
			t.Errorf("level.dat restored differs from the one shipped")
		}
	}
	if _, err := Restore(ctx, st, filepath.Join(t.TempDir(), "early"), t1.Add(-time.Hour)); !errors.Is(err, ErrNoReplica) {
		t.Errorf("restore before the first shipment: %v; want ErrNoReplica", err)
	}

	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	edition := db.Edition()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Close shipped the rest.
	want[world.ChunkPos{7, 7}] = synthetic(7)
	out := filepath.Join(t.TempDir(), "closed")
	if _, err := Restore(ctx, st, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	compareWorld(t, out, want)
	// A copy made outside Backup: an edition of its own, as a backup's.
	restored, err := provider.Config{Log: quiet, ReadOnly: true}.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if e := restored.Edition(); e.IsZero() || e == edition {
		t.Errorf("the restored world's edition is %v, the original's %v", e, edition)
	}
	restored.Close()
}

// Issue 39 item 4: one writer per world. A second writer is refused while
// the first one's lease runs; once it has run out (the first writer
// paused) the second takes the replica with a new epoch, and the first is
// fenced at its next upload and uploads nothing more.
func TestOneWriter(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "fenced")
	ctx := t.Context()
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a := openWorld(t, dirA)
	defer a.Close()
	lease := time.Minute
	repA, err := Start(ctx, a.Engine(), dirA, st, Config{Interval: time.Hour, Lease: lease, Owner: "server-a", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	store(t, a, columns{}, map[world.ChunkPos]uint64{{0, 0}: 1})
	if err := repA.Ship(ctx); err != nil {
		t.Fatal(err)
	}

	b := openWorld(t, dirB)
	defer b.Close()
	if _, err := Start(ctx, b.Engine(), dirB, st, Config{Interval: time.Hour, Owner: "server-b", Logger: quiet}); !errors.Is(err, ErrOwned) {
		t.Fatalf("a second writer during the first one's lease: %v; want ErrOwned", err)
	}
	// server-a paused past its lease: server-b's clock says so.
	later := func() time.Time { return time.Now().Add(lease + time.Second) }
	repB, err := Start(ctx, b.Engine(), dirB, st, Config{Interval: time.Hour, Owner: "server-b", Now: later, Logger: quiet})
	if err != nil {
		t.Fatalf("a second writer after the lease ran out: %v", err)
	}
	if e := repB.Stats().Epoch; e != 2 {
		t.Errorf("the second writer's epoch is %d, want 2", e)
	}
	// The objects of epoch 1, server-a's.
	epoch1 := func() []string {
		t.Helper()
		names, err := st.list(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range names {
			lo, isLog := parseLogObject(n)
			fo, isFile := parseFileObject(n)
			if isLog && lo.epoch == 1 || isFile && fo.epoch == 1 {
				out = append(out, n)
			}
		}
		return out
	}
	before := epoch1()
	store(t, a, columns{}, map[world.ChunkPos]uint64{{1, 1}: 2})
	if err := repA.Ship(ctx); !errors.Is(err, ErrFenced) {
		t.Fatalf("the first writer's upload after it lost the replica: %v; want ErrFenced", err)
	}
	if !repA.Stats().Fenced {
		t.Error("stats do not say fenced")
	}
	after := epoch1()
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("a fenced writer uploaded: before %v, after %v", before, after)
	}
	if err := repA.Close(ctx); !errors.Is(err, ErrFenced) {
		t.Errorf("close of a fenced writer: %v; want ErrFenced", err)
	}
	if err := repB.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The replica is server-b's world now.
	out := filepath.Join(t.TempDir(), "restored")
	r, err := Restore(ctx, st, out, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Epoch != 2 {
		t.Errorf("restored from epoch %d, want 2", r.Epoch)
	}
	compareWorld(t, out, columns{{0, 0}: nil, {1, 1}: nil})
}

// Issue 39 item 2: with the object store unreachable, shipments fail in
// the background, are counted and returned by the next call that reports
// (Err), are retried with backoff, and succeed once it is back, losing
// nothing.
func TestShipRetriesUntilStoreIsBack(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "flaky")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	db := openWorld(t, dir)
	defer db.Close()
	rep, err := Start(ctx, db.Engine(), dir, st, Config{Interval: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, ok func(Stats) bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(rep.Stats()); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: stats %+v", what, rep.Stats())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("the first copy", func(s Stats) bool { return s.FullCopies == 1 })
	srv.Stop()
	want := columns{}
	store(t, db, want, map[world.ChunkPos]uint64{{0, 0}: 1, {2, 2}: 2})
	if err := db.Engine().Sync(); err != nil {
		t.Fatal(err)
	}
	waitFor("failures counted", func(s Stats) bool { return s.Failures >= 2 && s.LastError != "" })
	srv.Restart()
	_, durable, _ := db.Engine().DurableLog()
	waitFor("shipped after the store came back", func(s Stats) bool { return s.Shipped >= durable && s.LastError == "" })
	if err := rep.Err(); err == nil {
		t.Error("Err does not report the failures")
	}
	if err := rep.Err(); err != nil {
		t.Errorf("Err reports the failures twice: %v", err)
	}
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "restored")
	if _, err := Restore(ctx, st, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	compareWorld(t, out, want)
}

// Issue 39 item 4: a renewal the store made whose answer was lost (the
// server killed after writing the manifest) leaves the writer an ETag that
// no longer matches; the manifest is still its own epoch, so it is not
// fenced (TestServerKilledMidUpload met this).
func TestRenewAnswerLost(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "lost")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	db := openWorld(t, dir)
	defer db.Close()
	rep, err := Start(ctx, db.Engine(), dir, st, Config{Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// The renewal as the store saw it; its answer never reached rep.
	rep.shipMu.Lock()
	m := *rep.man
	_, err = renew(ctx, st, &m, rep.etag, time.Now())
	rep.shipMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	store(t, db, columns{}, map[world.ChunkPos]uint64{{0, 0}: 1})
	if err := rep.Ship(ctx); err != nil {
		t.Fatalf("a ship after a renewal whose answer was lost: %v", err)
	}
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// Issue 39 item 3: the manifest read while its writer renews it over and
// over (a restore, or a second server, while the first ships) is read
// whole, not refused because it changed between the client's requests
// (TestLossOnMachineLoss met it).
func TestReadManifestWhileRenewed(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "renewed")
	ctx := t.Context()
	m, etag, err := acquire(ctx, st, "writer", time.Minute, false, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan error)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if etag, err = renew(ctx, st, m, etag, time.Now()); err != nil {
				done <- err
				return
			}
		}
	}()
	for range 50 {
		if _, _, err := readManifest(ctx, st); err != nil {
			close(stop)
			<-done
			t.Fatalf("the manifest read while renewed: %v", err)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Issue 39 item 3: the engine's index checkpoint (index.dat) is shipped
// with the log, so that a restored world opens from it, scanning only what
// follows what it covers rather than the whole log.
func TestRestoreOpensFromShippedIndex(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "index")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "world")
	db := openWorld(t, dir)
	defer db.Close()
	rep, err := Start(ctx, db.Engine(), dir, st, Config{Interval: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	want := columns{}
	store(t, db, want, map[world.ChunkPos]uint64{{0, 0}: 1, {1, 0}: 2, {2, 0}: 3})
	if err := db.Engine().Compact(); err != nil { // writes index.dat
		t.Fatal(err)
	}
	store(t, db, want, map[world.ChunkPos]uint64{{3, 0}: 4})
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "restored")
	r, err := Restore(ctx, st, out, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Scanned >= r.LogBytes/2 {
		t.Errorf("the restore's verification scanned %d bytes of %d: the index.dat shipped was not used", r.Scanned, r.LogBytes)
	}
	compareWorld(t, out, want)
	// And the world restored opens from it.
	eng, err := blazedb.Open(filepath.Join(out, provider.EngineDir), blazedb.Options{ReadOnly: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if rec := eng.Recovery(); !rec.IndexLoaded || rec.ScannedBytes >= r.LogBytes/2 {
		t.Errorf("the restored world opened with index.dat %v (%s), scanning %d bytes of %d", rec.IndexLoaded, rec.IndexProblem, rec.ScannedBytes, r.LogBytes)
	}
}
