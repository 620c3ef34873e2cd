package restore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
)

// Stats is a job's progress. The counts grow as the job goes; Ticks and
// the times cover the slices run so far. Job.Stats returns a copy that
// nothing else refers to (its slices included), safe to use from any
// goroutine.
type Stats struct {
	// Columns is the number of columns in the area.
	Columns int
	// ColumnsCompared counts the columns compared with the source so far.
	ColumnsCompared int
	// ColumnsChanged counts the columns where anything was put back.
	ColumnsChanged int
	// ColumnsMissing counts the columns the source does not hold: they are
	// left as the World has them.
	ColumnsMissing int
	// SubChunksChanged counts the sub-chunks where a block was set.
	SubChunksChanged int
	// BlocksSet counts the blocks set, a block in two layers twice.
	BlocksSet int
	// BiomesSet counts the biome cells set.
	BiomesSet int
	// BlockEntitiesSet counts the block entities put back or removed.
	BlockEntitiesSet int
	// EntitiesRemoved and EntitiesAdded count the entities replaced;
	// EntitiesSkipped the source's entities of a type the World does not
	// know, which it would drop on load too.
	EntitiesRemoved, EntitiesAdded, EntitiesSkipped int
	// ChunksRelit counts the chunks whose light was computed again and put
	// in the World, and LightSpreads the 3×3 windows light was spread over
	// (off the tick).
	ChunksRelit, LightSpreads int
	// Ticks is the number of slices (one a tick) the job ran.
	Ticks int
	// MaxTick is the longest time the job took from one tick.
	MaxTick time.Duration
	// TickTimes holds the time the job took from each tick, in order
	// (wall-clock time: what the tick waited for).
	TickTimes []time.Duration
	// TickCPU holds the CPU time of each slice (on Linux; nil elsewhere):
	// on a busy machine TickTimes also counts the time the slice's thread
	// was not running.
	TickCPU []time.Duration
	// Elapsed is the time from Start to the end of the last slice.
	Elapsed time.Duration
}

// Job is a running restore. It is safe for concurrent use.
type Job struct {
	cfg    Config
	w      *world.World
	from   world.Provider
	area   Area
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	start  time.Time

	mu struct {
		sync.Mutex
		stats Stats
		err   error
	}

	// The rest is touched only by the job's goroutine and by the slices it
	// runs one at a time on the World, each waited for: one owner at a time.
	st        Stats
	positions []world.ChunkPos
	sources   []source // sources[i] for positions[i], once loaded
	loadedTo  int      // sources[:loadedTo] are loaded
	next      int      // positions[:next] are done
	requested int      // positions[:requested] have a loader
	col       columnState
	loaders   map[world.ChunkPos]*world.Loader
	relight   map[world.ChunkPos]bool
	kept      map[world.ChunkPos]*chunk.Column // the area's source columns, restored
	light     *lightPlan
	mask      *mask                   // what of the area a paste covers; nil: whole columns
	changed   map[world.ChunkPos]bool // columns counted in ColumnsChanged
	// biomeChecks are the columns whose biomes a slice exchanged, to
	// compare off the tick; biomeCommits those found to differ, to commit.
	biomeChecks  []biomeCheck
	biomeCommits []world.ChunkPos
	// beChecks are block entities the World held with the source's block
	// at their place, to encode and compare off the tick; beCommits those
	// found to differ, to compare again and put back on the tick.
	beChecks  []beCheck
	beCommits []beCheck
	// blockChecks are the columns whose block storages a slice exchanged,
	// to compare off the tick; blockCommits what they found, to commit.
	blockChecks  []blockCheck
	blockCommits []blockCommit
	finished     bool
}

// source is one column of the source provider; nil col with missing set
// means the provider does not hold it.
type source struct {
	col     *chunk.Column
	biomes  []byte       // the column's biomes, encoded off the tick
	fresh   *chunk.Chunk // the biomes, decoded off the tick, to give the World
	loaded  map[cube.Pos]loadedNBT
	layers  [][]*chunk.PalettedStorage // copies of the block storages, to give the World
	missing bool
}

