package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/minio/minio-go/v7"
)

// Prune deletes the objects of the replica in store that no restore at
// horizon or later reads, and returns how many it deleted: the log objects
// of every generation (and epoch) before the one a restore at horizon
// starts from, and each world file's copies older than the one a restore
// at horizon takes. A restore before horizon may then fail
// (ErrNoReplica). When the replica holds no whole copy as early as
// horizon, nothing is deleted. Safe while a writer ships: it deletes only
// what the writer will not read or write again.
func Prune(ctx context.Context, store *Store, horizon time.Time) (int, error) {
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
// region's prefix, with the replica's manifest m. A region's objects
// from before its last deletion by horizon are not pruned.
func prune(ctx context.Context, store *Store, m *manifest, horizon time.Time, region bool) (int, error) {
	var from time.Time
	if region {
		var err error
		if from, err = deletedAt(ctx, store, m, horizon); err != nil {
			return 0, err
		}
	}
	plan, err := planRestore(ctx, store, m, horizon, from)
	if errors.Is(err, ErrNoReplica) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var doomed []string
	names, err := store.list(ctx, logDir)
	if err != nil {
		return 0, err
	}
	base := plan.report
	for _, n := range names {
		o, ok := parseLogObject(n)
		if ok && !o.time.Before(from) && (o.epoch < base.Epoch || o.epoch == base.Epoch && o.gen < base.Generation) {
			doomed = append(doomed, n)
		}
	}
	kept := map[string]time.Time{}
	for _, f := range plan.files {
		kept[f.file] = f.time
	}
	if names, err = store.list(ctx, fileDir); err != nil {
		return 0, err
	}
	for _, n := range names {
		o, ok := parseFileObject(n)
		if t, has := kept[o.file]; ok && has && o.time.Before(t) {
			doomed = append(doomed, n)
		}
	}
	for i, n := range doomed {
		if err := store.c.RemoveObject(ctx, store.bucket, store.prefix+n, minio.RemoveObjectOptions{}); err != nil {
			return i, store.classify("delete", n, err)
		}
	}
	return len(doomed), nil
}
