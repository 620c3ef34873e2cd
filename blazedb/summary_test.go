package blazedb

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// syncBuffer is a bytes.Buffer for a logger that background goroutines
// may also write to.
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

// logLine returns the one line of log that holds msg, or fails.
func logLine(t *testing.T, log, msg string) string {
	t.Helper()
	var found []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, msg) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d lines with %q in the log:\n%s", len(found), msg, log)
	}
	return found[0]
}

// Issue 38 item 7: a compaction is logged at Info with how long it took and
// the log's size before and after, and Close logs a summary of the
// database at Info (keys, bytes, compactions, appends) when the session
// wrote; a session that only read logs its summary at Debug.
func TestCompactionAndCloseAreLogged(t *testing.T) {
	fs := vfstest.NewMem()
	var buf syncBuffer
	info := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	db := open(t, fs, "/db", Options{Logger: info, DisableAutoCompaction: true, History: -1}) // compaction drops what it replaced
	v := bytes.Repeat([]byte("stone "), 200)
	for i := range 20 {
		for range 3 { // two of every three versions are garbage
			if err := db.Put(Key{X: int32(i)}, append(v, byte(i), byte(len(v)))); err != nil {
				t.Fatal(err)
			}
			v = append(v, 'x')
		}
	}
	if err := db.PutNamed("player", []byte("spawn")); err != nil {
		t.Fatal(err)
	}
	before := db.Stats().LogBytes
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	after := db.Stats().LogBytes
	if after >= before {
		t.Fatalf("compaction: %d bytes before, %d after", before, after)
	}
	line := logLine(t, buf.String(), "blazedb: compacted chunks.dat")
	for _, want := range []string{"level=INFO", "dir=/db", "generation=", "took=",
		"bytes_before=" + itoa(before), "bytes_after=" + itoa(after), "keys=21"} {
		if !strings.Contains(line, want) {
			t.Errorf("compaction line lacks %q: %s", want, line)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	line = logLine(t, buf.String(), "blazedb: closed")
	for _, want := range []string{"level=INFO", "dir=/db", "chunk_keys=20", "named_keys=1", "log_bytes=", "live_bytes=",
		"compactions=1", "appends=61", "append_bytes="} {
		if !strings.Contains(line, want) {
			t.Errorf("close line lacks %q: %s", want, line)
		}
	}

	// A session that only reads: its summary is below Info.
	buf = syncBuffer{}
	db = open(t, fs, "/db", Options{Logger: info})
	if _, err := db.Get(Key{X: 3}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if log := buf.String(); strings.Contains(log, "blazedb: closed") {
		t.Fatalf("a session that wrote nothing logged its close at Info:\n%s", log)
	}
	debug := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	db = open(t, fs, "/db", Options{Logger: debug})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if line := logLine(t, buf.String(), "blazedb: closed"); !strings.Contains(line, "level=DEBUG") || !strings.Contains(line, "chunk_keys=20") {
		t.Fatalf("read-only session's summary: %s", line)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
