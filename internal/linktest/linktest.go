package linktest

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A Trap is a directory outside the world and the files in it. It is for
// one test's goroutine.
type Trap struct {
	// Dir is the trap's directory.
	Dir   string
	files map[string][]byte
}

// Sentinel is the name of the file New puts in a trap.
const Sentinel = "sentinel"

// New makes a trap in a directory of its own holding Sentinel.
func New(t testing.TB) *Trap {
	t.Helper()
	tr := &Trap{Dir: filepath.Join(t.TempDir(), "outside"), files: map[string][]byte{}}
	if err := os.Mkdir(tr.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tr.Put(t, Sentinel, []byte("not the world's to delete"))
	return tr
}

// Put writes the file name into the trap, for Check to find as it is.
func (tr *Trap) Put(t testing.TB, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(tr.Dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	tr.files[name] = bytes.Clone(data)
}

// LinkDir makes name a symbolic link to the trap's directory.
func (tr *Trap) LinkDir(t testing.TB, name string) { t.Helper(); Link(t, tr.Dir, name) }

// LinkFile makes name a symbolic link to the file file of the trap.
func (tr *Trap) LinkFile(t testing.TB, file, name string) {
	t.Helper()
	Link(t, filepath.Join(tr.Dir, file), name)
}

// Check fails the test unless every file of the trap is there with the
// content it was put with.
func (tr *Trap) Check(t testing.TB) {
	t.Helper()
	for name, want := range tr.files {
		got, err := os.ReadFile(filepath.Join(tr.Dir, name))
		switch {
		case err != nil:
			t.Errorf("the file %s outside the world, behind a symbolic link: %v", name, err)
		case !bytes.Equal(got, want):
			t.Errorf("the file %s outside the world, behind a symbolic link, was changed: %d bytes, %d before", name, len(got), len(want))
		}
	}
}

// Link makes name a symbolic link to target, skipping the test where the
// system refuses to (Windows without the privilege or developer mode) or
// makes one it does not report as a link.
func Link(t testing.TB, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		if runtime.GOOS == "windows" {
			t.Skipf("no symbolic links here: %v", err)
		}
		t.Fatal(err)
	}
	if !IsLink(name) {
		// Wine makes one that Windows's calls do not show as a link.
		t.Skipf("the system made %s, but does not report it as a symbolic link", name)
	}
}

// IsLink reports whether name is a symbolic link.
func IsLink(name string) bool {
	fi, err := os.Lstat(name)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}
