package progress

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
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

// Issue 38 item 5: a phase that counts no columns (an engine's check of
// its log, a compaction, copying the source) shows progress too: plain
// lines elsewhere than on a terminal (when it starts, while it goes on,
// when it ends, with no carriage-return frames), a spinner replaced by
// the last line on a terminal.
func TestStepLinesUnlessTerminal(t *testing.T) {
	old := LineEvery
	LineEvery = 20 * time.Millisecond
	defer func() { LineEvery = old }()
	var b bytes.Buffer
	s := Start(&b, "checking the log of w")
	time.Sleep(70 * time.Millisecond)
	s.Done()
	out := b.String()
	if strings.Contains(out, "\r") || !strings.HasPrefix(out, "checking the log of w\n") ||
		!strings.Contains(out, "checking the log of w: going on, ") || !strings.Contains(out, "checking the log of w: done in ") ||
		!strings.HasSuffix(out, "\n") {
		t.Fatalf("not a terminal: %q", out)
	}
	n := strings.Count(out, "\n")
	time.Sleep(50 * time.Millisecond)
	if strings.Count(b.String(), "\n") != n {
		t.Fatalf("lines after Done: %q", b.String())
	}

	oldTerm := terminal
	terminal = func(io.Writer) bool { return true }
	defer func() { terminal = oldTerm }()
	var tb syncBuffer
	s = Start(&tb, "compacting w")
	time.Sleep(250 * time.Millisecond)
	s.Done()
	out = tb.String()
	last := out[strings.LastIndex(out, "\r")+1:]
	if !strings.Contains(out, "compacting w") || !strings.HasPrefix(last, "compacting w: done in ") ||
		!strings.HasSuffix(last, "\n") || strings.Count(out, "\n") != 1 {
		t.Fatalf("a terminal: %q", out)
	}
	time.Sleep(250 * time.Millisecond)
	if tb.String() != out {
		t.Fatalf("the spinner drew after Done: %q", tb.String())
	}
	Start(nil, "nothing").Done() // a nil step shows nothing
}

// syncBuffer is a bytes.Buffer safe for the spinner's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
