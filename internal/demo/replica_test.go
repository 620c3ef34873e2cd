package demo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/replica"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 39: the demo with -replica s3://... (endpoint and credentials from
// the AWS environment variables) ships the world, its close ships the
// rest, and blaze restore's Restore rebuilds what was stored; a second
// server on the same replica is refused.
func TestReplica(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	const url = "s3://demo/lobby"
	st, err := replica.OpenStore(url, replica.EndpointFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.MakeBucket(t.Context()); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "w")
	r, err := Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet, Replica: url}.New()
	if err != nil {
		t.Fatal(err)
	}
	if r.Replica == nil {
		t.Fatal("no replicator")
	}
	col := worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)
	if err := r.World.StoreColumn(world.ChunkPos{2, 3}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	if _, err := (Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "other"), Offline: true, Log: quiet, Replica: url}).New(); !errors.Is(err, replica.ErrOwned) {
		t.Fatalf("a second server on the same replica: %v; want ErrOwned", err)
	}
	if _, err := (Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "arena"), ArenaTemplate: dir, Log: quiet, Replica: url}).New(); err == nil {
		t.Fatal("a replica of an arena's disposable changes was accepted")
	}
	// Closed as the server closes: each world, the overworld last, which
	// closes the provider.
	r.Prefetcher.Close()
	if r.checkpoints != nil {
		r.checkpoints.Stop()
	}
	for _, w := range []*world.World{r.Server.End(), r.Server.Nether(), r.Server.World()} {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if s := r.Replica.Stats(); s.Uploads == 0 || s.Failures != 0 {
		t.Fatalf("replica stats at the close: %+v", s)
	}

	out := filepath.Join(t.TempDir(), "restored")
	if _, err := replica.Restore(t.Context(), st, out, time.Time{}); err != nil {
		t.Fatal(err)
	}
	db, err := provider.Config{Log: quiet, ReadOnly: true}.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.LoadColumn(world.ChunkPos{2, 3}, world.Overworld)
	if err == nil {
		err = worldtest.Compare(col, got)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Issue 39: -arena s3://BUCKET/PREFIX@DIGEST pulls a template published
// by digest into the cache, verified, and serves an arena over it.
func TestArenaTemplateByDigest(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	const url = "s3://demo/templates"
	st, err := replica.OpenStore(url, replica.EndpointFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.MakeBucket(t.Context()); err != nil {
		t.Fatal(err)
	}
	tmplDir := filepath.Join(t.TempDir(), "map")
	db, err := provider.Config{Log: quiet}.Open(tmplDir)
	if err != nil {
		t.Fatal(err)
	}
	col := worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry)
	if err := db.StoreColumn(world.ChunkPos{4, 4}, world.Overworld, worldtest.Synthetic(3, world.Overworld, world.DefaultBlockRegistry)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	digest, err := replica.PublishTemplate(t.Context(), st, tmplDir)
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	r, err := Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "arena"), Offline: true, Log: quiet,
		ArenaTemplate: url + "@" + digest, TemplateCache: cache}.New()
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Arena.LoadColumn(world.ChunkPos{4, 4}, world.Overworld)
	if err == nil {
		err = worldtest.Compare(col, got)
	}
	r.Prefetcher.Close()
	r.Arena.Shutdown()
	r.World.Close()
	if err != nil {
		t.Fatalf("the template's column through the arena: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cache, digest)); err != nil {
		t.Errorf("the template is not in the cache: %v", err)
	}
	if _, err := (Config{Addr: "127.0.0.1:0", Dir: filepath.Join(t.TempDir(), "a2"), Offline: true, Log: quiet,
		ArenaTemplate: url, TemplateCache: cache}).New(); !errors.Is(err, replica.ErrBadURL) {
		t.Errorf("a template address without a digest: %v", err)
	}
}
