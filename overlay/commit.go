package overlay

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/internal/fsutil"
)

// The commit point of a reset, and when it becomes durable.
//
// A reset renames a new CURRENT into place and returns: it waits for no
// fsync, so that its cost is the same on a disk whose fsync takes long. An
// arena is reset again at every start anyway, so a crash may undo a reset
// that returned; what it may never do is leave the arena half reset, or
// lose a write the new match was promised. Four rules keep that:
//
//   - The commit is made durable (CURRENT's data, then its directory) in
//     the background right after the reset (prepareSpare), and before any
//     fsync of the generation it made current: every File and directory
//     sync of a generation goes through commitFS, which first makes durable
//     the commit naming that generation. So no write of the new match is
//     acknowledged as durable while a crash could still bring back the
//     last match, and Close and Shutdown leave the commit durable.
//   - The generation a reset replaced is deleted only once that reset is
//     durable (discard): until then a crash may bring it back as current.
//   - A CURRENT without its final newline is one whose name a crash kept
//     but not all of its data: a reset was in flight, and Open completes it
//     (a fresh generation, logged as a warning). A CURRENT replaced whole
//     by ReplaceFile, as Open writes it, always ends in its newline.
//   - A failed sync of a commit is final for it, as for any fsync: every
//     later sync of its generation fails with the same error (the
//     generation's database is poisoned), and it is reported by the next
//     ResetOverlay or Close. The next reset writes and syncs a new commit.
//
// commitState is the record of commits; Provider.commit holds it.
type commitState struct {
	// made is the generation the last commit names, durable the newest one
	// whose commit is durable, failed the one whose commit could not be
	// made durable (0 for none), with err.
	made, durable, failed int
	err                   error
}

// commitMade records that CURRENT now names generation n, not yet durably.
func (p *Provider) commitMade(n int) {
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	p.commit.made = n
}

// commitDurable records that CURRENT durably names generation n.
func (p *Provider) commitDurable(n int) {
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	p.commit.made, p.commit.durable = n, n
}

// syncCommit makes the last commit durable, if it is not yet: CURRENT's
// data, then its directory. It returns the error of a sync that failed for
// that commit, every time.
func (p *Provider) syncCommit() error {
	p.commitMu.Lock()
	done := p.commit.made <= p.commit.durable
	p.commitMu.Unlock()
	if done {
		return nil
	}
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	p.commitMu.Lock()
	c := p.commit
	p.commitMu.Unlock()
	switch {
	case c.made <= c.durable:
		return nil
	case c.made == c.failed:
		return c.err
	}
	err := p.syncCurrent()
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	if err != nil {
		err = fmt.Errorf("make the reset to generation %d durable: %w", c.made, err)
		p.commit.failed, p.commit.err = c.made, err
		return err
	}
	// A reset between the read of c and the sync may have replaced CURRENT
	// since: only the commit read is known durable.
	p.commit.durable = max(p.commit.durable, c.made)
	return nil
}

// syncGeneration makes the commit durable before an fsync of generation n's
// files, if that commit names n (or a later generation): a generation not
// yet committed (the spare in preparation) needs none.
func (p *Provider) syncGeneration(n int) error {
	p.commitMu.Lock()
	c := p.commit
	p.commitMu.Unlock()
	if n > c.made || c.made <= c.durable {
		return nil
	}
	return p.syncCommit()
}

// syncCurrent fsyncs CURRENT and its directory.
func (p *Provider) syncCurrent() error {
	if err := fsutil.SyncFile(p.conf.FS, filepath.Join(p.dir, currentName)); err != nil {
		return err
	}
	if err := p.conf.FS.SyncDir(p.dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", p.dir, err)
	}
	return nil
}

// writeCommit puts data in place as CURRENT without waiting for the disk:
// it writes CURRENT.tmp and renames it over CURRENT, unsynced. The rename
// is atomic, so an error leaves CURRENT as it was. syncMu is held across
// the rename, so that CURRENT is never open for a sync while it is
// replaced (Windows refuses that); at a reset no sync of a commit is under
// way, as the reset's spare waited for the last one, so this never waits.
func (p *Provider) writeCommit(data []byte) error {
	fs := p.conf.FS
	tmp := filepath.Join(p.dir, currentName+vfs.TempSuffix)
	f, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	_, err = f.WriteAt(data, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		p.syncMu.Lock()
		err = fs.Rename(tmp, filepath.Join(p.dir, currentName))
		p.syncMu.Unlock()
	}
	if err != nil {
		if rerr := fs.Remove(tmp); rerr != nil && !errors.Is(rerr, vfs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove %s: %w", tmp, rerr))
		}
		return fmt.Errorf("write %s: %w", currentName, err)
	}
	return nil
}

// commitFS is the filesystem of generation gen: every fsync through it
// first makes durable a commit naming gen.
type commitFS struct {
	vfs.FS
	p   *Provider
	gen int
}

// genFS returns the filesystem of generation n.
func (p *Provider) genFS(n int) vfs.FS { return commitFS{FS: p.conf.FS, p: p, gen: n} }

func (c commitFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return commitFile{File: f, fs: c}, nil
}

func (c commitFS) Create(name string) (vfs.File, error) { return c.wrap(c.FS.Create(name)) }
func (c commitFS) Open(name string) (vfs.File, error)   { return c.wrap(c.FS.Open(name)) }
func (c commitFS) OpenReadWrite(name string) (vfs.File, error) {
	return c.wrap(c.FS.OpenReadWrite(name))
}

func (c commitFS) SyncDir(dir string) error {
	if err := c.p.syncGeneration(c.gen); err != nil {
		return err
	}
	return c.FS.SyncDir(dir)
}

// commitFile is a file of a generation, opened through its commitFS.
type commitFile struct {
	vfs.File
	fs commitFS
}

func (f commitFile) Sync() error {
	if err := f.fs.p.syncGeneration(f.fs.gen); err != nil {
		return err
	}
	return f.File.Sync()
}
