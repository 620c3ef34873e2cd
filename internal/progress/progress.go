package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar shows the progress of one phase over a count of columns: a bar on a
// terminal, else a line when the phase starts, one every LineEvery while
// it goes on and one when it ends. A nil *Bar shows nothing, so callers
// need not check. Not safe for concurrent use.
type Bar struct {
	b *progressbar.ProgressBar // on a terminal

	w           io.Writer // where it is shown
	title, what string    // as New named it, and as Describe retitled it
	n, done     int
	start, last time.Time
}

// LineEvery is how often a phase that goes on is reported by a line when
// the output is not a terminal. Tests shorten it; nothing else changes it.
var LineEvery = 10 * time.Second

// terminal reports whether w is a terminal; tests replace it.
var terminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// New returns a bar of n columns titled what (converting, verifying), shown
// on w: on a terminal, columns done, columns a second and time left,
// redrawn at most ten times a second. Nil when w is nil. With n < 0 the
// total is unknown (a segmented world's, whose regions are counted one at
// a time): the bar shows the count, the rate and the time elapsed.
func New(w io.Writer, n int, what string) *Bar {
	if w == nil {
		return nil
	}
	n = max(n, -1)
	if !terminal(w) {
		b := &Bar{w: w, title: what, what: what, n: n, start: time.Now()}
		b.last = b.start
		if n >= 0 {
			fmt.Fprintf(w, "%s: %d columns\n", what, n)
		} else {
			fmt.Fprintf(w, "%s\n", what)
		}
		return b
	}
	return &Bar{w: w, b: progressbar.NewOptions(n,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("columns"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)}
}

// Add counts one more column done.
func (b *Bar) Add() {
	switch {
	case b == nil:
	case b.b != nil:
		b.b.Add(1)
	default:
		b.done++
		if now := time.Now(); now.Sub(b.last) >= LineEvery {
			b.last = now
			if b.n >= 0 {
				fmt.Fprintf(b.w, "%s: %d of %d columns\n", b.what, b.done, b.n)
			} else {
				fmt.Fprintf(b.w, "%s: %d columns\n", b.what, b.done)
			}
		}
	}
}

// Describe retitles the bar, for a phase that goes on counting on the
// same bar (verifying a region after copying it). Elsewhere than on a
// terminal the lines that report the count say it, and the last line
// names the bar as New did: a world of many regions logs no line for
// each.
func (b *Bar) Describe(what string) {
	switch {
	case b == nil:
	case b.b != nil:
		b.b.Describe(what)
	default:
		b.what = what
	}
}

// Start shows a phase that counts no columns while the bar waits (a
// region's log checked between its columns counted on a world's bar): on
// a terminal the bar is taken off its line for the phase's spinner, and
// drawn again by the next Add. See Step.
func (b *Bar) Start(what string) *Step {
	if b == nil {
		return nil
	}
	if b.b != nil {
		b.b.Clear()
	}
	return Start(b.w, what)
}

// Finish draws the bar complete and ends its line.
func (b *Bar) Finish() {
	switch {
	case b == nil:
	case b.b != nil:
		b.b.Finish()
	default:
		fmt.Fprintf(b.w, "%s: %d columns done in %v\n", b.title, b.done, time.Since(b.start).Round(time.Millisecond))
	}
}

// Step shows a phase that counts no columns (checking a log, copying the
// source, compacting): on a terminal a spinner with the time it has taken,
// replaced by the last line when it ends; elsewhere a line when it starts,
// one every LineEvery while it goes on, and the last line, which says how
// long it took. A nil *Step shows
// nothing. Done must be called from the goroutine that called Start; no
// other output should go to the same writer in between.
type Step struct {
	b *progressbar.ProgressBar // on a terminal

	w     io.Writer // elsewhere: lines
	what  string
	start time.Time
	stop  chan struct{}
	ended chan struct{}
}

// Start shows the phase what on w (nil: nothing) until Done.
func Start(w io.Writer, what string) *Step {
	if w == nil {
		return nil
	}
	s := &Step{w: w, what: what, start: time.Now()}
	if terminal(w) {
		s.b = progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionClearOnFinish(),
		)
		s.b.RenderBlank() // starts the spinner, which redraws itself
		return s
	}
	fmt.Fprintf(w, "%s\n", what)
	s.stop, s.ended = make(chan struct{}), make(chan struct{})
	every := LineEvery
	go func() {
		defer close(s.ended)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				fmt.Fprintf(w, "%s: going on, %v so far\n", what, time.Since(s.start).Round(time.Second))
			}
		}
	}()
	return s
}

// Done ends the phase: its last line says how long it took.
func (s *Step) Done() {
	switch {
	case s == nil:
	case s.b != nil:
		s.b.Finish()
		s.b.RenderBlank() // clears it now, not at the spinner's next turn
		fmt.Fprintf(s.w, "%s: done in %v\n", s.what, time.Since(s.start).Round(time.Millisecond))
	default:
		close(s.stop)
		<-s.ended
		fmt.Fprintf(s.w, "%s: done in %v\n", s.what, time.Since(s.start).Round(time.Millisecond))
	}
}
