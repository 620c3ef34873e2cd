package restore

import (
	"context"
	"fmt"
	"time"

	"github.com/df-mc/dragonfly/server/world"
)

// Config holds the optional parameters of a restore. The zero Config gives
// the defaults documented on each field; Start takes it by value. A plain
// value: safe to copy and to share between goroutines that only read it.
type Config struct {
	// TickBudget is the longest time the job takes from one tick of the
	// World. A slice stops at the first check of the clock past it, so it
	// may overshoot by one unit of work (a sub-chunk, a column's entities,
	// one chunk's light). Default 5 ms.
	TickBudget time.Duration
	// TickInterval is the time between the job's slices: one a tick.
	// Default 50 ms, Dragonfly's tick.
	TickInterval time.Duration
	// Prefetch is how many source columns the job loads ahead, off the
	// World's tick, before a slice. Default 1024 (a 32×32-chunk area in one
	// go); an area no larger is compared in one slice when little differs.
	Prefetch int
	// Context stops the job when done; Job.Err then returns its error.
	// Default context.Background().
	Context context.Context
}

// Area is the rectangle of chunk columns to restore, Min and Max included,
// in one dimension. A plain value, safe to copy and to use from any
// goroutine.
type Area struct {
	Dim      world.Dimension
	Min, Max world.ChunkPos
}

// Columns returns the number of columns in the area.
func (a Area) Columns() int {
	return int(a.Max[0]-a.Min[0]+1) * int(a.Max[1]-a.Min[1]+1)
}

// Contains reports whether pos lies in the area.
func (a Area) Contains(pos world.ChunkPos) bool {
	return pos[0] >= a.Min[0] && pos[0] <= a.Max[0] && pos[1] >= a.Min[1] && pos[1] <= a.Max[1]
}

func (a Area) validate() error {
	if a.Dim == nil {
		return fmt.Errorf("%w: no dimension", ErrArea)
	}
	if a.Min[0] > a.Max[0] || a.Min[1] > a.Max[1] {
		return fmt.Errorf("%w: min %v beyond max %v", ErrArea, a.Min, a.Max)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.TickBudget <= 0 {
		c.TickBudget = 5 * time.Millisecond
	}
	if c.TickInterval <= 0 {
		c.TickInterval = time.Second / 20
	}
	if c.Prefetch <= 0 {
		c.Prefetch = 1024
	}
	if c.Context == nil {
		c.Context = context.Background()
	}
	return c
}

// Start starts restoring area of w from the columns from holds, and
// returns at once. w must be a World of area.Dim, running (not closed); from
// is any world.Provider whose columns decode with w's block registry (as a
// provider does by default: both use world.DefaultBlockRegistry). from must
// stay open until the job is done; the job never writes to it.
func (c Config) Start(w *world.World, from world.Provider, area Area) (*Job, error) {
	if err := area.validate(); err != nil {
		return nil, err
	}
	if w == nil || from == nil {
		return nil, fmt.Errorf("%w: nil world or provider", ErrArea)
	}
	if w.Dimension() != area.Dim {
		return nil, fmt.Errorf("%w: area in %v, world is %v", ErrArea, area.Dim, w.Dimension())
	}
	c = c.withDefaults()
	j := newJob(c, w, from, area)
	go j.run()
	return j, nil
}
