package progress

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// Issue 38 item 5: elsewhere than on a terminal, progress is plain lines,
// with no carriage-return frames; on a terminal it is a bar redrawn in
// place.
func TestLinesUnlessTerminal(t *testing.T) {
	var b bytes.Buffer
	bar := New(&b, 3, "verifying")
	for range 3 {
		bar.Add()
	}
	bar.Describe("verifying r.0.0")
	bar.Finish()
	out := b.String()
	if strings.Contains(out, "\r") || !strings.Contains(out, "verifying: 3 columns\n") || strings.Contains(out, "r.0.0") ||
		!strings.Contains(out, "verifying: 3 columns done in ") || strings.Count(out, "\n") != 2 {
		t.Fatalf("not a terminal: %q", out)
	}

	old := terminal
	terminal = func(io.Writer) bool { return true }
	defer func() { terminal = old }()
	b.Reset()
	bar = New(&b, 3, "verifying")
	for range 3 {
		bar.Add()
	}
	bar.Finish()
	if out := b.String(); !strings.Contains(out, "\r") || !strings.Contains(out, "verifying") {
		t.Fatalf("a terminal: %q", out)
	}
	New(nil, 3, "nothing").Add() // a nil bar shows nothing
}
