package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/minio/minio-go/v7"
)

// Prune deletes the objects of the replica in store that no restore at
// horizon or later reads, and returns how many it deleted: the log objects
// of every generation (and epoch) before the one a restore at horizon
// starts from, each world file's copies older than the one a restore at
// horizon takes, and a region's objects from before its last deletion by
// horizon. Before it deletes any under a prefix (the root's or a
// region's), it marks the prefix pruned to horizon (prunedObject): Restore
// and Points then refuse every time before horizon (ErrNoReplica), as a
// restore then could miss what was deleted, a whole region of a segmented
// world included. When the replica holds no whole copy as early as
// horizon, nothing is deleted. A horizon after now prunes to now (a later
// time reads as the newest); a zero horizon is refused. Safe while a
// writer ships: it deletes only what the writer will not read or write
// again.
func Prune(ctx context.Context, store *Store, horizon time.Time) (int, error) {
	if horizon.IsZero() {
		return 0, errors.New("replica: prune: no horizon")
	}
	if now := time.Now(); horizon.After(now) {
		horizon = now
	}
	m, _, err := readManifest(ctx, store)
	if errors.Is(err, errNotFound) {
		return 0, fmt.Errorf("%w at %s", ErrNoReplica, store)
	}
	if err != nil {
		return 0, err
	}
	n, err := prune(ctx, store, m, horizon, false)
	if err != nil {
		return n, err
	}
	regions, err := listRegions(ctx, store)
	if err != nil {
		return n, err
	}
	for _, rel := range regions {
		k, err := prune(ctx, store.sub(rel), m, horizon, true)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// prune is Prune of the objects under store, a world's or (region) a
// region's prefix, with the replica's manifest m.
func prune(ctx context.Context, store *Store, m *manifest, horizon time.Time, region bool) (int, error) {
	var from time.Time // the region's last deletion by horizon
	if region {
		var err error
		if from, err = deletedAt(ctx, store, m, horizon); err != nil {
			return 0, err
		}
	}
	plan, err := planRestore(ctx, store, m, horizon, from)
	// A region deleted by horizon and not made again by then: nothing of
	// it before the deletion is read, nothing after is pruned.
	gone := errors.Is(err, ErrNoReplica) && !from.IsZero()
	if errors.Is(err, ErrNoReplica) && !gone {
		return 0, nil
	}
	if err != nil && !gone {
		return 0, err
	}
	var doomed []string
	names, err := store.list(ctx, logDir)
	if err != nil {
		return 0, err
	}
	for _, n := range names {
		o, ok := parseLogObject(n)
		switch {
		case !ok:
		case o.time.Before(from):
			doomed = append(doomed, n)
		case !gone && (o.epoch < plan.report.Epoch || o.epoch == plan.report.Epoch && o.gen < plan.report.Generation):
			doomed = append(doomed, n)
		}
	}
	kept := map[string]time.Time{}
	if !gone {
		for _, f := range plan.files {
			kept[f.file] = f.time
		}
	}
	if names, err = store.list(ctx, fileDir); err != nil {
		return 0, err
	}
	for _, n := range names {
		o, ok := parseFileObject(n)
		t, has := kept[o.file]
		if ok && (o.time.Before(from) || has && o.time.Before(t)) {
			doomed = append(doomed, n)
		}
	}
	if len(doomed) == 0 {
		return 0, nil
	}
	// The mark first: a prune cut short has deleted nothing unmarked.
	if _, err := store.put(ctx, prunedObject(horizon), bytes.NewReader(nil), 0, condition{absent: true}); err != nil && !errors.Is(err, errPrecondition) {
		return 0, fmt.Errorf("mark pruned to %v: %w", horizon, err)
	}
	for i, n := range doomed {
		if err := store.c.RemoveObject(ctx, store.bucket, store.prefix+n, minio.RemoveObjectOptions{}); err != nil {
			return i, store.classify("delete", n, err)
		}
	}
	// Earlier marks under the prefix say less than this one: gone, so that
	// retention's prunes leave one mark a prefix, not one each.
	marks, err := store.list(ctx, prunedDir)
	if err != nil {
		return len(doomed), err
	}
	for _, n := range marks {
		if t, ok := parsePrunedObject(n); ok && t.Before(horizon) {
			if err := store.c.RemoveObject(ctx, store.bucket, store.prefix+n, minio.RemoveObjectOptions{}); err != nil {
				return len(doomed), store.classify("delete", n, err)
			}
		}
	}
	return len(doomed), nil
}

// prunedTo returns the newest horizon the replica in store was pruned to,
// at its root or in any of its regions (listRegions) (zero if never): a
// restore before it may miss what the prune deleted.
func prunedTo(ctx context.Context, store *Store, regions []string) (time.Time, error) {
	newest := func(s *Store, h time.Time) (time.Time, error) {
		names, err := s.list(ctx, prunedDir)
		if err != nil {
			return h, err
		}
		for _, n := range names {
			t, ok := parsePrunedObject(n)
			if !ok {
				return h, fmt.Errorf("%w: %s is not a prune mark's name", ErrCorrupt, n)
			}
			if t.After(h) {
				h = t
			}
		}
		return h, nil
	}
	h, err := newest(store, time.Time{})
	if err != nil {
		return h, err
	}
	for _, rel := range regions {
		if h, err = newest(store.sub(rel), h); err != nil {
			return h, err
		}
	}
	return h, nil
}
