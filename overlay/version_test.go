package overlay

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/provider"
)

// The format-version ratchet of the overlay (issue 37; the engine's is
// blazedb/version_test.go). testdata/format holds a CURRENT of every
// version a build has written, each of which must keep reading as it did,
// and the current version's writer must write them byte for byte. From
// now on a change to CURRENT's format adds a version: encodeCurrent writes
// the new one, parseCurrent keeps reading every earlier one, and a golden
// file of the new version is added beside the old ones. A golden file is
// never edited or removed. Versions from before the first release (1 and
// the unsigned form) were dropped when the ratchet began, and are refused
// (TestOpenRefusesUnreleasedCurrent).
func TestCurrentVersionsStillRead(t *testing.T) {
	e := provider.Edition{0x9f, 0x86, 0xd0, 0x81, 0x88, 0x4c, 0x7d, 0x65, 0x9a, 0x2f, 0xea, 0xa0, 0xc5, 0x5a, 0xd0, 0x15}
	for _, c := range []struct {
		file string
		want current
	}{
		{"CURRENT-v2-template", current{gen: 7, template: e}},
		{"CURRENT-v2-no-edition", current{gen: 1234567}},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "format", c.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseCurrent(b)
		if err != nil || got != c.want {
			t.Errorf("%s reads as %+v, %v; want %+v", c.file, got, err, c.want)
		}
		if enc := encodeCurrent(c.want.gen, c.want.template); string(enc) != string(b) {
			t.Errorf("%+v is written %q, not as %s: %q (a new format is a new version)", c.want, enc, c.file, b)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "format", "CURRENT-*"))
	if len(files) != 2 {
		t.Errorf("testdata/format holds %d CURRENT files, and this test reads 2: add the new one here", len(files))
	}
}
