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

// CURRENT names the overlay's current generation and the edition of the
// template it began on. Renaming a new one into place is the commit point
// of a reset, made durable after it (commit.go). It is one line of text,
// its fields separated by single spaces:
//
//	| field      | value                                                   |
//	|------------|---------------------------------------------------------|
//	| signature  | "blaze-overlay"                                         |
//	| version    | "2", in decimal                                         |
//	| generation | "gen-" and its number, at least 6 digits                |
//	| template   | the template's provider.Edition, 32 lowercase hex       |
//	|            | digits, or "-" for a template without one               |
//	| end        | "\n"                                                    |
//
// e.g. "blaze-overlay 2 gen-000007 9f86d081884c7d659a2feaa0c55ad015\n".
// The generation's directory has the same name. Version 1 (without the
// template field, "blaze-overlay 1 gen-000007\n") and the unsigned form
// before it ("gen-000007\n") were never released: they are refused with
// blazedb.ErrOldVersion. From now on a change of this format is a new
// version, and the reader of every released one stays (version_test.go).
//
// The constants of the format (part of it: never change them):
const (
	currentName      = "CURRENT"
	currentSignature = "blaze-overlay"
	currentVersion   = 2
	genPrefix        = "gen-"
	noEdition        = "-"
)

func genName(n int) string { return fmt.Sprintf("%s%06d", genPrefix, n) }

// editionText returns e as CURRENT writes it.
func editionText(e provider.Edition) string {
	if e.IsZero() {
		return noEdition
	}
	return e.String()
}

// current is what CURRENT says.
type current struct {
	gen int
	// template is the edition of the template generation gen began on.
	template provider.Edition
}

// encodeCurrent returns CURRENT's contents naming generation n, begun on a
// template of edition e.
func encodeCurrent(n int, e provider.Edition) []byte {
	return fmt.Appendf(nil, "%s %d %s %s\n", currentSignature, currentVersion, genName(n), editionText(e))
}

// parseCurrent returns what CURRENT's contents b say. It refuses anything
// but the format above: a newer version with blazedb.ErrVersion, a
// well-formed CURRENT of a version no release wrote with
// blazedb.ErrOldVersion (which wraps it), the rest with blazedb.ErrCorrupt.
func parseCurrent(b []byte) (current, error) {
	line, ok := strings.CutSuffix(string(b), "\n")
	if !ok || strings.Contains(line, "\n") {
		return current{}, fmt.Errorf("%w: %s is not one line: %q", blazedb.ErrCorrupt, currentName, b)
	}
	f := strings.Split(line, " ")
	if len(f) == 1 {
		if _, ok := parseGenName(f[0]); ok {
			return current{}, fmt.Errorf("%w: %s names %s without a signature, a development format no release wrote; this build reads version %d", blazedb.ErrOldVersion, currentName, f[0], currentVersion)
		}
	}
	if len(f) < 3 || f[0] != currentSignature {
		return current{}, fmt.Errorf("%w: %s holds %q, not an overlay's generation", blazedb.ErrCorrupt, currentName, line)
	}
	v, err := strconv.Atoi(f[1])
	switch {
	case err != nil || v < 1 || strconv.Itoa(v) != f[1]:
		return current{}, fmt.Errorf("%w: %s holds version %q", blazedb.ErrCorrupt, currentName, f[1])
	case v > currentVersion:
		return current{}, fmt.Errorf("%w: %s is version %d, newer than this build reads (%d)", blazedb.ErrVersion, currentName, v, currentVersion)
	case v == 1 && len(f) == 3:
		if _, ok := parseGenName(f[2]); ok {
			return current{}, fmt.Errorf("%w: %s is version 1, a development format no release wrote; this build reads version %d", blazedb.ErrOldVersion, currentName, currentVersion)
		}
	}
	if v != currentVersion || len(f) != 4 {
		// Only the exact forms above are an old version: anything else
		// is damage, which Open treats as such (an arena is reset).
		return current{}, fmt.Errorf("%w: %s holds %q, not version %d's four fields", blazedb.ErrCorrupt, currentName, line, currentVersion)
	}
	var c current
	if c.gen, ok = parseGenName(f[2]); !ok {
		return current{}, fmt.Errorf("%w: %s names %q, not a generation", blazedb.ErrCorrupt, currentName, f[2])
	}
	if f[3] != noEdition {
		if c.template, err = provider.ParseEdition(f[3]); err != nil {
			return current{}, fmt.Errorf("%s: template: %w", currentName, err)
		} else if c.template.IsZero() {
			return current{}, fmt.Errorf("%w: %s: a template without an edition is %q", blazedb.ErrCorrupt, currentName, noEdition)
		}
	}
	return c, nil
}

// parseGenName returns the number of the generation named name.
func parseGenName(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, genPrefix)
	n, err := strconv.Atoi(digits)
	return n, ok && err == nil && n >= 1 && genName(n) == name
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
		// The last reset's commit first, so that it is durable soon; a
		// failure is reported by its discard, and is no reason to fail
		// the spare, which is not committed.
		p.syncCommit()
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
// background, once the commit that replaced it is durable: until then a
// crash may bring it back as current.
func (p *Provider) discard(n int, db *provider.DB) {
	p.bg.wg.Add(1)
	go func() {
		defer p.bg.wg.Done()
		var err error
		if db != nil {
			err = db.Discard()
		}
		if cerr := p.syncCommit(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("kept until a reset is durable: %w", cerr))
		} else {
			err = errors.Join(err, vfs.RemoveAll(p.conf.FS, filepath.Join(p.dir, genName(n))))
		}
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
		// Not synced into p.dir here: the commit that makes it current
		// syncs p.dir, and until then a crash may well lose it.
		if err := p.conf.FS.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := provider.WriteSettings(p.genFS(n), dir, p.template.Settings()); err != nil {
			return nil, err
		}
	}
	return provider.Config{
		Log: p.conf.Log, Durability: p.conf.Durability, CacheBytes: p.conf.CacheBytes,
		ColumnCacheBytes: p.conf.ColumnCacheBytes, FS: p.genFS(n), Blocks: reg,
	}.Open(dir)
}

// newestGeneration returns the number of the newest generation in the
// directory, 0 for none.
func (p *Provider) newestGeneration() (int, error) {
	names, err := p.conf.FS.List(p.dir)
	if err != nil {
		return 0, err
	}
	newest := 0
	for _, name := range names {
		if n, ok := parseGenName(name); ok {
			newest = max(newest, n)
		}
	}
	return newest, nil
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