func newJob(c Config, w *world.World, from world.Provider, area Area) *Job {
	ctx, cancel := context.WithCancelCause(c.Context)
	j := &Job{cfg: c, w: w, from: from, area: area, ctx: ctx, cancel: cancel,
		done: make(chan struct{}), start: time.Now(),
		loaders: map[world.ChunkPos]*world.Loader{}, relight: map[world.ChunkPos]bool{},
		kept: map[world.ChunkPos]*chunk.Column{}, changed: map[world.ChunkPos]bool{}}
	for x := area.Min[0]; x <= area.Max[0]; x++ {
		for z := area.Min[1]; z <= area.Max[1]; z++ {
			j.positions = append(j.positions, world.ChunkPos{x, z})
		}
	}
	j.sources = make([]source, len(j.positions))
	j.st.Columns = len(j.positions)
	j.mu.stats = j.st
	return j
}

// Done is closed when the job has finished, failed or been cancelled.
func (j *Job) Done() <-chan struct{} { return j.done }

// Err returns the job's error once Done is closed (nil while it runs):
// ErrCancelled after Cancel, the context's error when Config.Context ended
// it, or what stopped it (a source column that failed to load, the World
// closing).
func (j *Job) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.mu.err
}

// Stats returns the job's progress so far.
func (j *Job) Stats() Stats {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.mu.stats
	s.TickTimes = slices.Clone(s.TickTimes)
	s.TickCPU = slices.Clone(s.TickCPU)
	return s
}

// Cancel stops the job before its next slice. What earlier slices put back
// stays; the light of the columns changed so far is not recomputed.
func (j *Job) Cancel() { j.cancel(ErrCancelled) }

func (j *Job) publish() {
	j.mu.Lock()
	j.mu.stats = j.st
	j.mu.stats.TickTimes = slices.Clone(j.st.TickTimes)
	j.mu.stats.TickCPU = slices.Clone(j.st.TickCPU)
	j.mu.Unlock()
}

func (j *Job) run() {
	err := j.loop()
	if len(j.loaders) > 0 {
		// Commit the biomes exchanged so far and let go of the chunks,
		// even when cancelled; a closed World has let go of them already.
		j.checkDeferred()
		task := j.w.Do(func(tx *world.Tx) {
			j.commitDeferred(tx, &sliceClock{})
			j.release(tx)
		})
		<-task.Done()
	}
	j.publish()
	j.mu.Lock()
	j.mu.err = err
	j.mu.Unlock()
	j.cancel(nil)
	close(j.done)
}

func (j *Job) loop() error {
	tick := time.NewTicker(j.cfg.TickInterval)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-tick.C:
			case <-j.ctx.Done():
				return context.Cause(j.ctx)
			}
		}
		if err := j.prefetch(); err != nil {
			return err
		}
		if j.ctx.Err() != nil {
			return context.Cause(j.ctx)
		}
		task := j.w.Do(j.slice)
		<-task.Done()
		if err := task.Err(); err != nil {
			return fmt.Errorf("restore: slice: %w", err)
		}
		j.publish()
		if j.finished {
			return nil
		}
		j.checkDeferred()
		if j.light != nil && j.light.stage == lightCompute {
			j.light.compute(j)
		}
	}
}

// prefetch loads source columns until Prefetch of them wait or all are
// loaded, on the job's goroutine: a slow source never stalls the tick.
func (j *Job) prefetch() error {
	for j.loadedTo < len(j.positions) && j.loadedTo-j.next < j.cfg.Prefetch {
		if j.ctx.Err() != nil {
			return nil
		}
		pos := j.positions[j.loadedTo]
		col, err := j.from.LoadColumn(pos, j.area.Dim)
		switch {
		case errors.Is(err, leveldb.ErrNotFound):
			j.sources[j.loadedTo] = source{missing: true}
		case err != nil:
			return fmt.Errorf("restore: load source column %v (%v): %w", pos, j.area.Dim, err)
		default:
			if col.Chunk.Range() != j.w.Range() {
				return fmt.Errorf("restore: source column %v (%v): %w: %v against %v", pos, j.area.Dim, ErrRange, col.Chunk.Range(), j.w.Range())
			}
			s := source{col: col, biomes: chunk.EncodeBiomes(col.Chunk, chunk.DiskEncoding), loaded: loadBlockEntities(col, j.w.BlockRegistry())}
			if j.mask == nil {
				s.layers = cloneLayers(col.Chunk)
				if s.fresh, err = prepareBiomes(j.w.BlockRegistry(), j.w.Range(), s.biomes); err != nil {
					return fmt.Errorf("restore: load source column %v (%v): %w", pos, j.area.Dim, err)
				}
			}
			j.sources[j.loadedTo] = s
		}
		j.loadedTo++
	}
	return nil
}

