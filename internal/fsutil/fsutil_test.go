package fsutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Inside sees a nesting through a relative path, "..", a link and a path
// not made yet, and no nesting where there is none.
func TestInside(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "a")
	os.MkdirAll(filepath.Join(a, "b"), 0o755)
	os.MkdirAll(filepath.Join(root, "ab"), 0o755)
	link := filepath.Join(root, "link")
	haveLink := os.Symlink(a, link) == nil
	cases := []struct {
		path, dir string
		want      bool
	}{
		{a, a, true},
		{filepath.Join(a, "b"), a, true},
		{filepath.Join(a, "not", "yet"), a, true},
		{filepath.Join(a, "..", "a", "b"), a, true},
		{filepath.Join(root, "ab"), a, false}, // a prefix of the name, not a parent
		{root, a, false},
		{filepath.Join(root, "elsewhere"), a, false},
	}
	if haveLink {
		cases = append(cases, struct {
			path, dir string
			want      bool
		}{filepath.Join(link, "b", "new"), a, true}, struct {
			path, dir string
			want      bool
		}{filepath.Join(a, "b"), link, true})
	}
	for _, c := range cases {
		if got, err := Inside(c.path, c.dir); err != nil || got != c.want {
			t.Errorf("Inside(%s, %s) = %v, %v; want %v", c.path, c.dir, got, err, c.want)
		}
	}
}

// SyncedCopyTree copies files and directories and refuses what it cannot
// copy whole.
func TestSyncedCopyTree(t *testing.T) {
	from := t.TempDir()
	os.MkdirAll(filepath.Join(from, "d"), 0o755)
	os.WriteFile(filepath.Join(from, "d", "f"), []byte("data"), 0o644)
	to := filepath.Join(t.TempDir(), "copy")
	if err := SyncedCopyTree(from, to); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(to, "d", "f")); err != nil || string(b) != "data" {
		t.Fatalf("copy: %q, %v", b, err)
	}
	if os.Symlink(filepath.Join(from, "d"), filepath.Join(from, "link")) != nil {
		t.Skip("no symbolic links here")
	}
	err := SyncedCopyTree(from, filepath.Join(t.TempDir(), "copy"))
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a link in the tree: %v", err)
	}
}
