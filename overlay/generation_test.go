package overlay

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider"
)

func TestParseCurrent(t *testing.T) {
	e := provider.Edition{0x9f, 0x86, 0xd0, 0x81, 0x88, 0x4c, 0x7d, 0x65, 0x9a, 0x2f, 0xea, 0xa0, 0xc5, 0x5a, 0xd0, 0x15}
	for _, c := range []struct {
		in   string
		want current
		err  error
	}{
		{"blaze-overlay 2 gen-000007 9f86d081884c7d659a2feaa0c55ad015\n", current{gen: 7, template: e}, nil},
		{"blaze-overlay 2 gen-000007 -\n", current{gen: 7}, nil},
		{"blaze-overlay 2 gen-1234567 -\n", current{gen: 1234567}, nil},
		// Issue 37: the forms no release wrote are refused as such.
		{"blaze-overlay 1 gen-000007\n", current{}, blazedb.ErrOldVersion}, // before the template was recorded
		{"gen-000007\n", current{}, blazedb.ErrOldVersion},                 // before CURRENT had a signature
		{"blaze-overlay 3 gen-000007 - x\n", current{}, blazedb.ErrVersion},
		{"blaze-overlay 2 gen-000007\n", current{}, blazedb.ErrCorrupt},   // no template
		{"blaze-overlay 1 gen-000007 -\n", current{}, blazedb.ErrCorrupt}, // version 1 had none: damage
		{"blaze-overlay 1 gen-7\n", current{}, blazedb.ErrCorrupt},
		{"gen-7\n", current{}, blazedb.ErrCorrupt},
		{"blaze-overlay 2 gen-000007 9F86D081884C7D659A2FEAA0C55AD015\n", current{}, blazedb.ErrCorrupt},
		{"blaze-overlay 2 gen-000007 9f86d081884c7d659a2feaa0c55ad0\n", current{}, blazedb.ErrCorrupt},
		{"blaze-overlay 2 gen-000007 00000000000000000000000000000000\n", current{}, blazedb.ErrCorrupt}, // written "-"
		{"blaze-overlay 2 gen-000007 \n", current{}, blazedb.ErrCorrupt},
		{"blaze-overlay 2 gen-000007 -", current{}, blazedb.ErrCorrupt}, // cut short
		{"blaze-overlay 2 gen-7 -\n", current{}, blazedb.ErrCorrupt},
		{"blaze-overlay 2 gen-000000 -\n", current{}, blazedb.ErrCorrupt},
		{"blaze-overlay 02 gen-000007 -\n", current{}, blazedb.ErrCorrupt},
		{"blaze-overlay 2  gen-000007 -\n", current{}, blazedb.ErrCorrupt},
		{"blaze-overlay 2 gen-000007 -\ngen-000008\n", current{}, blazedb.ErrCorrupt},
		{"MANIFEST-000001\n", current{}, blazedb.ErrCorrupt}, // LevelDB's CURRENT
		{"", current{}, blazedb.ErrCorrupt},
	} {
		got, err := parseCurrent([]byte(c.in))
		if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) || got != c.want {
			t.Errorf("parseCurrent(%q) = %+v, %v; want %+v, %v", c.in, got, err, c.want, c.err)
		}
	}
	for _, n := range []int{1, 7, 999999, 1000000} {
		for _, tmpl := range []provider.Edition{{}, e} {
			want := current{gen: n, template: tmpl}
			if got, err := parseCurrent(encodeCurrent(n, tmpl)); err != nil || got != want {
				t.Errorf("%+v comes back as %+v, %v", want, got, err)
			}
		}
	}
}

// An overlay whose CURRENT is of a newer version is refused, and none of
// its generations is deleted.
func TestOpenRefusesNewerCurrent(t *testing.T) {
	tp, dir, _ := retiredArena(t)
	if err := os.WriteFile(filepath.Join(dir, currentName), []byte("blaze-overlay 3 gen-000002 - x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(dir)
	if _, err := (Config{Log: quiet}).Open(tp, dir); !errors.Is(err, blazedb.ErrVersion) {
		t.Fatalf("open with a newer CURRENT: %v, want ErrVersion", err)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Fatalf("the refused open changed the directory: %d entries, then %d", len(before), len(after))
	}
}

// Issue 37: an overlay whose CURRENT is of a version no release wrote is
// refused with blazedb.ErrOldVersion (not reset as damage would be), and
// none of its generations is deleted. Before, both forms were read.
func TestOpenRefusesUnreleasedCurrent(t *testing.T) {
	for _, old := range []string{"blaze-overlay 1 gen-000002\n", "gen-000002\n"} {
		tp, dir, _ := retiredArena(t)
		if err := os.WriteFile(filepath.Join(dir, currentName), []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadDir(dir)
		_, err := (Config{Log: quiet}).Open(tp, dir)
		if !errors.Is(err, blazedb.ErrOldVersion) || errors.Is(err, blazedb.ErrCorrupt) || !strings.Contains(err.Error(), "reads version 2") {
			t.Fatalf("open with CURRENT %q: %v, want ErrOldVersion naming the version read", old, err)
		}
		if after, _ := os.ReadDir(dir); len(after) != len(before) {
			t.Fatalf("the refused open changed the directory: %d entries, then %d", len(before), len(after))
		}
		if b, _ := os.ReadFile(filepath.Join(dir, currentName)); string(b) != old {
			t.Fatalf("the refused open rewrote CURRENT: %q", b)
		}
	}
}

// FuzzParseCurrent: parseCurrent never panics, accepts only what names a
// generation, and encodeCurrent of what it accepts reads back the same.
func FuzzParseCurrent(f *testing.F) {
	f.Add([]byte("blaze-overlay 2 gen-000007 9f86d081884c7d659a2feaa0c55ad015\n"))
	f.Add([]byte("blaze-overlay 2 gen-000007 -\n"))
	f.Add([]byte("blaze-overlay 1 gen-000007\n"))
	f.Add([]byte("gen-000007\n"))
	f.Add([]byte("blaze-overlay 9 gen-000007\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseCurrent(b)
		if err != nil {
			return
		}
		if c.gen < 1 {
			t.Fatalf("accepted %+v", c)
		}
		if enc := encodeCurrent(c.gen, c.template); string(enc) != string(b) {
			t.Fatalf("%q reads as %+v, which is written %q", b, c, enc)
		}
	})
}