// slice is one tick's work, run as a World transaction.
func (j *Job) slice(tx *world.Tx) {
	// Pinned to its thread for the slice, the goroutine's CPU time is the
	// thread's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, cpuOK := threadCPU()
	t0 := time.Now()
	j.step(tx, &sliceClock{deadline: t0.Add(j.cfg.TickBudget)})
	d := time.Since(t0)
	if c1, ok := threadCPU(); ok && cpuOK {
		j.st.TickCPU = append(j.st.TickCPU, c1-c0)
	}
	j.st.Ticks++
	j.st.TickTimes = append(j.st.TickTimes, d)
	j.st.MaxTick = max(j.st.MaxTick, d)
	j.st.Elapsed = time.Since(j.start)
}

// requestWindow is how many columns ahead the job asks the World for.
const requestWindow = 64

func (j *Job) step(tx *world.Tx, clock *sliceClock) {
	if !j.commitDeferred(tx, clock) {
		return
	}
	for j.next < len(j.positions) {
		// On a ticking World a request is cheap (a chunk worker loads the
		// chunk); on a Synchronous one it loads the chunk there and then.
		for j.requested < min(j.loadedTo, j.next+requestWindow) && (j.requested == j.next || !clock.past()) {
			if !j.sources[j.requested].missing {
				j.acquire(tx, j.positions[j.requested])
			}
			j.requested++
		}
		if j.next >= j.loadedTo || clock.over() {
			return
		}
		pos, src := j.positions[j.next], j.sources[j.next]
		if src.missing {
			j.st.ColumnsMissing++
			j.next++
			continue
		}
		live, ok := j.loaders[pos].Chunk(pos)
		if !ok {
			// A chunk worker is loading it; it is ready in a later slice.
			// Ask again: a request the World could not schedule, or a
			// load that failed, is only retried when asked.
			j.loaders[pos].Load(tx, 1)
			return
		}
		if !j.column(tx, pos, live, src, clock) {
			return
		}
		clock.did()
		if j.mask == nil {
			// The World's column now holds the source's blocks: a copy
			// for the light. (A paste's source holds only the paste.)
			j.kept[pos] = src.col
		}
		j.sources[j.next] = source{}
		j.next++
	}
	// The last checks deferred: made here when the slice has the time for
	// all of them, judged by the first (a small area then takes one tick),
	// otherwise off the tick before the next slice.
	if j.pending() > 0 && !clock.over() {
		t := time.Now()
		j.checkNext()
		clock.did()
		if now := time.Now(); now.Add(now.Sub(t) * time.Duration(j.pending())).Before(clock.deadline) {
			j.checkDeferred()
		}
	}
	if j.pending() > 0 || !j.commitDeferred(tx, clock) {
		return
	}
	if j.light == nil {
		j.light = j.planLight(tx)
	}
	if !j.light.tick(j, tx, clock) {
		return
	}
	if !clock.over() {
		j.release(tx)
		j.finished = true
	}
}

// acquire puts a radius-0 loader on pos, which loads the chunk through
// the World (at once if the World holds it) and hands out its Column.
func (j *Job) acquire(tx *world.Tx, pos world.ChunkPos) *world.Loader {
	if l, ok := j.loaders[pos]; ok {
		return l
	}
	l := world.NewLoader(0, j.w, world.NopViewer{})
	l.Move(tx, centre(pos))
	l.Load(tx, 1)
	j.loaders[pos] = l
	return l
}

func (j *Job) release(tx *world.Tx) {
	for pos, l := range j.loaders {
		l.Close(tx)
		delete(j.loaders, pos)
	}
}
