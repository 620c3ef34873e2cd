package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// manifest is the manifest object (layout.go).
type manifest struct {
	Signature string        `json:"signature"`
	Version   int           `json:"version"`
	Epoch     uint64        `json:"epoch"`
	Owner     string        `json:"owner"`
	Renewed   time.Time     `json:"renewed"`
	Lease     time.Duration `json:"lease"`
	Epochs    []epochInfo   `json:"epochs"`
}

type epochInfo struct {
	Epoch uint64    `json:"epoch"`
	Owner string    `json:"owner"`
	Began time.Time `json:"began"`
}

func (m *manifest) encode() []byte {
	b, _ := json.MarshalIndent(m, "", "\t") // plain fields: cannot fail
	return append(b, '\n')
}

func decodeManifest(b []byte) (*manifest, error) {
	var m manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, manifestName, err)
	}
	switch {
	case m.Signature != manifestSignature:
		return nil, fmt.Errorf("%w: %s: signature %q, not %q", ErrCorrupt, manifestName, m.Signature, manifestSignature)
	case m.Version != manifestVersion:
		return nil, fmt.Errorf("%w: %s: version %d, this build reads %d", ErrCorrupt, manifestName, m.Version, manifestVersion)
	case m.Epoch == 0 || len(m.Epochs) == 0 || m.Epochs[len(m.Epochs)-1].Epoch != m.Epoch:
		return nil, fmt.Errorf("%w: %s: epoch %d is not the last of its epochs", ErrCorrupt, manifestName, m.Epoch)
	}
	for i := 1; i < len(m.Epochs); i++ {
		if m.Epochs[i].Epoch <= m.Epochs[i-1].Epoch {
			return nil, fmt.Errorf("%w: %s: epochs out of order", ErrCorrupt, manifestName)
		}
	}
	return &m, nil
}

// readManifest reads the manifest and its ETag; errNotFound if there is none.
func readManifest(ctx context.Context, s *Store) (*manifest, string, error) {
	b, etag, err := s.get(ctx, manifestName)
	if err != nil {
		return nil, "", err
	}
	m, err := decodeManifest(b)
	return m, etag, err
}

// acquire takes the replica for owner: it writes a manifest of the next
// epoch, conditional on the one it read (or on there being none), and
// returns it with its ETag. It refuses (ErrOwned) while another owner's
// lease runs, unless takeover is set.
func acquire(ctx context.Context, s *Store, owner string, lease time.Duration, takeover bool, now func() time.Time) (*manifest, string, error) {
	for attempt := 0; ; attempt++ {
		old, etag, err := readManifest(ctx, s)
		next := &manifest{Signature: manifestSignature, Version: manifestVersion, Epoch: 1, Owner: owner, Lease: lease}
		cond := condition{absent: true}
		switch {
		case errors.Is(err, errNotFound):
		case err != nil:
			return nil, "", err
		default:
			t := now()
			if old.Owner != owner && !takeover && t.Before(old.Renewed.Add(old.Lease)) {
				return nil, "", fmt.Errorf("%w: %s holds %s (epoch %d) until %v", ErrOwned, old.Owner, s, old.Epoch, old.Renewed.Add(old.Lease).Format(time.RFC3339))
			}
			next.Epoch, next.Epochs = old.Epoch+1, old.Epochs
			cond = condition{etag: etag}
		}
		next.Renewed = now()
		next.Epochs = append(next.Epochs[:len(next.Epochs):len(next.Epochs)], epochInfo{Epoch: next.Epoch, Owner: owner, Began: next.Renewed})
		b := next.encode()
		tag, err := s.put(ctx, manifestName, bytes.NewReader(b), int64(len(b)), cond)
		switch {
		case err == nil:
			return next, tag, nil
		case errors.Is(err, errPrecondition) && attempt < 3:
			continue // another writer raced us: look again
		case errors.Is(err, errPrecondition):
			return nil, "", fmt.Errorf("%w: the manifest of %s keeps changing: %v", ErrOwned, s, err)
		}
		return nil, "", err
	}
}

// renew writes m again with Renewed set to now, conditional on it being
// unchanged since etag was read or written; ErrFenced if it changed.
func renew(ctx context.Context, s *Store, m *manifest, etag string, now time.Time) (string, error) {
	if etag == "" {
		// Without one the write would not be conditional.
		return "", fmt.Errorf("replica: renew the manifest of %s: no ETag to make it conditional on", s)
	}
	next := *m
	next.Renewed = now
	b := next.encode()
	tag, err := s.put(ctx, manifestName, bytes.NewReader(b), int64(len(b)), condition{etag: etag})
	if errors.Is(err, errPrecondition) {
		// A renewal whose answer was lost (the connection cut after the
		// store wrote it) left the manifest ours under an ETag we never
		// saw. Only this writer writes its epoch: another writer, or this
		// owner starting again, writes a higher one.
		cur, curTag, rerr := readManifest(ctx, s)
		if rerr != nil {
			return "", fmt.Errorf("replica: renew the manifest: %v; then read it: %w", err, rerr)
		}
		if cur.Epoch != m.Epoch || cur.Owner != m.Owner {
			return "", fmt.Errorf("%w (epoch %d of %s; %s holds epoch %d): %v", ErrFenced, m.Epoch, s, cur.Owner, cur.Epoch, err)
		}
		tag, err = s.put(ctx, manifestName, bytes.NewReader(b), int64(len(b)), condition{etag: curTag})
		if errors.Is(err, errPrecondition) {
			return "", fmt.Errorf("%w (epoch %d of %s): the manifest changed as it was renewed: %v", ErrFenced, m.Epoch, s, err)
		}
	}
	if err != nil {
		return "", err
	}
	m.Renewed = now
	return tag, nil
}
