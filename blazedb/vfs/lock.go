package vfs

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

// The locks this process holds through Default, so that a conflict can
// say truly whose lock it is: a second handle in this process (a database
// opened twice, or not yet closed) or another process.
var held struct {
	// mu is held across every attempt to take a lock and every release,
	// so a conflict is never judged while this process is releasing the
	// lock it conflicts with.
	mu    sync.Mutex
	locks []os.FileInfo // one entry per lock held, shared ones repeated
}

// lockHere takes the lock on f with try, which reports whether the lock
// was free, and records it. A conflict is an error wrapping ErrLocked that
// says whether this process holds the lock.
func lockHere(name string, f *os.File, try func() (bool, error)) (io.Closer, error) {
	held.mu.Lock()
	defer held.mu.Unlock()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	ok, err := try()
	switch {
	case err != nil:
		return nil, fmt.Errorf("lock %s: %w", name, err)
	case !ok && slices.ContainsFunc(held.locks, func(h os.FileInfo) bool { return os.SameFile(h, fi) }):
		return nil, fmt.Errorf("%s: %w by this process (a database open twice, or not yet closed)", name, ErrLocked)
	case !ok:
		return nil, fmt.Errorf("%s: %w by another process", name, ErrLocked)
	}
	held.locks = append(held.locks, fi)
	return &heldLock{f: f, fi: fi}, nil
}

// heldLock releases a lock taken by lockHere.
type heldLock struct {
	f    *os.File
	fi   os.FileInfo
	once sync.Once
	err  error
}

func (l *heldLock) Close() error {
	l.once.Do(func() {
		held.mu.Lock()
		defer held.mu.Unlock()
		if i := slices.Index(held.locks, l.fi); i >= 0 {
			held.locks = slices.Delete(held.locks, i, i+1)
		}
		l.err = l.f.Close()
	})
	return l.err
}
