package overlay

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// CURRENT names the overlay's current generation. Replacing it (temp file,
// fsync, rename, fsync of the directory) is the commit point of a reset. It
// is one line of text, its fields separated by single spaces:
//
//	| field      | value                                    |
//	|------------|------------------------------------------|
//	| signature  | "blaze-overlay"                          |
//	| version    | "1", in decimal                          |
//	| generation | "gen-" and its number, at least 6 digits |
//	| end        | "\n"                                     |
//
// e.g. "blaze-overlay 1 gen-000007\n". The generation's directory has the
// same name. Overlays written before the format had a signature hold the
// generation and the newline alone, and are read as version 1.
//
// The constants of the format (part of it: never change them):
const (
	currentName      = "CURRENT"
	currentSignature = "blaze-overlay"
	currentVersion   = 1
	genPrefix        = "gen-"
)

func genName(n int) string { return fmt.Sprintf("%s%06d", genPrefix, n) }

// encodeCurrent returns CURRENT's contents naming generation n.
func encodeCurrent(n int) []byte {
	return fmt.Appendf(nil, "%s %d %s\n", currentSignature, currentVersion, genName(n))
}

// parseCurrent returns the generation CURRENT's contents b name. It refuses
// anything but the format above: a newer version with blazedb.ErrVersion,
// the rest with blazedb.ErrCorrupt.
func parseCurrent(b []byte) (int, error) {
	line, ok := strings.CutSuffix(string(b), "\n")
	if !ok || strings.Contains(line, "\n") {
		return 0, fmt.Errorf("%w: %s is not one line: %q", blazedb.ErrCorrupt, currentName, b)
	}
	name := line
	if f := strings.Split(line, " "); len(f) != 1 {
		if len(f) != 3 || f[0] != currentSignature {
			return 0, fmt.Errorf("%w: %s holds %q, not an overlay's generation", blazedb.ErrCorrupt, currentName, line)
		}
		v, err := strconv.Atoi(f[1])
		switch {
		case err != nil || v < 1 || strconv.Itoa(v) != f[1]:
			return 0, fmt.Errorf("%w: %s holds version %q", blazedb.ErrCorrupt, currentName, f[1])
		case v > currentVersion:
			return 0, fmt.Errorf("%w: %s is version %d, newer than this build reads (%d)", blazedb.ErrVersion, currentName, v, currentVersion)
		}
		name = f[2]
	}
	digits, ok := strings.CutPrefix(name, genPrefix)
	n, err := strconv.Atoi(digits)
	if !ok || err != nil || n < 1 || genName(n) != name {
		return 0, fmt.Errorf("%w: %s names %q, not a generation", blazedb.ErrCorrupt, currentName, name)
	}
	return n, nil
}

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
		if strings.HasPrefix(n, genPrefix) && n != genName(keep) {
			if err := vfs.RemoveAll(p.conf.FS, filepath.Join(p.dir, n)); err != nil {
				return fmt.Errorf("remove %s: %w", n, err)
			}
		}
	}
	return nil
}
