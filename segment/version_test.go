package segment

import (
	"os"
	"path/filepath"
	"testing"
)

// The format-version ratchet of the segment layout record (issue 37; the
// engine's is blazedb/version_test.go): a record of every version a build
// has written, in testdata/format, keeps reading as it did, and the
// current version's writer writes it byte for byte. From now on a change
// to the layout record's format adds a version and a golden file, and
// parseLayout keeps reading every earlier one. A world whose record was lost
// is sized again by a scan of its regions (TestSegmentSizeOfWorldWithoutLayout).
func TestLayoutVersionsStillRead(t *testing.T) {
	for _, c := range []struct {
		file string
		size int
	}{{"layout-v1-32", 32}, {"layout-v1-max", maxSegmentSize}} {
		b, err := os.ReadFile(filepath.Join("testdata", "format", c.file))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := parseLayout(b); err != nil || got != c.size {
			t.Errorf("%s reads as %d, %v; want %d", c.file, got, err, c.size)
		}
		if enc := encodeLayout(c.size); string(enc) != string(b) {
			t.Errorf("size %d is written %q, not as %s: %q (a new format is a new version)", c.size, enc, c.file, b)
		}
	}
}
