package demo

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider"
)

// A backup's directory is named backupPrefix and the time it was started,
// which sorts as the names do: backup-20260127-140501.250. It is built
// under that name with vfs.BuildSuffix added, and the world's engine files
// under that one with vfs.BuildSuffix added again (provider.DB.Backup), so
// a crash can leave either. Only a name of exactly this form is the demo's
// (ownBackup): the pruning counts and deletes no other entry of the
// backup directory.
const (
	backupPrefix = "backup-"
	backupTime   = "20060102-150405.000"
)

// ownBackup reports whether name is one the demo gives a backup, and if so
// whether the backup is finished (not a leftover of one being built).
func ownBackup(name string) (own, finished bool) {
	rest, ok := strings.CutPrefix(name, backupPrefix)
	if !ok {
		return false, false
	}
	building := 0
	for ; building < 2; building++ {
		r, cut := strings.CutSuffix(rest, vfs.BuildSuffix)
		if !cut {
			break
		}
		rest = r
	}
	if t, err := time.Parse(backupTime, rest); err != nil || t.Format(backupTime) != rest {
		return false, false
	}
	return true, building == 0
}

// backups copies the running world into a directory at an interval
// (provider.DB.Backup: the server goes on meanwhile), its players' data
// with it, keeping the newest few. Safe for concurrent use.
type backups struct {
	db    *provider.DB
	dir   string
	every time.Duration
	keep  int
	log   *slog.Logger
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once // closes stop

	mu   sync.Mutex
	errs []error // every failed backup, for Stop
}

func startBackups(db *provider.DB, dir string, every time.Duration, keep int, log *slog.Logger) *backups {
	b := &backups{db: db, dir: dir, every: every, keep: keep, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

func (b *backups) run() {
	defer close(b.done)
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case now := <-t.C:
			if err := b.backup(now); errors.Is(err, provider.ErrClosed) {
				return // the server closed the world: nothing more to copy
			} else if err != nil {
				b.log.Error("backup failed", "dir", b.dir, "err", err)
				b.mu.Lock()
				b.errs = append(b.errs, err)
				b.mu.Unlock()
			}
		}
	}
}

// backup makes one backup, named for now, then deletes the oldest beyond
// keep and what backups cut short by a crash left behind.
//
// The backup is the world (provider.DB.Backup: the columns and the
// players' data as they were at one moment, level.dat, the block
// dictionary's copy), built in a directory that gets its final name only
// when it is whole and durable, so a backup directory by that name always
// restores the whole server.
func (b *backups) backup(now time.Time) error {
	if err := vfs.MkdirAll(vfs.Default, b.dir); err != nil {
		return err
	}
	name := filepath.Join(b.dir, backupPrefix+now.UTC().Format(backupTime))
	if _, err := os.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup to %s: %w", name, fs.ErrExist)
	}
	stage := name + vfs.BuildSuffix
	start := time.Now()
	if err := b.db.Backup(stage); err != nil {
		return err
	}
	if err := vfs.Default.Rename(stage, name); err != nil {
		if rerr := os.RemoveAll(stage); rerr != nil {
			err = errors.Join(err, fmt.Errorf("remove the unfinished backup: %w", rerr))
		}
		return fmt.Errorf("backup to %s: %w", name, err)
	}
	if err := vfs.Default.SyncDir(b.dir); err != nil {
		return fmt.Errorf("backup to %s: sync directory %s: %w", name, b.dir, err)
	}
	b.log.Info("world backed up", "to", name, "took", time.Since(start))
	return b.prune()
}

// prune deletes the oldest finished backups beyond keep, and the backups
// being built that a crash left (one backup runs at a time, and the last
// is finished). It deletes and counts only directories whose name is the
// demo's own (ownBackup): the user's entries are left alone.
func (b *backups) prune() error {
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return fmt.Errorf("list backups: %w", err)
	}
	var done []string
	for _, e := range entries {
		n := e.Name()
		own, finished := ownBackup(n)
		switch {
		case !own || !e.IsDir(): // a symbolic link is no directory of ours either
		case !finished:
			if err := os.RemoveAll(filepath.Join(b.dir, n)); err != nil {
				return fmt.Errorf("remove an unfinished backup: %w", err)
			}
		default:
			done = append(done, n)
		}
	}
	slices.Sort(done)
	for len(done) > b.keep {
		if err := os.RemoveAll(filepath.Join(b.dir, done[0])); err != nil {
			return fmt.Errorf("remove an old backup: %w", err)
		}
		done = done[1:]
	}
	return nil
}

// Stop stops the backups, waiting for one in progress, and returns every
// error they met.
func (b *backups) Stop() error {
	b.once.Do(func() { close(b.stop) })
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	return errors.Join(b.errs...)
}
