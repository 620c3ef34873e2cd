// Package progress draws the progress bars of Blaze's command-line tools.
package progress

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Bar is a progress bar over a count of columns. A nil *Bar draws nothing,
// so callers need not check. Not safe for concurrent use.
type Bar struct{ b *progressbar.ProgressBar }

// New returns a bar of n columns titled what, drawn on w (columns done,
// columns a second, time left, redrawn at most ten times a second); nil
// when w is nil. With n < 0 the total is unknown (a segmented world's,
// whose regions are counted one at a time): the bar shows the count, the
// rate and the time elapsed.
func New(w io.Writer, n int, what string) *Bar {
	if w == nil {
		return nil
	}
	n = max(n, -1)
	return &Bar{progressbar.NewOptions(n,
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
	if b != nil {
		b.b.Add(1)
	}
}

// Finish draws the bar complete and ends its line.
func (b *Bar) Finish() {
	if b != nil {
		b.b.Finish()
	}
}
