package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Store is a replica's place in an S3-compatible object store: a bucket
// and a prefix, reached through minio-go (a maintained client with the
// conditional writes the manifest needs: If-None-Match and If-Match on
// PutObject). Safe for concurrent use.
type Store struct {
	c      *minio.Client
	bucket string
	prefix string // "" or ending in "/"
}

// Endpoint is where the object store is and who we are to it.
type Endpoint struct {
	// URL is the store's base URL, http:// or https://; default
	// https://s3.amazonaws.com.
	URL                  string
	AccessKey, SecretKey string
	SessionToken, Region string
	// MaxRetries is how many times the client tries a request (default
	// minio-go's, 10); the replicator retries on top with its own backoff.
	MaxRetries int
}

// EndpointFromEnv reads the standard AWS environment variables:
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION or
// AWS_DEFAULT_REGION.
func EndpointFromEnv() Endpoint {
	first := func(names ...string) string {
		for _, n := range names {
			if v := os.Getenv(n); v != "" {
				return v
			}
		}
		return ""
	}
	return Endpoint{
		URL:          first("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
		AccessKey:    os.Getenv("AWS_ACCESS_KEY_ID"),
		SecretKey:    os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
		Region:       first("AWS_REGION", "AWS_DEFAULT_REGION"),
	}
}

// ParseURL splits s3://BUCKET/PREFIX into its bucket and prefix (without a
// trailing slash; it may be empty).
func ParseURL(s string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(s, "s3://")
	bucket, prefix, _ = strings.Cut(rest, "/")
	prefix = strings.Trim(prefix, "/")
	if !ok || bucket == "" {
		return "", "", fmt.Errorf("%w: %q is not s3://BUCKET/PREFIX", ErrBadURL, s)
	}
	return bucket, prefix, nil
}

// OpenStore returns the Store for target (s3://BUCKET/PREFIX) at ep. It
// makes no request.
func OpenStore(target string, ep Endpoint) (*Store, error) {
	bucket, prefix, err := ParseURL(target)
	if err != nil {
		return nil, err
	}
	raw := ep.URL
	if raw == "" {
		raw = "https://s3.amazonaws.com"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: endpoint %q is not http(s)://HOST[:PORT]", ErrBadURL, raw)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(ep.AccessKey, ep.SecretKey, ep.SessionToken),
		Secure:       u.Scheme == "https",
		Region:       ep.Region,
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   ep.MaxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("replica: client for %s: %w", raw, err)
	}
	if prefix != "" {
		prefix += "/"
	}
	return &Store{c: c, bucket: bucket, prefix: prefix}, nil
}

// String returns the store as s3://BUCKET/PREFIX.
func (s *Store) String() string {
	return "s3://" + s.bucket + "/" + strings.TrimSuffix(s.prefix, "/")
}

// MakeBucket creates the store's bucket unless it exists: for tests and
// first setup.
func (s *Store) MakeBucket(ctx context.Context) error {
	ok, err := s.c.BucketExists(ctx, s.bucket)
	if err != nil || ok {
		return err
	}
	return s.c.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{})
}

// condition is what a put requires of the object already there.
type condition struct {
	absent bool   // If-None-Match: *
	etag   string // If-Match
}

// errPrecondition: the condition of a put did not hold (HTTP 412).
var errPrecondition = errors.New("replica: precondition failed")

// errNotFound: no such object.
var errNotFound = errors.New("replica: no such object")

// put writes the object name (relative to the prefix) of size bytes from
// r, under cond, and returns its ETag.
func (s *Store) put(ctx context.Context, name string, r io.Reader, size int64, cond condition) (string, error) {
	return s.putMeta(ctx, name, r, size, cond, nil)
}

// putMeta is put with the object's user metadata (x-amz-meta-KEY: VALUE).
func (s *Store) putMeta(ctx context.Context, name string, r io.Reader, size int64, cond condition, meta map[string]string) (string, error) {
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", UserMetadata: meta}
	if cond.absent {
		opts.SetMatchETagExcept("*")
	}
	if cond.etag != "" {
		opts.SetMatchETag(cond.etag)
		// A conditional write must be one request: a multipart upload
		// would apply it only at the end, and the manifest is small.
		opts.DisableMultipart = true
	}
	info, err := s.c.PutObject(ctx, s.bucket, s.prefix+name, r, size, opts)
	if err != nil {
		return "", s.classify("put", name, err)
	}
	return info.ETag, nil
}

// get reads the whole object name and its ETag, in one request where the
// client allows. Should the client make another, conditional on the ETag
// the first saw, an object replaced meanwhile (the manifest, renewed by
// its writer) fails with errPrecondition, and is read again.
func (s *Store) get(ctx context.Context, name string) ([]byte, string, error) {
	for attempt := 0; ; attempt++ {
		b, etag, err := s.getOnce(ctx, name)
		if !errors.Is(err, errPrecondition) || attempt == 4 {
			return b, etag, err
		}
	}
}

func (s *Store) getOnce(ctx context.Context, name string) ([]byte, string, error) {
	obj, err := s.c.GetObject(ctx, s.bucket, s.prefix+name, minio.GetObjectOptions{})
	if err != nil {
		return nil, "", s.classify("get", name, err)
	}
	defer obj.Close()
	// Read first: the first request is then one GET of the whole object,
	// which Stat answers from; a Stat first is a request of its own.
	var b bytes.Buffer
	if _, err := io.Copy(&b, obj); err != nil {
		return nil, "", s.classify("get", name, err)
	}
	info, err := obj.Stat()
	if err != nil {
		return nil, "", s.classify("get", name, err)
	}
	if info.ETag == "" { // the manifest's conditional writes need it
		return nil, "", fmt.Errorf("replica: get %s: the store gave no ETag", s.prefix+name)
	}
	return b.Bytes(), info.ETag, nil
}

// meta returns the user metadata of the object name, keys in lower case.
func (s *Store) meta(ctx context.Context, name string) (map[string]string, error) {
	info, err := s.c.StatObject(ctx, s.bucket, s.prefix+name, minio.StatObjectOptions{})
	if err != nil {
		return nil, s.classify("stat", name, err)
	}
	out := map[string]string{}
	for k, v := range info.UserMetadata {
		out[strings.ToLower(k)] = v
	}
	return out, nil
}

// list returns the names (relative to the prefix) of the objects under
// dir, in lexical order.
func (s *Store) list(ctx context.Context, dir string) ([]string, error) {
	var names []string
	for o := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + dir, Recursive: true}) {
		if o.Err != nil {
			return nil, s.classify("list", dir, o.Err)
		}
		names = append(names, strings.TrimPrefix(o.Key, s.prefix))
	}
	return names, nil
}

// classify wraps err with what was done, and errPrecondition or
// errNotFound where the store's answer says so.
func (s *Store) classify(op, name string, err error) error {
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed":
		err = fmt.Errorf("%w (%v)", errPrecondition, err)
	case resp.StatusCode == http.StatusNotFound || resp.Code == "NoSuchKey":
		err = fmt.Errorf("%w (%v)", errNotFound, err)
	}
	return fmt.Errorf("replica: %s %s/%s%s: %w", op, s.bucket, s.prefix, name, err)
}
