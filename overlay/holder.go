package overlay

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
)

// The directories this process holds as overlays, and who holds each.
//
// An overlay holds dir/LOCK from Open to Shutdown: a closed one (a World
// closed it, and ResetOverlay would open it again) keeps it, and its
// prepared spare generation, for the next match. A new Open of the
// directory in this process must not fail on that, and may not claim that
// another process holds it: it takes the directory over from the closed
// overlay, shutting it down as Shutdown does (its ResetOverlay then
// returns ErrShutdown, saying why). An overlay that is open is never taken
// over: the Open fails with blazedb.ErrLocked, saying that an overlay of
// this process holds the directory.
//
// Directories are told apart by their absolute path on the same FS, so a
// directory reached under another name (a symbolic link) is not found
// here; its Open fails with blazedb.ErrLocked as a lock of this process.

// holderKey names a directory: its FS and absolute path.
type holderKey struct {
	fs  vfs.FS
	dir string
}

var holders struct {
	sync.Mutex
	m map[holderKey]*Provider
}

// holderKeyFor returns the key of dir on fs; ok is false for an FS that
// cannot be compared (a map key), whose overlays are never taken over. The
// value is asked, not its type: a comparable wrapper holding an FS that is
// not comparable would make the map's hash panic.
func holderKeyFor(fs vfs.FS, dir string) (k holderKey, ok bool) {
	if !reflect.ValueOf(fs).Comparable() {
		return holderKey{}, false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	return holderKey{fs: fs, dir: abs}, true
}

func holderOf(fs vfs.FS, dir string) *Provider {
	k, ok := holderKeyFor(fs, dir)
	if !ok {
		return nil
	}
	holders.Lock()
	defer holders.Unlock()
	return holders.m[k]
}

// hold records p as the holder of its directory.
func (p *Provider) hold() {
	k, ok := holderKeyFor(p.conf.FS, p.dir)
	if !ok {
		return
	}
	holders.Lock()
	defer holders.Unlock()
	if holders.m == nil {
		holders.m = map[holderKey]*Provider{}
	}
	holders.m[k] = p
}

// unhold forgets p as the holder of its directory, once its lock is
// released.
func (p *Provider) unhold() {
	k, ok := holderKeyFor(p.conf.FS, p.dir)
	if !ok {
		return
	}
	holders.Lock()
	defer holders.Unlock()
	if holders.m[k] == p {
		delete(holders.m, k)
	}
}

// lockDir takes dir/LOCK for p, taking the directory over from a closed
// overlay of this process that holds it.
func (p *Provider) lockDir() error {
	name := filepath.Join(p.dir, "LOCK")
	for tries := 0; ; tries++ {
		lock, err := p.conf.FS.Lock(name, true)
		if err == nil {
			p.lock = lock
			return nil
		}
		if !errors.Is(err, vfs.ErrLocked) {
			return err
		}
		h := holderOf(p.conf.FS, p.dir)
		if h == nil || tries == 3 { // another process, or a holder this process does not know
			return fmt.Errorf("%w (%v)", blazedb.ErrLocked, err)
		}
		if !h.yield() {
			return fmt.Errorf("%w: an overlay open in this process holds %s; close it first", blazedb.ErrLocked, p.dir)
		}
	}
}

// yield shuts h down for a new Open of its directory if h is closed, and
// reports whether it did (or h was shut down already). What the shutdown
// could not do is kept for h's next ResetOverlay or Shutdown to return.
func (h *Provider) yield() bool {
	h.resetMu.Lock()
	defer h.resetMu.Unlock()
	h.mu.RLock()
	open := h.cur != nil
	h.mu.RUnlock()
	if open {
		return false
	}
	why := fmt.Errorf("%w: %s was opened again in this process", ErrShutdown, h.dir)
	if err := h.shutdown(why); err != nil {
		h.bg.Lock()
		h.bg.err = errors.Join(h.bg.err, err)
		h.bg.Unlock()
	}
	return true
}
