package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/replica"
)

// startReplica takes the replica at url (s3://BUCKET/PREFIX; the endpoint
// and credentials from the AWS environment variables) for the world in
// dir and starts shipping it (package replica, issue 39).
func startReplica(db *provider.DB, dir, url string, log *slog.Logger) (*replica.Replicator, error) {
	store, err := replica.OpenStore(url, replica.EndpointFromEnv())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := replica.Start(ctx, db.Engine(), dir, store, replica.Config{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", url, err)
	}
	log.Info("shipping the world to its replica", "to", store.String(), "epoch", rep.Stats().Epoch)
	return rep, nil
}

// replicated is the world provider the server is given with a replica:
// the world, whose Close (the server's, after its worlds stored what they
// held) first ships the rest to the replica.
type replicated struct {
	*provider.DB
	rep *replica.Replicator
	log *slog.Logger
}

// Close ships what is left and closes the world, returning the replica's
// failures not reported yet with the world's.
func (w replicated) Close() error {
	// The stores still queued (provider/storequeue.go) reach the log, and
	// the log the disk, before the last shipment reads it.
	serr := w.DB.Sync()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := w.rep.Close(ctx)
	if err != nil {
		w.log.Error("replica: the last shipment, or an earlier one, failed", "err", err)
		err = fmt.Errorf("replica: %w", err)
	}
	return errors.Join(serr, err, w.DB.Close())
}

// pullTemplate pulls the arena template src names, s3://BUCKET/PREFIX@DIGEST
// (blaze publish), into cache (default the user's cache directory's
// blaze-templates), verified, and returns its directory there.
func pullTemplate(src, cache string, log *slog.Logger) (string, error) {
	url, digest, ok := strings.Cut(src, "@")
	if !ok {
		return "", fmt.Errorf("arena template %s: %w: not s3://BUCKET/PREFIX@DIGEST", src, replica.ErrBadURL)
	}
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("arena template %s: no cache directory: %w", src, err)
		}
		cache = filepath.Join(base, "blaze-templates")
	}
	store, err := replica.OpenStore(url, replica.EndpointFromEnv())
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir, err := replica.PullTemplate(ctx, store, digest, cache)
	if err != nil {
		return "", err
	}
	log.Info("arena template pulled by digest", "from", url, "digest", digest, "into", dir)
	return dir, nil
}
