package replica

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Point is a time a restore can be asked for (Restore's at) that gives a
// world no earlier time gives: the time of one or more objects a writer
// shipped. A restore at any time from a Point until the next gives the
// same world.
type Point struct {
	Time  time.Time // the objects' time: when their bytes were durable (the writer's clock)
	Epoch uint64    // the writer's
	// LogBytes are the log bytes shipped then, of the root and any
	// region; Whole counts the whole copies of a log among them.
	LogBytes int64
	Whole    int
	// Objects counts the objects shipped then, world files and a
	// segmented world's regions' included.
	Objects int
}

// Points lists, oldest first, the points in time the replica in store can
// be restored to: every time objects were shipped that a restore reads,
// from the oldest whole copy of the world's log and the newest horizon it
// was pruned to (Restore before either fails with ErrNoReplica) on. Objects of a writer fenced late, shipped after
// the next epoch began, are left out, as Restore leaves them out.
func Points(ctx context.Context, store *Store) ([]Point, error) {
	m, _, err := readManifest(ctx, store)
	if errors.Is(err, errNotFound) {
		return nil, fmt.Errorf("%w at %s", ErrNoReplica, store)
	}
	if err != nil {
		return nil, err
	}
	valid := validIn(m, time.Time{})
	at := map[time.Time]*Point{}
	point := func(epoch uint64, t time.Time) *Point {
		p := at[t]
		if p == nil {
			p = &Point{Time: t, Epoch: epoch}
			at[t] = p
		}
		p.Objects++
		return p
	}
	var first time.Time // of the root's oldest whole copy
	// add counts the objects under s, the root's or a region's prefix.
	add := func(s *Store, root bool) error {
		names, err := s.list(ctx, logDir)
		if err != nil {
			return err
		}
		for _, n := range names {
			o, ok := parseLogObject(n)
			if !ok {
				return fmt.Errorf("%w: %s is not a log object's name", ErrCorrupt, n)
			}
			if !valid(o.epoch, o.time) {
				continue
			}
			p := point(o.epoch, o.time)
			p.LogBytes += o.end - o.start
			if o.start == 0 {
				p.Whole++
				if root && (first.IsZero() || o.time.Before(first)) {
					first = o.time
				}
			}
		}
		names, err = s.list(ctx, fileDir)
		if err != nil {
			return err
		}
		for _, n := range names {
			if o, ok := parseFileObject(n); !ok {
				return fmt.Errorf("%w: %s is not a world file object's name", ErrCorrupt, n)
			} else if valid(o.epoch, o.time) {
				point(o.epoch, o.time)
			}
		}
		if root {
			return nil
		}
		names, err = s.list(ctx, deletedDir)
		if err != nil {
			return err
		}
		for _, n := range names {
			if o, ok := parseDeletionObject(n); !ok {
				return fmt.Errorf("%w: %s is not a deletion mark's name", ErrCorrupt, n)
			} else if valid(o.epoch, o.time) {
				point(o.epoch, o.time)
			}
		}
		return nil
	}
	if err := add(store, true); err != nil {
		return nil, err
	}
	regions, err := listRegions(ctx, store)
	if err != nil {
		return nil, err
	}
	for _, rel := range regions {
		if err := add(store.sub(rel), false); err != nil {
			return nil, err
		}
	}
	if first.IsZero() {
		return nil, fmt.Errorf("%w: %s holds no copy of chunks.dat", ErrNoReplica, store)
	}
	pruned, err := prunedTo(ctx, store, regions)
	if err != nil {
		return nil, err
	}
	var out []Point
	for t, p := range at {
		if !t.Before(first) && !t.Before(pruned) {
			out = append(out, *p)
		}
	}
	slices.SortFunc(out, func(a, b Point) int { return cmp.Compare(a.Time.UnixNano(), b.Time.UnixNano()) })
	return out, nil
}
