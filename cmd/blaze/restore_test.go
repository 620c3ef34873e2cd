package main

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/replica"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

// Issue 39 item 3: blaze restore s3://BUCKET/PREFIX DIR [-at TIME] rebuilds
// the world a server shipped, as it was at each time, from the endpoint
// and credentials of the AWS environment variables.
func TestRestoreCommand(t *testing.T) {
	srv := s3test.Start(t)
	srv.SetEnv(t)
	const url = "s3://replicas/arena-1"
	st, err := replica.OpenStore(url, replica.EndpointFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := st.MakeBucket(ctx); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "world")
	db, err := provider.Config{}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replica.Start(ctx, db.Engine(), dir, st, replica.Config{Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	put := func(x int32, seed uint64) {
		t.Helper()
		if err := db.StoreColumn(world.ChunkPos{x, 0}, world.Overworld, worldtest.Synthetic(seed, world.Overworld, world.DefaultBlockRegistry)); err != nil {
			t.Fatal(err)
		}
		// Written off the caller's goroutine (issue 42): the replica ships
		// the log, which holds the store once Sync has written it.
		if err := db.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	put(0, 1)
	if err := rep.Ship(ctx); err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	time.Sleep(5 * time.Millisecond)
	put(0, 2)
	// A new generation, shipped whole at the close: what prune deletes
	// below is the first one's.
	if err := db.Engine().Compact(); err != nil {
		t.Fatal(err)
	}
	put(1, 3)
	if err := rep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		at    []string
		seed0 uint64
		has1  bool
	}{{[]string{"-at", t1.Format(time.RFC3339Nano)}, 1, false}, {nil, 2, true}} {
		out := filepath.Join(t.TempDir(), "restored")
		stdout, stderr, code := blaze(t, append([]string{"restore", url, out}, c.at...)...)
		if code != exitOK || !strings.Contains(stdout, "every record verified") {
			t.Fatalf("blaze restore %v: status %d, stdout %q, stderr %q", c.at, code, stdout, stderr)
		}
		got, err := provider.Config{ReadOnly: true}.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		c0, err := got.LoadColumn(world.ChunkPos{0, 0}, world.Overworld)
		if err != nil {
			t.Fatal(err)
		}
		if err := colcmp.Compare(c0, worldtest.Synthetic(c.seed0, world.Overworld, world.DefaultBlockRegistry)); err != nil {
			t.Errorf("restore %v: column 0,0: %v", c.at, err)
		}
		_, err = got.LoadColumn(world.ChunkPos{1, 0}, world.Overworld)
		if c.has1 != (err == nil) || (err != nil && !errors.Is(err, leveldb.ErrNotFound)) {
			t.Errorf("restore %v: column 1,0: %v", c.at, err)
		}
		got.Close()
		// The directory exists now: refused.
		if _, _, code := blaze(t, "restore", url, out); code != exitFailed {
			t.Errorf("blaze restore into an existing directory: status %d", code)
		}
	}
	// Issue 39 item 3: blaze replica points lists the times a restore can
	// be asked for; the last one by t1 restores the world as it was then.
	// In this process: each blaze() starts one, which costs a second
	// under the race detector.
	var points strings.Builder
	if code := runReplicaPoints(&points, url, replica.EndpointFromEnv()); code != exitOK {
		t.Fatalf("blaze replica points: status %d", code)
	}
	var byT1 time.Time
	lines := strings.Split(strings.TrimSpace(points.String()), "\n")
	for _, line := range lines {
		at, err := time.Parse(time.RFC3339Nano, strings.Fields(line)[0])
		if err != nil || !strings.Contains(line, "epoch 1") {
			t.Fatalf("blaze replica points: line %q: %v", line, err)
		}
		if !at.After(t1) {
			byT1 = at
		}
	}
	if len(lines) < 2 || byT1.IsZero() || !strings.Contains(lines[0], "whole copy") {
		t.Fatalf("blaze replica points: %q; want a whole copy first, a point by %v and one after", points.String(), t1)
	}
	out := filepath.Join(t.TempDir(), "at-point")
	if code := runRestore(io.Discard, url, out, byT1, replica.EndpointFromEnv()); code != exitOK {
		t.Fatalf("blaze restore -at %v: status %d", byT1, code)
	}
	got, err := provider.Config{ReadOnly: true}.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := got.LoadColumn(world.ChunkPos{1, 0}, world.Overworld); !errors.Is(err, leveldb.ErrNotFound) {
		t.Errorf("restore at the point %v: column 1,0 stored after it: %v", byT1, err)
	}
	got.Close()
	// blaze replica prune -before now deletes the first generation's
	// objects: a restore at t1 then finds nothing; the newest still works.
	var pruned strings.Builder
	if code := runReplicaPrune(&pruned, url, time.Now(), replica.EndpointFromEnv()); code != exitOK || strings.HasPrefix(strings.Fields(pruned.String())[1], "0") {
		t.Errorf("blaze replica prune: status %d, %q", code, pruned.String())
	}
	if code := runRestore(io.Discard, url, filepath.Join(t.TempDir(), "pruned"), t1, replica.EndpointFromEnv()); code != exitFailed {
		t.Errorf("blaze restore -at %v after pruning it: status %d", t1, code)
	}
	if code := runRestore(io.Discard, url, filepath.Join(t.TempDir(), "newest"), time.Time{}, replica.EndpointFromEnv()); code != exitOK {
		t.Errorf("blaze restore after pruning: status %d", code)
	}
	if code := replicaCmd([]string{"prune", url}); code != exitUsage {
		t.Errorf("blaze replica prune without -before: status %d, want %d", code, exitUsage)
	}
	if code := replicaCmd([]string{"list", url}); code != exitUsage {
		t.Errorf("blaze replica list: status %d, want %d", code, exitUsage)
	}
	if code := runReplicaPoints(io.Discard, "s3://replicas/none", replica.EndpointFromEnv()); code != exitFailed {
		t.Errorf("blaze replica points of a missing replica: status %d", code)
	}

	// Issue 39: blaze publish prints the digest a server pulls the
	// template by; the world must be closed.
	stdout, stderr, code := blaze(t, "publish", dir, "s3://replicas/templates")
	digest := strings.TrimSpace(stdout)
	if code != exitOK || len(digest) != 64 {
		t.Fatalf("blaze publish: status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	tst, err := replica.OpenStore("s3://replicas/templates", replica.EndpointFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replica.PullTemplate(ctx, tst, digest, t.TempDir()); err != nil {
		t.Fatalf("pull the published template: %v", err)
	}
	if _, _, code := blaze(t, "restore", url, filepath.Join(t.TempDir(), "x"), "-at", "yesterday"); code != exitUsage {
		t.Errorf("blaze restore -at yesterday: status %d, want %d", code, exitUsage)
	}
	if _, stderr, code := blaze(t, "restore", "s3://replicas/none", filepath.Join(t.TempDir(), "x")); code != exitFailed || !strings.Contains(stderr, "no replica") {
		t.Errorf("blaze restore of a missing replica: status %d, %q", code, stderr)
	}
}
