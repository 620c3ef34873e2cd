package prefetch

import (
	"errors"
	"io"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// strip stores columns x in [0, n), z in [-3, 3] and reopens the world so
// nothing is cached.
func strip(t testing.TB, n int, c provider.Config) *provider.DB {
	dir := t.TempDir()
	c.Log = quiet
	p, err := c.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for x := 0; x < n; x++ {
		for z := -3; z <= 3; z++ {
			p.StoreColumn(world.ChunkPos{int32(x), int32(z)}, world.Overworld, worldtest.Synthetic(uint64(x*7+z+3), world.Overworld, world.DefaultBlockRegistry))
		}
	}
	p.Close()
	p, err = c.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestPredictAheadAndFurtherWhenFaster(t *testing.T) {
	pf := &Prefetcher{opts: Options{}.withDefaults()}
	pos := mgl64.Vec3{8, 64, 8}
	walk := pf.predict(pos, mgl64.Vec3{4.3, 0, 0}, nil)
	fly := pf.predict(pos, mgl64.Vec3{30, 0, 0}, nil)
	if len(walk) == 0 || len(fly) <= len(walk) {
		t.Fatalf("walking predicts %d chunks, flying %d", len(walk), len(fly))
	}
	far := int32(0)
	for _, c := range fly {
		if inDragonflyView(world.ChunkPos{}, c, pf.opts.ViewRadius) {
			t.Fatalf("predicted %v, already within the view radius", c)
		}
		if c[0] < 0 {
			t.Fatalf("predicted %v behind the player", c)
		}
		far = max(far, c[0])
	}
	if far < int32(pf.opts.ViewRadius)+5 {
		t.Fatalf("flying at 30 blocks a second predicts only %d chunks ahead", far)
	}
	if len(pf.predict(pos, mgl64.Vec3{0.1, 0, 0}, nil)) != 0 {
		t.Fatal("a player standing still gets predictions")
	}
}

// A player moving along the strip finds the chunks ahead already cached.
// walkTheStrip walks a player along +X over the strip at about 10 blocks
// a second for a second, and waits (five seconds at most) until pf has
// loaded the nine columns that come into a view of radius 1: rows x = 2
// to 4 of z = -1 to 1.
func walkTheStrip(pf *Prefetcher) {
	id := uuid.New()
	pos := mgl64.Vec3{8, 64, 8}
	for i := 0; i < 10; i++ {
		pos[0] += 1
		pf.UpdatePlayer(id, pos, world.Overworld)
		time.Sleep(100 * time.Millisecond)
	}
	for deadline := time.Now().Add(5 * time.Second); pf.Stats().Loaded < 9 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWarmsTheChunksAhead(t *testing.T) {
	p := strip(t, 6, provider.Config{})
	pf := New(p, Options{ViewRadius: 1})
	defer pf.Close()
	walkTheStrip(pf)
	h0, m0 := p.CacheStats()
	for x := int32(3); x <= 4; x++ {
		if _, err := p.LoadColumn(world.ChunkPos{x, 0}, world.Overworld); err != nil {
			t.Fatal(err)
		}
	}
	h1, m1 := p.CacheStats()
	if h1-h0 != 2 || m1 != m0 {
		t.Fatalf("chunks ahead were not warm: %d hits, %d misses (stats %+v)", h1-h0, m1-m0, pf.Stats())
	}
}

// unstarted is a Prefetcher over p without workers, with room for n jobs
// in its queue, which the test takes from itself.
func unstarted(p Source, o Options, n int) *Prefetcher {
	return &Prefetcher{p: p, opts: o.withDefaults(), players: map[uuid.UUID]*track{}, queued: map[chunkKey]struct{}{}, queue: make(chan job, n)}
}

// A teleport or a sharp turn makes the old predictions stale: a worker
// drops them without reading anything.
func TestTeleportAndTurnDropStalePredictions(t *testing.T) {
	p := strip(t, 2, provider.Config{})
	for name, next := range map[string]mgl64.Vec3{
		"teleport": {5000, 64, 5000},
		"turn":     {2, 64, 0}, // back the way it came
	} {
		t.Run(name, func(t *testing.T) {
			pf := unstarted(p, Options{}, 1000)
			id := uuid.New()
			pf.UpdatePlayer(id, mgl64.Vec3{0, 64, 0}, world.Overworld)
			time.Sleep(20 * time.Millisecond)
			pf.UpdatePlayer(id, mgl64.Vec3{3, 64, 0}, world.Overworld)
			old := len(pf.queue)
			if old == 0 {
				t.Fatal("nothing predicted")
			}
			gen := pf.players[id].gen
			time.Sleep(20 * time.Millisecond)
			pf.UpdatePlayer(id, next, world.Overworld)
			if pf.players[id].gen == gen {
				t.Fatal("the track was not invalidated")
			}
			before := pf.Stats()
			for range old { // the queue is in order: these are the old ones
				pf.do(<-pf.queue)
			}
			if st := pf.Stats(); st.Dropped-before.Dropped != int64(old) || st.Loaded != 0 {
				t.Fatalf("%d predictions from before; stats before %+v, after %+v", old, before, st)
			}
		})
	}
}

// A chunk predicted again while its first prediction waits is not queued
// twice.
func TestQueuedOnce(t *testing.T) {
	pf := unstarted(nil, Options{}, 1000)
	id := uuid.New()
	pos := mgl64.Vec3{0, 64, 0}
	pf.UpdatePlayer(id, pos, world.Overworld)
	for range 5 {
		time.Sleep(20 * time.Millisecond)
		pos[0] += 3
		pf.UpdatePlayer(id, pos, world.Overworld)
	}
	seen := map[world.ChunkPos]bool{}
	for len(pf.queue) > 0 {
		j := <-pf.queue
		if seen[j.pos] {
			t.Fatalf("%v queued twice", j.pos)
		}
		seen[j.pos] = true
	}
	if st := pf.Stats(); len(seen) == 0 || st.Dropped == 0 {
		t.Fatalf("%d queued, %+v: the predictions did not overlap", len(seen), st)
	}
}

// The World holds what a player had in view from the chunks it just left,
// so a player turning back gets no predictions of them; a player new at
// the same spot, moving the same way, does.
func TestSkipsWhatThePlayerLeftBehind(t *testing.T) {
	pf := unstarted(nil, Options{ViewRadius: 4}, 1000)
	id := uuid.New()
	move := func(pos mgl64.Vec3) {
		if tr := pf.players[id]; tr != nil {
			tr.at = time.Now().Add(-50 * time.Millisecond) // a tick ago
		}
		pf.UpdatePlayer(id, pos, world.Overworld)
	}
	pos := mgl64.Vec3{8, 64, 8}
	for pos[0] < 16*4+8 { // from chunk 0 to chunk 4, walking
		move(pos)
		pos[0] += 0.5
	}
	for len(pf.queue) > 0 {
		j := <-pf.queue
		delete(pf.queued, chunkKey{j.pos, j.dim})
	}
	pos[0] -= 1 // from the last move, half a block back: 10 blocks a second
	move(pos)   // a sharp turn
	if len(pf.queue) != 0 {
		t.Fatalf("turning back predicted %v, which the World holds since the player passed", (<-pf.queue).pos)
	}
	if len(pf.predict(pos, mgl64.Vec3{-10, 0, 0}, nil)) == 0 {
		t.Fatal("a new player there, moving back, would get no predictions either: the test shows nothing")
	}
}

// A move that leaves the player's path (the chunks behind, its own and
// those ahead) as it was predicts nothing again: what it would predict is
// queued already. One that changes the path queues what its prediction
// holds that no earlier move queued. (How far ahead the path reaches
// follows the measured speed, which a slow test machine can make vary, so
// each move is judged by whether its path changed.)
func TestPredictsWhenThePathChanges(t *testing.T) {
	pf := unstarted(nil, Options{}, 1000)
	id := uuid.New()
	unchanged, changed, grew := 0, 0, 0
	queued := map[world.ChunkPos]bool{} // in the track's generation
	for x := 1.0; x < 48; x += 0.215 {  // walking along +X, through three chunks
		tr := pf.players[id]
		var path []world.ChunkPos
		var gen uint64
		if tr != nil {
			tr.at = time.Now().Add(-50 * time.Millisecond) // a tick ago
			path, gen = slices.Clone(tr.path), tr.gen
		}
		pf.UpdatePlayer(id, mgl64.Vec3{x, 64, 8}, world.Overworld)
		tr = pf.players[id]
		if tr.gen != gen {
			clear(queued)
		}
		n := 0
		for ; len(pf.queue) > 0; n++ {
			j := <-pf.queue
			delete(pf.queued, chunkKey{j.pos, j.dim})
			queued[j.pos] = true
		}
		switch {
		case path == nil:
		case slices.Equal(path, tr.path) && gen == tr.gen:
			unchanged++
			if n != 0 {
				t.Fatalf("at x=%.2f, a move that left the path %v as it was queued %d chunks again", x, path, n)
			}
		case len(tr.path) > tr.nBehind+1: // a path with steps ahead
			changed++
			if n > 0 {
				grew++
			}
			for _, c := range pf.predictAlong(nil, tr.path, tr.nBehind) {
				if !queued[c] {
					t.Fatalf("at x=%.2f, the path changed from %v to %v and %v, predicted, was never queued", x, path, tr.path, c)
				}
			}
		}
	}
	if unchanged < 100 || changed < 3 || grew < 3 {
		t.Fatalf("%d moves left the path as it was, %d changed it, %d of them queuing chunks: the walk shows nothing", unchanged, changed, grew)
	}
}

// A change of the path queues only what its prediction adds to the last
// one's: the rest was queued at an earlier change and, taken by a worker
// since, would only be read again. Flying at 20° from X, the path changes
// on most moves and each change predicts about a hundred chunks.
func TestQueuesOnlyWhatThePathAdds(t *testing.T) {
	pf := unstarted(nil, Options{}, 1000)
	id := uuid.New()
	a := 20 * math.Pi / 180
	step := mgl64.Vec3{math.Cos(a), 0, math.Sin(a)}.Mul(30.0 / 20) // elytra, a move a tick
	pos := mgl64.Vec3{0.5, 64, 0.5}
	var last map[world.ChunkPos]bool
	changes, predicted, queued := 0, 0, 0
	for range 400 {
		if tr := pf.players[id]; tr != nil {
			tr.at = time.Now().Add(-50 * time.Millisecond) // a tick ago
		}
		var path []world.ChunkPos
		if tr := pf.players[id]; tr != nil {
			path = slices.Clone(tr.path)
		}
		pf.UpdatePlayer(id, pos, world.Overworld)
		pos = pos.Add(step)
		for len(pf.queue) > 0 { // as the workers take them
			j := <-pf.queue
			delete(pf.queued, chunkKey{j.pos, j.dim})
			if last[j.pos] {
				t.Fatalf("%v queued again, though the last prediction held it", j.pos)
			}
			queued++
		}
		tr := pf.players[id]
		if slices.Equal(path, tr.path) {
			continue
		}
		changes++
		preds := pf.predictAlong(nil, tr.path, tr.nBehind)
		predicted += len(preds)
		last = map[world.ChunkPos]bool{}
		for _, c := range preds {
			last[c] = true
		}
	}
	if changes < 100 || predicted < 50*changes || queued > predicted/5 {
		t.Fatalf("%d changes predicting %d chunks in all, %d queued: the flight shows nothing", changes, predicted, queued)
	}
	t.Logf("%d moves, %d changes of the path predicting %d chunks in all, %d queued", 400, changes, predicted, queued)
}

// Predictions dropped because the queue was full are queued at the path's
// next change; the chunks queued before are not queued again.
func TestQueueFullRetriedAtNextChange(t *testing.T) {
	pf := unstarted(nil, Options{}, 1000)
	id := uuid.New()
	pos := mgl64.Vec3{8, 64, 8}
	queued := map[world.ChunkPos]bool{}
	drain := func() {
		for len(pf.queue) > 0 { // as the workers take them
			j := <-pf.queue
			if j.dim != world.Overworld {
				continue // filler
			}
			delete(pf.queued, chunkKey{j.pos, j.dim})
			if queued[j.pos] {
				t.Fatalf("%v queued twice", j.pos)
			}
			queued[j.pos] = true
		}
	}
	move := func() (changed bool) {
		tr := pf.players[id]
		tr.at = time.Now().Add(-50 * time.Millisecond) // a tick ago
		path := slices.Clone(tr.path)
		pos[0] += 1.5 // flying along +X
		pf.UpdatePlayer(id, pos, world.Overworld)
		return !slices.Equal(path, pf.players[id].path)
	}
	pf.UpdatePlayer(id, pos, world.Overworld)
	for cap(pf.queue)-len(pf.queue) > 5 { // room for five only
		pf.queue <- job{dim: world.Nether}
	}
	move() // the first prediction: the whole path ahead
	tr := pf.players[id]
	want := pf.predictAlong(nil, tr.path, tr.nBehind)
	drain()
	if len(queued) != 5 || len(want) <= 5 {
		t.Fatalf("the first prediction did not overflow the queue: %d queued of %d predicted", len(queued), len(want))
	}
	first := maps.Clone(queued)
	for !move() { // on to the path's next change, with room for all
		drain()
	}
	drain()
	now := pf.predictAlong(nil, pf.players[id].path, pf.players[id].nBehind)
	retried := 0
	for _, c := range want {
		if first[c] || !slices.Contains(now, c) {
			continue
		}
		if !queued[c] {
			t.Errorf("%v, dropped with the queue full and still predicted, was not queued again", c)
		}
		retried++
	}
	if retried == 0 {
		t.Fatal("nothing dropped is still predicted: the test shows nothing")
	}
}

// A chunk that another player's prediction had queued is queued for this
// player at its next change once that job went stale: the other player
// teleported away, and this one still flies towards the chunk.
func TestRequeuesWhatAnotherPlayersStaleJobHeld(t *testing.T) {
	pf := unstarted(nil, Options{}, 10000)
	a, b := uuid.New(), uuid.New()
	posA, posB := mgl64.Vec3{8, 64, 8}, mgl64.Vec3{8, 64, 8 + 16*12}
	move := func(id uuid.UUID, pos *mgl64.Vec3) (changed bool) {
		var path []world.ChunkPos
		if tr := pf.players[id]; tr != nil {
			tr.at = time.Now().Add(-50 * time.Millisecond) // a tick ago
			path = slices.Clone(tr.path)
		}
		pos[0] += 1.5 // flying along +X
		pf.UpdatePlayer(id, *pos, world.Overworld)
		return !slices.Equal(path, pf.players[id].path)
	}
	queuedFor := func(id uuid.UUID) map[world.ChunkPos]bool {
		got := map[world.ChunkPos]bool{}
		for range len(pf.queue) {
			j := <-pf.queue
			if j.id != id {
				pf.queue <- j // left for later
				continue
			}
			got[j.pos] = true
			if id == a {
				pf.do(j) // stale: dropped without a read, and no longer queued
			} else {
				delete(pf.queued, chunkKey{j.pos, j.dim})
			}
		}
		return got
	}
	for range 2 {
		move(a, &posA)
		move(b, &posB)
	}
	// b's first prediction queues what a's queued jobs did not hold;
	// then a teleports, and its jobs go stale.
	held := queuedFor(b)
	pf.UpdatePlayer(a, mgl64.Vec3{9000, 64, 9000}, world.Overworld)
	heldByA := queuedFor(a)
	for !move(b, &posB) {
	}
	again := queuedFor(b)
	tr := pf.players[b]
	shared := 0
	for _, c := range pf.predictAlong(nil, tr.path, tr.nBehind) {
		if !heldByA[c] || held[c] {
			continue
		}
		shared++
		if !again[c] {
			t.Errorf("%v, queued for a and dropped when a teleported, was not queued for b", c)
		}
	}
	if shared == 0 {
		t.Fatal("b's prediction shares nothing with a's: the test shows nothing")
	}
}

// Chunks within another player's view are held by the World already, so
// they are not predicted; the same chunks are when that player is
// elsewhere or in another dimension.
func TestSkipsChunksOtherPlayersSee(t *testing.T) {
	queued := func(otherAt mgl64.Vec3, otherDim world.Dimension) map[world.ChunkPos]bool {
		pf := unstarted(nil, Options{}, 1000)
		pf.UpdatePlayer(uuid.New(), otherAt, otherDim)
		id := uuid.New()
		pf.UpdatePlayer(id, mgl64.Vec3{0, 64, 0}, world.Overworld)
		time.Sleep(20 * time.Millisecond)
		pf.UpdatePlayer(id, mgl64.Vec3{3, 64, 0}, world.Overworld)
		got := map[world.ChunkPos]bool{}
		for len(pf.queue) > 0 {
			got[(<-pf.queue).pos] = true
		}
		return got
	}
	ahead := mgl64.Vec3{16 * 12, 64, 0} // chunk (12, 0), on the path along +X
	alone := queued(mgl64.Vec3{-16 * 100, 64, 0}, world.Overworld)
	elsewhere := queued(ahead, world.Nether)
	shared := queued(ahead, world.Overworld)
	if !alone[world.ChunkPos{12, 0}] || !elsewhere[world.ChunkPos{12, 0}] {
		t.Fatal("the chunk ahead was not predicted")
	}
	r := Options{}.withDefaults().ViewRadius
	for c := range shared {
		if inDragonflyView(world.ChunkPos{12, 0}, c, r) {
			t.Fatalf("predicted %v, within the other player's view", c)
		}
	}
	if len(shared) >= len(alone) {
		t.Fatalf("%d predictions with another player ahead, %d alone", len(shared), len(alone))
	}
}

// A prediction that another player comes to see before a worker takes it
// is dropped: the World loads that chunk for them.
func TestDropsWhatAnotherPlayerCameToSee(t *testing.T) {
	p := strip(t, 16, provider.Config{})
	pf := unstarted(p, Options{ViewRadius: 1}, 100)
	a, b := uuid.New(), uuid.New()
	pf.UpdatePlayer(a, mgl64.Vec3{8, 64, 8}, world.Overworld)
	pf.UpdatePlayer(b, mgl64.Vec3{16 * 100, 64, 8}, world.Overworld)
	j := job{pos: world.ChunkPos{10, 0}, dim: world.Overworld, gen: pf.players[a].gen, id: a}
	pf.do(j)
	if st := pf.Stats(); st.Loaded != 1 {
		t.Fatalf("a prediction no one else sees was not prefetched: %+v", st)
	}
	pf.UpdatePlayer(b, mgl64.Vec3{16*11 + 8, 64, 8}, world.Overworld) // b now sees chunk (10, 0)
	j.pos = world.ChunkPos{11, 1}
	pf.do(j)
	if st := pf.Stats(); st.Loaded != 1 || st.Dropped != 1 {
		t.Fatalf("a chunk another player sees was prefetched: %+v", st)
	}
}

// A prefetch whose read fails is counted as failed, not as loaded.
func TestFailedReadCounted(t *testing.T) {
	var failing atomic.Bool
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		if op == vfstest.OpRead && failing.Load() {
			return errors.New("injected read error")
		}
		return nil
	})
	p := strip(t, 4, provider.Config{FS: fs})
	pf := unstarted(p, Options{}, 10)
	id := uuid.New()
	pf.UpdatePlayer(id, mgl64.Vec3{8, 64, 8}, world.Overworld)
	failing.Store(true)
	pf.do(job{pos: world.ChunkPos{2, 0}, dim: world.Overworld, gen: pf.players[id].gen, id: id})
	failing.Store(false)
	if st := pf.Stats(); st.Failed != 1 || st.Loaded != 0 {
		t.Fatalf("a failed read was not counted as failed: %+v", st)
	}
	if _, err := p.LoadColumn(world.ChunkPos{2, 0}, world.Overworld); err != nil {
		t.Fatalf("the column is fine once reads work again: %v", err)
	}
}

// UpdatePlayer never blocks, and never queues more than the budget.
func TestBudgetAndNonBlocking(t *testing.T) {
	pf := unstarted(nil, Options{Budget: 8, Lookahead: time.Minute}, 8)
	id := uuid.New()
	pf.UpdatePlayer(id, mgl64.Vec3{0, 64, 0}, world.Overworld)
	time.Sleep(10 * time.Millisecond)
	start := time.Now()
	pf.UpdatePlayer(id, mgl64.Vec3{0.3, 64, 0}, world.Overworld) // fast: a minute ahead is hundreds of chunks
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Fatalf("UpdatePlayer took %v", d)
	}
	st := pf.Stats()
	if st.Predicted != 8 || st.Dropped == 0 || len(pf.queue) != 8 {
		t.Fatalf("budget not kept: %+v, queue %d", st, len(pf.queue))
	}
}

