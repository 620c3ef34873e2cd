package overlay

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

const currentName = "CURRENT"

func genName(n int) string { return fmt.Sprintf("gen-%06d", n) }

type spareGen struct {
	n   int
	db  *provider.DB
	err error
}

// prepareSpare creates generation n in the background. The caller holds
// p.mu (or p is not shared yet).
func (p *Provider) prepareSpare(n int) {
	reg := p.reg
	p.bg.wg.Add(1)
	go func() {
		defer p.bg.wg.Done()
		db, err := p.openGeneration(n, true, reg)
		p.bg.spare <- spareGen{n: n, db: db, err: err}
	}()
}

// takeSpare waits for the prepared generation.
func (p *Provider) takeSpare() (spareGen, error) {
	s := <-p.bg.spare
	if s.err != nil {
		return s, fmt.Errorf("prepare generation %d: %w", s.n, s.err)
	}
	return s, nil
}

// discard closes an old generation unsynced and deletes it, in the
// background.
func (p *Provider) discard(n int, db *provider.DB) {
	p.bg.wg.Add(1)
	go func() {
		defer p.bg.wg.Done()
		var err error
		if db != nil {
			err = db.Discard()
		}
		err = errors.Join(err, vfs.RemoveAll(p.conf.FS, filepath.Join(p.dir, genName(n))))
		if err != nil {
			p.bg.Lock()
			p.bg.err = errors.Join(p.bg.err, fmt.Errorf("delete generation %d: %w", n, err))
			p.bg.Unlock()
		}
	}()
}

// openGeneration opens generation n; a new one starts with the template's
// settings in its own level.dat.
func (p *Provider) openGeneration(n int, fresh bool, reg world.BlockRegistry) (*provider.DB, error) {
	dir := filepath.Join(p.dir, genName(n))
	if fresh {
		if err := p.conf.FS.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := provider.WriteSettings(p.conf.FS, dir, p.template.Settings()); err != nil {
			return nil, err
		}
	}
	return provider.Config{
		Log: p.conf.Log, Durability: p.conf.Durability, CacheBytes: p.conf.CacheBytes,
		ColumnCacheBytes: p.conf.ColumnCacheBytes, FS: p.conf.FS, Blocks: reg,
	}.Open(dir)
}

// removeGenerationsBut deletes every generation but keep: the ones a crash
// left behind (a spare, or one a reset replaced).
func (p *Provider) removeGenerationsBut(keep int) error {
	names, err := p.conf.FS.List(p.dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.HasPrefix(n, "gen-") && n != genName(keep) {
			if err := vfs.RemoveAll(p.conf.FS, filepath.Join(p.dir, n)); err != nil {
				return fmt.Errorf("remove %s: %w", n, err)
			}
		}
	}
	return nil
}
