package demo

import (
	"errors"
	"fmt"
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

// backupPrefix starts the name of every backup the demo server makes; the
// rest is the time it was started, which sorts as the names do.
const (
	backupPrefix = "backup-"
	backupTime   = "20060102-150405.000"
)

// backups copies the running world into a directory at an interval
// (provider.DB.Backup: the server goes on meanwhile), keeping the newest
// few. Safe for concurrent use.
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
func (b *backups) backup(now time.Time) error {
	if err := vfs.MkdirAll(vfs.Default, b.dir); err != nil {
		return err
	}
	name := filepath.Join(b.dir, backupPrefix+now.UTC().Format(backupTime))
	start := time.Now()
	if err := b.db.Backup(name); err != nil {
		return err
	}
	b.log.Info("world backed up", "to", name, "took", time.Since(start))
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return fmt.Errorf("list backups: %w", err)
	}
	var done []string
	for _, e := range entries {
		n := e.Name()
		switch {
		case !strings.HasPrefix(n, backupPrefix):
		case strings.HasSuffix(n, vfs.BuildSuffix):
			// One backup runs at a time, and this one is finished: a
			// temporary directory is what a crash left.
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