// areaCachedAfterLoads loads the 49 columns of strip x 5 to 11 into p's
// cache, then the nine around (2, 0), and returns how many of those nine
// were still cached: in a cache of a few columns, those that were pinned.
func areaCachedAfterLoads(p *provider.DB) int64 {
	for x := int32(5); x < 12; x++ {
		for z := int32(-3); z <= 3; z++ {
			p.LoadColumn(world.ChunkPos{x, z}, world.Overworld)
		}
	}
	time.Sleep(50 * time.Millisecond) // let the snapshot worker fill the cache
	h0, _ := p.CacheStats()
	for x := int32(1); x <= 3; x++ {
		for z := int32(-1); z <= 1; z++ {
			p.LoadColumn(world.ChunkPos{x, z}, world.Overworld)
		}
	}
	h1, _ := p.CacheStats()
	return h1 - h0
}

// Pinned columns are never evicted, however much else is loaded.
func TestPinnedNeverEvicted(t *testing.T) {
	p := strip(t, 12, provider.Config{ColumnCacheBytes: 400 << 10}) // a few columns' worth
	pf := New(p, Options{})
	defer pf.Close()
	if err := pf.PinArea(world.ChunkPos{2, 0}, 1, world.Overworld); err != nil {
		t.Fatal(err)
	}
	if n := areaCachedAfterLoads(p); n != 9 {
		t.Fatalf("%d of 9 pinned columns were still cached", n)
	}
	pf.UnpinArea(world.ChunkPos{2, 0}, 1, world.Overworld)
}

