package vfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/linktest"
)

// Issue 35 item 6: RemoveAll of a tree holding symbolic links removes the
// links themselves and never lists a directory through one; RemoveAll of
// a path that is itself a link removes the link. Through Default and
// through Inject over it.
func TestRemoveAllLeavesLinkTargets(t *testing.T) {
	for name, fsys := range map[string]vfs.FS{
		"Default": vfs.Default,
		"Inject":  vfstest.Inject(vfs.Default, func(vfstest.Op, string) error { return nil }),
	} {
		t.Run(name, func(t *testing.T) {
			trap := linktest.New(t)
			world := t.TempDir()
			tree := filepath.Join(world, "gen-000001")
			if err := os.MkdirAll(filepath.Join(tree, "blaze"), 0o755); err != nil {
				t.Fatal(err)
			}
			trap.LinkDir(t, filepath.Join(tree, "dirlink"))
			trap.LinkDir(t, filepath.Join(tree, "blaze", "deeper"))
			trap.LinkFile(t, linktest.Sentinel, filepath.Join(tree, "filelink"))
			top := filepath.Join(world, "gen-000002")
			trap.LinkDir(t, top)

			for _, p := range []string{tree, top} {
				if err := vfs.RemoveAll(fsys, p); err != nil {
					t.Fatalf("RemoveAll(%s): %v", p, err)
				}
				if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("RemoveAll(%s) left it: %v", p, err)
				}
			}
			trap.Check(t)
		})
	}
}

// Issue 35 item 6: an open that may write, create or truncate refuses a
// name that is a symbolic link, dangling or not, and changes nothing
// behind it; reading through one still works.
func TestWriteOpensRefuseLinks(t *testing.T) {
	trap := linktest.New(t)
	trap.Put(t, "chunks.dat", []byte("the log of another world"))
	dir := t.TempDir()
	link := filepath.Join(dir, "chunks.dat")
	trap.LinkFile(t, "chunks.dat", link)
	dangling := filepath.Join(dir, "LOCK")
	linktest.Link(t, filepath.Join(trap.Dir, "made-through-a-link"), dangling)

	for what, open := range map[string]func(string) error{
		"Create":         func(n string) error { return closeFile(vfs.Default.Create(n)) },
		"OpenReadWrite":  func(n string) error { return closeFile(vfs.Default.OpenReadWrite(n)) },
		"exclusive Lock": func(n string) error { return closeLock(vfs.Default.Lock(n, true)) },
	} {
		for _, n := range []string{link, dangling} {
			if err := open(n); !errors.Is(err, vfs.ErrSymlink) {
				t.Errorf("%s of the link %s: %v, want ErrSymlink", what, filepath.Base(n), err)
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(trap.Dir, "made-through-a-link")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was made through the dangling link: %v", err)
	}
	trap.Check(t)

	b, err := vfs.ReadFile(vfs.Default, link)
	if err != nil || string(b) != "the log of another world" {
		t.Errorf("read through the link: %q, %v", b, err)
	}
}

// Issue 35 item 6: ReplaceFile finding a symbolic link at its temporary
// name removes the link, not what it points to, and replaces the file.
func TestReplaceFileRemovesLinkAtTemp(t *testing.T) {
	trap := linktest.New(t)
	dir := t.TempDir()
	trap.LinkFile(t, linktest.Sentinel, filepath.Join(dir, "level.dat"+vfs.TempSuffix))
	if err := vfs.ReplaceFile(vfs.Default, dir, "level.dat", []byte("settings")); err != nil {
		t.Fatal(err)
	}
	trap.Check(t)
	if b, err := os.ReadFile(filepath.Join(dir, "level.dat")); err != nil || string(b) != "settings" {
		t.Errorf("level.dat: %q, %v", b, err)
	}
	if linktest.IsLink(filepath.Join(dir, "level.dat")) {
		t.Error("level.dat is a link")
	}
}

func closeFile(f vfs.File, err error) error {
	if err == nil {
		f.Close()
	}
	return err
}

func closeLock(c interface{ Close() error }, err error) error {
	if err == nil {
		c.Close()
	}
	return err
}
