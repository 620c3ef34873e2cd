package segment

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/df-mc/dragonfly/server/world"
)

// Operations on one region as a whole: deleting it, crash-safely, and
// compacting it.

// finishDeletions removes regions whose deletion a crash interrupted.
func (p *Provider) finishDeletions() error {
	for dim := int32(0); dim < 3; dim++ {
		names, err := p.conf.FS.List(p.dimDir(dim))
		if errors.Is(err, vfs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, n := range names {
			if strings.HasPrefix(n, "deleting-") {
				if err := vfs.RemoveAll(p.conf.FS, filepath.Join(p.dimDir(dim), n)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// onDisk returns the regions of dimension dim on disk, in the order of
// their names, leaving out those being deleted.
func (p *Provider) onDisk(dim int32) ([]segKey, error) { return regionsIn(p.conf.FS, p.dir, dim) }

// regionsIn returns the regions of dimension dim of the segmented world in
// root, in the order of their names, leaving out those being deleted and
// anything else not named as a region.
func regionsIn(fsys vfs.FS, root string, dim int32) ([]segKey, error) {
	names, err := fsys.List(dimDir(root, dim))
	if errors.Is(err, vfs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []segKey
	for _, n := range names {
		k := segKey{dim: dim}
		if _, err := fmt.Sscanf(n, "r.%d.%d", &k.rx, &k.rz); err == nil && segName(k) == n {
			out = append(out, k)
		}
	}
	return out, nil
}

// DeleteSegmentFor durably removes the region holding pos in dim, with all
// its columns. It waits for calls using the region to finish.
func (p *Provider) DeleteSegmentFor(pos world.ChunkPos, dim world.Dimension) error {
	k, err := p.keyFor(pos, dim)
	if err != nil {
		return err
	}
	s, err := p.exclusive(k)
	if err != nil {
		return err
	}
	// s is closed and holds the key: nobody can open the region meanwhile.
	defer func() {
		p.mu.Lock()
		if p.segs[k] == s {
			delete(p.segs, k)
			p.noteClosedLocked(s)
		}
		close(s.gone)
		p.mu.Unlock()
	}()
	if !p.exists(k) {
		return nil
	}
	dead := filepath.Join(p.dimDir(k.dim), fmt.Sprintf("deleting-r.%d.%d-%d", k.rx, k.rz, time.Now().UnixNano()))
	if err := p.conf.FS.Rename(p.segDir(k), dead); err != nil {
		return fmt.Errorf("segment: delete region %v: %w", k, err)
	}
	p.eds.deleted(k)
	p.mu.Lock()
	p.noteShipDeletedLocked(k)
	p.mu.Unlock()
	if err := p.conf.FS.SyncDir(p.dimDir(k.dim)); err != nil {
		return fmt.Errorf("segment: delete region %v: %w", k, err)
	}
	if err := vfs.RemoveAll(p.conf.FS, dead); err != nil {
		return fmt.Errorf("segment: region %v is deleted, but removing its files failed (Open retries): %w", k, err)
	}
	return errors.Join(p.conf.FS.SyncDir(p.dimDir(k.dim)), p.takeBackgroundErr())
}

// exclusive claims the region k: callers that come after wait for the
// claim to end, those already inside finish, and then the region is closed
// if open. It returns a placeholder that keeps others from opening the
// region until the caller closes its gone channel.
func (p *Provider) exclusive(k segKey) (*seg, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, blazedb.ErrClosed
		}
		s, ok := p.segs[k]
		if !ok {
			ph := &seg{key: k, ready: make(chan struct{}), closing: true, gone: make(chan struct{})}
			close(ph.ready)
			p.segs[k] = ph
			p.mu.Unlock()
			return ph, nil
		}
		if s.closing {
			p.mu.Unlock()
			<-s.gone
			continue
		}
		s.closing = true // from now on acquire waits for gone
		for s.users > 0 {
			p.idle.Wait()
		}
		closed := p.closed
		p.mu.Unlock()
		<-s.ready
		if closed {
			// Close passed over the claimed region: close it here, keeping
			// its data, and give up.
			return nil, errors.Join(blazedb.ErrClosed, p.closeAll([]*seg{s}, false))
		}
		if s.db != nil {
			if err := s.db.Discard(); err != nil { // its files are about to go
				p.report(err)
			}
		}
		return s, nil
	}
}

// CompactSegment compacts the region holding pos in dim now.
func (p *Provider) CompactSegment(pos world.ChunkPos, dim world.Dimension) error {
	k, err := p.keyFor(pos, dim)
	if err != nil {
		return err
	}
	s, err := p.acquire(k, false)
	if err != nil {
		return fmt.Errorf("segment: compact region %v: %w", k, err)
	}
	defer p.release(s)
	return errors.Join(s.db.Engine().Compact(), p.takeBackgroundErr())
}

// Regions returns the directories of the regions of the segmented world in
// dir, each a Blaze database without a level.dat (open it with
// provider.Config{NoLevelDat: true}), in the order of dimension and name;
// none when dir is not segmented. Regions being deleted are left out.
// Tools use it to check, compact or convert a segmented world region by
// region; it opens nothing.
func Regions(dir string) ([]string, error) {
	var out []string
	for dim := range int32(3) {
		keys, err := regionsIn(vfs.Default, dir, dim)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			out = append(out, filepath.Join(dimDir(dir, k.dim), segName(k)))
		}
	}
	return out, nil
}
