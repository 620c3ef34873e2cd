package replica

import (
	"bytes"
	"testing"
	"time"
)

// Issue 39: the manifest's decoder never panics on bad bytes, and what it
// accepts encodes and decodes again to the same manifest.
func FuzzDecodeManifest(f *testing.F) {
	m := &manifest{Signature: manifestSignature, Version: manifestVersion, Epoch: 2, Owner: "host:/w", Renewed: time.Unix(5, 6).UTC(), Lease: time.Second,
		Epochs: []epochInfo{{1, "a", time.Unix(1, 0).UTC()}, {2, "host:/w", time.Unix(5, 6).UTC()}}}
	f.Add(m.encode())
	f.Add([]byte(`{"signature":"blaze-replica","version":2}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeManifest(b)
		if err != nil {
			return
		}
		again, err := decodeManifest(m.encode())
		if err != nil {
			t.Fatalf("a decoded manifest does not decode again: %v", err)
		}
		if !bytes.Equal(again.encode(), m.encode()) {
			t.Fatal("a manifest changed through encoding")
		}
	})
}

// Issue 39: object names parse only as the form name() gives.
func FuzzParseObjectName(f *testing.F) {
	f.Add(logObject{epoch: 1, gen: 2, start: 0, end: 40, time: time.Unix(0, 99)}.name())
	f.Add(fileObject{file: "level.dat", epoch: 3, time: time.Unix(0, 7)}.name())
	f.Add(prunedObject(time.Unix(0, 5)))
	f.Add(deletionObject{epoch: 2, time: time.Unix(0, 11)}.name())
	f.Add("log/x")
	f.Fuzz(func(t *testing.T, name string) {
		if h, ok := parsePrunedObject(name); ok && prunedObject(h) != name {
			t.Fatalf("%q parses as a prune mark named %q", name, prunedObject(h))
		}
		if o, ok := parseDeletionObject(name); ok && o.name() != name {
			t.Fatalf("%q parses as a deletion mark named %q", name, o.name())
		}
		if o, ok := parseLogObject(name); ok && o.name() != name {
			t.Fatalf("%q parses as a log object named %q", name, o.name())
		}
		if o, ok := parseFileObject(name); ok && o.name() != name {
			t.Fatalf("%q parses as a file object named %q", name, o.name())
		}
	})
}

// Issue 39 item 2: retries wait Interval, then twice as long each time,
// capped, and never overflow into a negative wait.
func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		interval, most time.Duration
		n              int
		want           time.Duration
	}{
		{time.Second, 30 * time.Second, 1, time.Second},
		{time.Second, 30 * time.Second, 3, 4 * time.Second},
		{time.Second, 30 * time.Second, 100, 30 * time.Second},
		{24 * time.Hour, 1<<63 - 1, 100, 1<<63 - 1},
	} {
		if got := backoff(c.interval, c.most, c.n); got != c.want {
			t.Errorf("backoff(%v, %v, %d) = %v, want %v", c.interval, c.most, c.n, got, c.want)
		}
	}
}
