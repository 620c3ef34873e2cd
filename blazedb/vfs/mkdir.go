package vfs

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
)

// MkdirAll creates dir and its missing parents through fs, and syncs the
// parent of each directory it created, so that after a crash none of them
// is lost. A directory that already exists is left as it is: whoever made
// it made it durable, or must. If a sync fails, the directories it made are
// removed again, so that a call tried again makes and syncs them anew.
//
// Concurrent calls that share a directory on their paths take turns at it
// (claim): a call that finds a directory another call made finds it
// durable already. Without that, of two calls sharing a missing parent
// (segments making the regions of three dimensions at once), the one that
// found the parent made by the other could return, and have writes
// acknowledged under it, before the other had synced the parent into its
// own. Calls on paths apart never wait for each other. This holds within
// one process only.
func MkdirAll(fs FS, dir string) error {
	dir = filepath.Clean(dir)
	var made []string
	var releases []func()
	defer func() {
		for _, release := range releases {
			release()
		}
	}()
	for d := dir; ; d = filepath.Dir(d) {
		release := claim(d)
		if _, err := fs.List(d); !errors.Is(err, ErrNotExist) {
			release() // there (made durable by whoever made it), or not a directory, which fs.MkdirAll reports
			break
		}
		releases = append(releases, release) // until it is made durable, or not made
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range made {
		if err := fs.SyncDir(filepath.Dir(d)); err != nil {
			err = fmt.Errorf("sync directory %s: %w", filepath.Dir(d), err)
			for _, d := range made { // deepest first
				if rerr := fs.Remove(d); rerr != nil {
					return errors.Join(err, fmt.Errorf("remove %s: %w", d, rerr))
				}
			}
			return err
		}
	}
	return nil
}

// claims holds the directories that MkdirAll calls are looking at, or have
// made and not yet made durable, each with a channel closed when its claim
// ends.
var claims = struct {
	sync.Mutex
	dirs map[string]chan struct{}
}{dirs: map[string]chan struct{}{}}

// claim waits until no other call holds dir, claims it, and returns the
// function that ends the claim. Each call claims the directories on its
// path deepest first, so no two calls wait for each other: the claim one
// waits for is always shallower than every claim it holds.
func claim(dir string) (release func()) {
	key := dir
	if abs, err := filepath.Abs(dir); err == nil {
		key = abs // one directory, one claim, however it is named
	}
	for {
		claims.Lock()
		busy, ok := claims.dirs[key]
		if !ok {
			done := make(chan struct{})
			claims.dirs[key] = done
			claims.Unlock()
			return func() {
				claims.Lock()
				delete(claims.dirs, key)
				claims.Unlock()
				close(done)
			}
		}
		claims.Unlock()
		<-busy
	}
}
