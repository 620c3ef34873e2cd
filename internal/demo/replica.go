package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := w.rep.Close(ctx)
	if err != nil {
		w.log.Error("replica: the last shipment, or an earlier one, failed", "err", err)
		err = fmt.Errorf("replica: %w", err)
	}
	return errors.Join(err, w.DB.Close())
}
