package replica

import "errors"

var (
	// ErrBadURL: a replica's address is not s3://BUCKET/PREFIX, or its
	// endpoint is not an http(s) URL.
	ErrBadURL = errors.New("replica: bad address")
	// ErrOwned: another writer holds the replica (its lease has not run
	// out): a second server opening the same replica is refused.
	ErrOwned = errors.New("replica: owned by another writer")
	// ErrFenced: the manifest changed under this writer (another took the
	// replica, its lease having run out): it uploads nothing more.
	ErrFenced = errors.New("replica: fenced: another writer took the replica")
	// ErrCorrupt: an object of the replica is not what its format says,
	// or the replica lacks an object a restore needs.
	ErrCorrupt = errors.New("replica: corrupt replica")
	// ErrNoReplica: there is no replica at the address, or none as early
	// as the time asked for.
	ErrNoReplica = errors.New("replica: no replica")
	// ErrClosed: the Replicator was closed.
	ErrClosed = errors.New("replica: closed")
)
