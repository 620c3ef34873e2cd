package segment

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/df-mc/goleveldb/leveldb"
)

// Backup writes a copy of the segmented world into dir, which must not
// exist (an error wrapping fs.ErrExist says it does), while the server goes
// on: the root world (settings, player spawns) and then each region, each
// copied with provider.DB.Backup as it is when the backup reaches it.
// Regions are separate databases, so the copy is not of one moment across
// them; each region in it is whole and holds every column stored in it
// before Backup was called. A region is held open while it is copied, so
// DeleteSegmentFor waits for it; a region deleted before the backup
// reaches it is left out. The copy is built beside dir and renamed to it
// (vfs.BuildDir): after a crash dir is either absent or whole.
func (p *Provider) Backup(dir string) error {
	if err := vfs.BuildDir(p.conf.FS, dir, vfs.BuildSuffix, p.backupInto); err != nil {
		return fmt.Errorf("segment: backup to %s: %w", dir, err)
	}
	return nil
}

// backupInto writes the backup into the empty directory dir.
func (p *Provider) backupInto(dir string) error {
	fsys := p.conf.FS
	// The root's Backup makes a directory of its own; its files then move
	// up into dir, which is not yet anyone's world.
	root := filepath.Join(dir, "root")
	if err := p.meta.Backup(root); err != nil {
		return err
	}
	names, err := fsys.List(root)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := fsys.Rename(filepath.Join(root, n), filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	if err := vfs.RemoveAll(fsys, root); err != nil { // syncs dir
		return err
	}
	for dim := range int32(3) {
		keys, err := p.onDisk(dim)
		if err != nil {
			return err
		}
		dst, wrote := dimDir(dir, dim), false
		for _, k := range keys {
			copied, err := p.backupRegion(k, dst)
			if err != nil {
				return err
			}
			wrote = wrote || copied
		}
		if !wrote {
			continue
		}
		if err := syncDirs(fsys, dir, dst); err != nil {
			return err
		}
	}
	return nil
}

// backupRegion copies region k into the directory dst of its dimension
// and reports whether it did: not when the region was deleted meanwhile.
func (p *Provider) backupRegion(k segKey, dst string) (bool, error) {
	s, err := p.acquire(k, false)
	if errors.Is(err, leveldb.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("region %v: %w", k, err)
	}
	defer p.release(s)
	if err := p.conf.FS.MkdirAll(dst, 0o755); err != nil {
		return false, err
	}
	if err := s.db.Backup(filepath.Join(dst, filepath.Base(p.segDir(k)))); err != nil {
		return false, fmt.Errorf("region %v: %w", k, err)
	}
	return true, nil
}

// syncDirs syncs dir and every directory from it down to sub, so that the
// directories MkdirAll made are durable.
func syncDirs(fsys vfs.FS, dir, sub string) error {
	for d := sub; ; d = filepath.Dir(d) {
		if err := fsys.SyncDir(d); err != nil {
			return err
		}
		if d == dir || d == filepath.Dir(d) {
			return nil
		}
	}
}
