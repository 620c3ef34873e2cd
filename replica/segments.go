package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
)

// Segmented is a segmented world as a Replicator ships it:
// *segment.Provider. The root (settings, player spawns, the size of the
// regions) is shipped as a plain world is, under the replica's prefix;
// each region under regionsDir and its directory in the world (layout.go).
type Segmented interface {
	// Engine is the root's engine.
	Engine() *blazedb.DB
	// Sync makes every store that returned durable, in every region.
	Sync() error
	// ShipRegions calls ship, one region after another, for every region
	// open, every one written to while last open and not shipped since,
	// and with all every one on disk, each held open during the call;
	// and with a nil engine for every region deleted since. rel is the
	// region's directory in the world, slash-separated. A region whose
	// call failed is offered again at the next call.
	ShipRegions(all bool, ship func(rel string, db *blazedb.DB) error) error
}

// StartSegmented is Start for the segmented world w in dir: it ships the
// root and every region, each region on disk whole first in each epoch
// (opening it as a load would), then what is appended to each, a whole
// copy after a region's compaction, and a deletion mark when a region is
// deleted. Call Close before w's.
func StartSegmented(ctx context.Context, w Segmented, dir string, store *Store, conf Config) (*Replicator, error) {
	return start(ctx, w.Engine(), w, dir, store, conf)
}

// regionName is what a region's directory in the world (and its prefix
// within the replica's) must look like.
var regionName = regexp.MustCompile(`^regions/[0-9]+/r\.-?[0-9]+\.-?[0-9]+$`)

// shipRegions ships what ShipRegions offers; r.shipMu is held.
func (r *Replicator) shipRegions(ctx context.Context, renewFirst func() error) error {
	err := r.regions.ShipRegions(!r.offered, func(rel string, db *blazedb.DB) error {
		if !regionName.MatchString(rel) {
			return fmt.Errorf("replica: %q is not a region's directory", rel)
		}
		if db == nil {
			return r.shipDeletion(ctx, rel, renewFirst)
		}
		p := r.parts[rel]
		if p == nil {
			np := newPart(r.store.sub(rel), filepath.Join(r.world, filepath.FromSlash(rel)))
			p = &np
			r.parts[rel] = p
		}
		if err := r.shipPart(ctx, p, db, renewFirst); err != nil {
			return fmt.Errorf("region %s: %w", rel, err)
		}
		return nil
	})
	if err == nil {
		r.offered = true
	}
	return err
}

// shipDeletion uploads the mark of region rel's deletion, after which a
// restore takes none of its objects shipped before; a region made again
// there later is shipped whole, from the start.
func (r *Replicator) shipDeletion(ctx context.Context, rel string, renewFirst func() error) error {
	if err := renewFirst(); err != nil {
		return err
	}
	o := deletionObject{epoch: r.man.Epoch, time: r.conf.Now()}
	if _, err := r.store.sub(rel).put(ctx, o.name(), bytes.NewReader(nil), 0, condition{}); err != nil {
		return fmt.Errorf("region %s: %w", rel, err)
	}
	delete(r.parts, rel)
	r.updateStats(func(s *Stats) { s.Uploads++ })
	return nil
}

// sub is the store at dir within s's prefix.
func (s *Store) sub(dir string) *Store {
	return &Store{c: s.c, bucket: s.bucket, prefix: s.prefix + dir + "/"}
}

// listRegions returns the directories of the regions the replica in store
// holds objects of, sorted.
func listRegions(ctx context.Context, store *Store) ([]string, error) {
	names, err := store.list(ctx, regionsDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		parts := strings.SplitN(n, "/", 4)
		if len(parts) < 4 {
			return nil, fmt.Errorf("%w: %s is not a region's object", ErrCorrupt, n)
		}
		rel := strings.Join(parts[:3], "/")
		if !regionName.MatchString(rel) {
			return nil, fmt.Errorf("%w: %s is not a region's object", ErrCorrupt, n)
		}
		if len(out) == 0 || out[len(out)-1] != rel {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// deletedAt returns when the region under store was last deleted by at
// (zero if it was not), of the marks valid in m.
func deletedAt(ctx context.Context, store *Store, m *manifest, at time.Time) (time.Time, error) {
	names, err := store.list(ctx, deletedDir)
	if err != nil {
		return time.Time{}, err
	}
	valid := validIn(m, at)
	var last time.Time
	for _, n := range names {
		o, ok := parseDeletionObject(n)
		if !ok {
			return time.Time{}, fmt.Errorf("%w: %s is not a deletion mark's name", ErrCorrupt, n)
		}
		if valid(o.epoch, o.time) && o.time.After(last) {
			last = o.time
		}
	}
	return last, nil
}

// restoreRegions rebuilds into tmp, the segmented world's directory being
// built, each region of rels (listRegions) the replica held at at,
// verified as the root is. It returns how many regions and objects it
// restored.
func restoreRegions(ctx context.Context, store *Store, m *manifest, at time.Time, tmp string, rels []string) (regions, objects int, err error) {
	made := map[string]bool{}
	for _, rel := range rels {
		sub := store.sub(rel)
		from, err := deletedAt(ctx, sub, m, at)
		if err != nil {
			return 0, 0, err
		}
		plan, err := planRestore(ctx, sub, m, at, from)
		if errors.Is(err, ErrNoReplica) {
			continue // made after at, or deleted by then
		}
		if err != nil {
			return 0, 0, err
		}
		dir := filepath.Join(tmp, filepath.FromSlash(rel))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, 0, err
		}
		if err := plan.build(ctx, sub, dir); err != nil {
			return 0, 0, fmt.Errorf("region %s: %w", rel, err)
		}
		made[filepath.Dir(dir)] = true
		regions++
		objects += plan.report.Objects
	}
	if regions > 0 {
		made[filepath.Join(tmp, "regions")] = true
	}
	for dir := range made {
		if err := vfs.Default.SyncDir(dir); err != nil {
			return 0, 0, err
		}
	}
	return regions, objects, nil
}
