package overlay

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
)

func TestParseCurrent(t *testing.T) {
	for _, c := range []struct {
		in   string
		gen  int
		want error
	}{
		{"blaze-overlay 1 gen-000007\n", 7, nil},
		{"blaze-overlay 1 gen-1234567\n", 1234567, nil},
		{"gen-000007\n", 7, nil}, // written before CURRENT had a signature
		{"blaze-overlay 2 gen-000007\n", 0, blazedb.ErrVersion},
		{"blaze-overlay 1 gen-000007", 0, blazedb.ErrCorrupt}, // cut short
		{"blaze-overlay 1 gen-7\n", 0, blazedb.ErrCorrupt},
		{"blaze-overlay 1 gen-000000\n", 0, blazedb.ErrCorrupt},
		{"blaze-overlay 01 gen-000007\n", 0, blazedb.ErrCorrupt},
		{"blaze-overlay 1  gen-000007\n", 0, blazedb.ErrCorrupt},
		{"blaze-overlay 1 gen-000007\ngen-000008\n", 0, blazedb.ErrCorrupt},
		{"MANIFEST-000001\n", 0, blazedb.ErrCorrupt}, // LevelDB's CURRENT
		{"", 0, blazedb.ErrCorrupt},
	} {
		gen, err := parseCurrent([]byte(c.in))
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) || gen != c.gen {
			t.Errorf("parseCurrent(%q) = %d, %v; want %d, %v", c.in, gen, err, c.gen, c.want)
		}
	}
	for _, n := range []int{1, 7, 999999, 1000000} {
		if got, err := parseCurrent(encodeCurrent(n)); err != nil || got != n {
			t.Errorf("generation %d comes back as %d, %v", n, got, err)
		}
	}
}

// An overlay whose CURRENT is of a newer version is refused, and none of
// its generations is deleted.
func TestOpenRefusesNewerCurrent(t *testing.T) {
	tp, dir, _ := retiredArena(t)
	if err := os.WriteFile(filepath.Join(dir, currentName), []byte("blaze-overlay 2 gen-000002\n"), 0o644); err != nil {
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

// FuzzParseCurrent: parseCurrent never panics, accepts only what names a
// generation, and encodeCurrent of what it accepts reads back the same.
func FuzzParseCurrent(f *testing.F) {
	f.Add([]byte("blaze-overlay 1 gen-000007\n"))
	f.Add([]byte("gen-000007\n"))
	f.Add([]byte("blaze-overlay 9 gen-000007\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseCurrent(b)
		if err != nil {
			return
		}
		if n < 1 {
			t.Fatalf("accepted generation %d", n)
		}
		if m, err := parseCurrent(encodeCurrent(n)); err != nil || m != n {
			t.Fatalf("%d reads back as %d, %v", n, m, err)
		}
	})
}
