package overlay

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 35 item 17: an overlay closed (as a World closes it) does not stop
// a new Open of its directory in this process: the new Open takes the
// directory over and serves the match the closed one left, and the closed
// one's ResetOverlay says why it no longer works.
func TestOpenAfterCloseTakesOver(t *testing.T) {
	for name, fs := range map[string]vfs.FS{"os": vfs.Default, "mem": vfstest.NewMem()} {
		t.Run(name, func(t *testing.T) {
			tp := openTemplate(t, template(t, 2))
			dir := filepath.Join(t.TempDir(), "arena")
			if name == "mem" {
				dir = "/arena"
			}
			o, err := Config{Log: quiet, FS: fs}.Open(tp, dir)
			if err != nil {
				t.Fatal(err)
			}
			changeOneColumn(t, tp, o)
			if err := o.Close(); err != nil {
				t.Fatal(err)
			}
			o2, err := Config{Log: quiet, FS: fs}.Open(tp, dir)
			if err != nil {
				t.Fatalf("open after close, in the same process: %v", err)
			}
			defer o2.Shutdown()
			if dirty, err := o2.Dirty(); err != nil || len(dirty) != 1 || dirty[0].Pos != changedPos {
				t.Fatalf("the reopened overlay holds %v, %v; want the match's column", dirty, err)
			}
			err = o.ResetOverlay()
			if !errors.Is(err, ErrShutdown) || !strings.Contains(err.Error(), "opened again") {
				t.Fatalf("reset of the overlay taken over: %v, want ErrShutdown saying why", err)
			}
			if err := o.Shutdown(); err != nil {
				t.Fatalf("shutdown of the overlay taken over: %v", err)
			}
			if dirty, err := o2.Dirty(); err != nil || len(dirty) != 1 {
				t.Fatalf("the old overlay's shutdown changed the new one: %v, %v", dirty, err)
			}
			if err := o2.ResetOverlay(); err != nil {
				t.Fatal(err)
			}
			if err := o2.Close(); err != nil {
				t.Fatal(err)
			}
			if err := o2.ResetOverlay(); err != nil { // the World's cycle still works
				t.Fatalf("reset after close: %v", err)
			}
			if _, err := o2.LoadColumn(world.ChunkPos{0, 0}, world.Overworld); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Issue 35 item 17: an overlay that is open keeps its directory, and the
// Open refused says that this process holds it, never another process.
func TestOpenWhileOpenSaysThisProcess(t *testing.T) {
	tp := openTemplate(t, template(t, 1))
	dir := filepath.Join(t.TempDir(), "arena")
	o, err := Config{Log: quiet}.Open(tp, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Shutdown()
	_, err = Config{Log: quiet}.Open(tp, dir)
	if !errors.Is(err, blazedb.ErrLocked) || strings.Contains(err.Error(), "another process") || !strings.Contains(err.Error(), "this process") {
		t.Fatalf("open of an open overlay's directory: %v, want ErrLocked naming this process", err)
	}
	if _, err := o.Dirty(); err != nil {
		t.Fatalf("the refused open disturbed the open overlay: %v", err)
	}
	// A Blaze database opened twice says so too.
	gen := filepath.Join(dir, genName(o.gen), "blaze")
	_, err = blazedb.Open(gen, blazedb.Options{})
	if !errors.Is(err, blazedb.ErrLocked) || strings.Contains(err.Error(), "another process") || !strings.Contains(err.Error(), "this process") {
		t.Fatalf("open of an open database: %v, want ErrLocked naming this process", err)
	}
}

// hookFS is an FS whose value cannot be a map key (it holds a func), and
// wrappedFS one whose type can but whose value, holding a hookFS, cannot.
type hookFS struct {
	vfs.FS
	hook func()
}

type wrappedFS struct{ vfs.FS }

// Issue 35 item 17: an overlay on an FS whose type is comparable but whose
// value is not (a wrapper around one holding a func) opens and shuts down
// like any other. Before, recording it as its directory's holder hashed
// the FS and panicked.
func TestHolderOfUnhashableFS(t *testing.T) {
	tp := openTemplate(t, template(t, 2))
	fs := wrappedFS{hookFS{FS: vfstest.NewMem(), hook: func() {}}}
	o, err := Config{Log: quiet, FS: fs}.Open(tp, "/arena")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Shutdown(); err != nil {
		t.Fatal(err)
	}
}
