package replica

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/overlay"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 39: an arena template published once by content digest, pulled by
// digest into a local cache (verified, then served from the cache without
// the store), and an overlay opened over it; a template whose bytes were
// changed in the store is refused.
func TestTemplateByDigest(t *testing.T) {
	srv := s3test.Start(t)
	st := testStore(t, srv, "templates")
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "arena-map")
	db := openWorld(t, dir)
	want := columns{{9, 9}: nil}
	store(t, db, want, map[world.ChunkPos]uint64{{0, 0}: 1, {1, 0}: 2})
	if _, err := PublishTemplate(ctx, st, dir); err == nil {
		t.Fatal("a world a server has open was published")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	digest, err := PublishTemplate(ctx, st, dir)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := PublishTemplate(ctx, st, dir); err != nil || again != digest {
		t.Fatalf("published again: %s, %v; want %s", again, err, digest)
	}

	cache := filepath.Join(t.TempDir(), "cache")
	got, err := PullTemplate(ctx, st, digest, cache)
	if err != nil {
		t.Fatal(err)
	}
	compareWorld(t, got, want)
	tmpl, err := provider.Config{Log: quiet, ReadOnly: true}.Open(got)
	if err != nil {
		t.Fatal(err)
	}
	o, err := overlay.Config{Log: quiet}.Open(tmpl, filepath.Join(t.TempDir(), "match"))
	if err != nil {
		t.Fatal(err)
	}
	col, err := o.LoadColumn(world.ChunkPos{1, 0}, world.Overworld)
	if err == nil {
		err = worldtest.Compare(col, want[world.ChunkPos{1, 0}])
	}
	if err != nil {
		t.Errorf("a column through the overlay: %v", err)
	}
	o.Shutdown()
	tmpl.Close()

	// From the cache: the store is not asked.
	srv.Stop()
	if again, err := PullTemplate(ctx, st, digest, cache); err != nil || again != got {
		t.Fatalf("pulled from the cache: %s, %v", again, err)
	}
	srv.Restart()

	// A byte changed in the store: refused, and nothing left in the cache.
	level := filepath.Join(srv.Dir, "worlds", "templates", "template", digest, "f", "level.dat")
	b, err := os.ReadFile(level)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(level, b, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "cache")
	if _, err := PullTemplate(ctx, st, digest, other); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a changed template pulled: %v; want ErrCorrupt", err)
	}
	if _, err := os.Stat(filepath.Join(other, digest)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a template that failed verification is in the cache: %v", err)
	}
	if _, err := PullTemplate(ctx, st, "0123", other); !errors.Is(err, ErrBadURL) {
		t.Errorf("a malformed digest: %v", err)
	}
}
