package restore

import "time"

// sliceClock is one slice's budget (Config.TickBudget from its start).
// The clock is read between units of work; over reports whether the slice
// is past its deadline once it has done one (did): every slice does at
// least one, so that a job advances whatever its budget and exceeds it by
// at most one unit (doc.go). The zero sliceClock has no deadline: the
// commits made as a job stops run to the end.
type sliceClock struct {
	deadline time.Time
	worked   bool
}

// over reports whether the slice should stop before its next unit.
func (c *sliceClock) over() bool { return c.worked && c.past() }

// past reports whether the deadline has passed, work done or not: for
// what a slice may skip before its first unit (asking for chunks ahead).
func (c *sliceClock) past() bool {
	return !c.deadline.IsZero() && !time.Now().Before(c.deadline)
}

// did records a unit of work done.
func (c *sliceClock) did() { c.worked = true }