// A PinArea that meets a column it cannot read pins nothing: the columns
// it pinned before it are released, and are evicted like any other.
func TestFailedPinAreaPinsNothing(t *testing.T) {
	var reads, failAfter atomic.Int64
	failAfter.Store(-1)
	fs := vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		if op == vfstest.OpRead && filepath.Base(name) == "chunks.dat" {
			if n := failAfter.Load(); n >= 0 && reads.Add(1) > n {
				return errors.New("injected: read fails")
			}
		}
		return nil
	})
	p := strip(t, 12, provider.Config{FS: fs, ColumnCacheBytes: 400 << 10}) // a few columns' worth
	pf := New(p, Options{})
	defer pf.Close()
	failAfter.Store(4) // the fifth of the nine columns cannot be read
	if err := pf.PinArea(world.ChunkPos{2, 0}, 1, world.Overworld); err == nil {
		t.Fatal("PinArea over an unreadable column succeeded")
	}
	failAfter.Store(-1)
	if len(pf.pins) != 0 {
		t.Fatalf("pins left: %v", pf.pins)
	}
	if n := areaCachedAfterLoads(p); n != 0 {
		t.Fatalf("%d of the area's columns stayed cached: still pinned", n)
	}
}

// Many players at once, then Close while they keep moving. Run with -race.
func TestCloseUnderLoad(t *testing.T) {
	p := strip(t, 10, provider.Config{})
	pf := New(p, Options{Workers: 3})
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := uuid.New()
			pos := mgl64.Vec3{float64(i), 64, 0}
			for j := 0; j < 200; j++ {
				pos[0] += 0.7
				pos[2] += float64(i%3) - 1
				pf.UpdatePlayer(id, pos, world.Overworld)
				time.Sleep(time.Millisecond)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	if err := pf.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := pf.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}

// A PinArea after Close pins nothing: Close released the pins already, so
// a pin taken then would never be released.
func TestPinAreaAfterClose(t *testing.T) {
	p := strip(t, 12, provider.Config{ColumnCacheBytes: 400 << 10}) // a few columns' worth
	pf := New(p, Options{})
	if err := pf.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pf.PinArea(world.ChunkPos{2, 0}, 1, world.Overworld); !errors.Is(err, provider.ErrClosed) {
		t.Fatalf("PinArea after Close: %v, want ErrClosed", err)
	}
	if n := areaCachedAfterLoads(p); n != 0 {
		t.Fatalf("%d of the area's columns stayed cached: pinned after Close", n)
	}
}

// A player who quit is forgotten, and what was predicted for them is
// dropped rather than loaded.
func TestRemovedPlayerForgotten(t *testing.T) {
	p := strip(t, 4, provider.Config{})
	pf := unstarted(p, Options{}, 10)
	a, b := uuid.New(), uuid.New()
	pf.UpdatePlayer(a, mgl64.Vec3{8, 64, 8}, world.Overworld)
	pf.UpdatePlayer(b, mgl64.Vec3{16 * 100, 64, 8}, world.Overworld)
	if st := pf.Stats(); st.Players != 2 {
		t.Fatalf("%d players followed, want 2", st.Players)
	}
	j := job{pos: world.ChunkPos{2, 0}, dim: world.Overworld, gen: pf.players[a].gen, id: a}
	pf.RemovePlayer(a)
	pf.do(j)
	if st := pf.Stats(); st.Players != 1 || st.Loaded != 0 || st.Dropped != 1 {
		t.Fatalf("after the player quit: %+v, want 1 player followed and the prediction dropped", st)
	}
}

// inDragonflyView is the rule by which Dragonfly's world.Loader loads
// chunk c for a player in chunk at: their distance, rounded to the nearest
// whole, at most r.
func inDragonflyView(at, c world.ChunkPos, r int) bool {
	dx, dz := float64(c[0]-at[0]), float64(c[1]-at[1])
	return int(math.Round(math.Sqrt(dx*dx+dz*dz))) <= r
}

// The prefetcher's view is the World's: sees and halfWidth agree with
// Dragonfly's rule at every radius a server may allow (and beyond).
func TestSeesIsDragonflysView(t *testing.T) {
	for r := int32(0); r <= 64; r++ {
		for dx := -r - 2; dx <= r+2; dx++ {
			w := halfWidth(dx, r)
			for dz := -r - 2; dz <= r+2; dz++ {
				c := world.ChunkPos{100 + dx, -50 + dz}
				want := inDragonflyView(world.ChunkPos{100, -50}, c, int(r))
				if got := sees(world.ChunkPos{100, -50}, c, r); got != want {
					t.Fatalf("radius %d: sees %v from (100, -50) = %v, Dragonfly loads it: %v", r, c, got, want)
				}
				if got := dz >= -w && dz <= w; got != want {
					t.Fatalf("radius %d: halfWidth(%d) = %d, but Dragonfly loads (%d, %d): %v", r, dx, w, dx, dz, want)
				}
			}
		}
	}
}

// predict is what UpdatePlayer queues for a player at pos moving at vel,
// who was in the chunks behind (oldest first) before: the chunks that will
// come within the view radius along the path ahead and are not within it
// now, nor were from the chunks behind, nearest first.
func (pf *Prefetcher) predict(pos, vel mgl64.Vec3, behind []world.ChunkPos) []world.ChunkPos {
	return pf.predictAlong(nil, pf.path(nil, pos, vel, behind), len(behind))
}

// predictNaive is what predict computes, the plain way: every chunk within
// the view of every step, less those seen already and those in view now or
// from the chunks behind.
func predictNaive(pf *Prefetcher, pos, vel mgl64.Vec3, behind []world.ChunkPos) []world.ChunkPos {
	speed := math.Hypot(vel[0], vel[2])
	if speed < 0.5 {
		return nil
	}
	dir := mgl64.Vec3{vel[0] / speed, 0, vel[2] / speed}
	dist := speed * pf.opts.Lookahead.Seconds()
	cur := chunkOf(pos)
	r := int32(pf.opts.ViewRadius)
	seen := map[world.ChunkPos]bool{}
	var out []world.ChunkPos
	for d := 8.0; d <= dist+8; d += 8 {
		f := chunkOf(pos.Add(dir.Mul(d)))
		for dx := -r; dx <= r; dx++ {
			for dz := -r; dz <= r; dz++ {
				q := world.ChunkPos{f[0] + dx, f[1] + dz}
				if sees(f, q, r) && !seen[q] && !sees(cur, q, r) && !slices.ContainsFunc(behind, func(b world.ChunkPos) bool { return inDragonflyView(b, q, int(r)) }) {
					seen[q] = true
					out = append(out, q)
				}
			}
		}
	}
	return out
}

// predict lists exactly the chunks, in exactly the order, that the plain
// way lists, for players anywhere, moving in any direction at any speed,
// with any view radius.
func TestPredictMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20_000 {
		pf := &Prefetcher{opts: Options{ViewRadius: 1 + rng.IntN(20), Lookahead: time.Duration(rng.IntN(6000)) * time.Millisecond}.withDefaults()}
		pos := mgl64.Vec3{rng.Float64()*4000 - 2000, 64, rng.Float64()*4000 - 2000}
		speed := rng.Float64() * 40
		angle := rng.Float64() * 2 * math.Pi
		if i%8 == 0 { // along an axis or a diagonal, where chunk borders are met at once
			angle = float64(rng.IntN(8)) * math.Pi / 4
		}
		vel := mgl64.Vec3{speed * math.Cos(angle), 0, speed * math.Sin(angle)}
		var behind []world.ChunkPos
		for range rng.IntN(behindChunks + 1) {
			c := chunkOf(pos)
			behind = append(behind, world.ChunkPos{c[0] + int32(rng.IntN(7)) - 3, c[1] + int32(rng.IntN(7)) - 3})
		}
		got, want := pf.predict(pos, vel, behind), predictNaive(pf, pos, vel, behind)
		if !slices.Equal(got, want) {
			t.Fatalf("radius %d, at %v moving %v, behind %v: predict gives %d chunks, the plain way %d\n%v\n%v",
				pf.opts.ViewRadius, pos, vel, behind, len(got), len(want), got, want)
		}
	}
}
