package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/replica"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// The replica's cost (issue 39), against versitygw on loopback, which
// shares the machine's cores with the server it measures: the figures
// include the client's and the object store's work.

// replicaInterval is the shipping interval of the "on" benchmarks: a tenth
// of the default, so that a benchmark of a second sees ten shipments.
const replicaInterval = 100 * time.Millisecond

// replicaStore opens a store in a bucket of srv under prefix.
func replicaStore(b *testing.B, srv *s3test.Server, prefix string) *replica.Store {
	st, err := replica.OpenStore("s3://bench/"+prefix, replica.Endpoint{URL: srv.URL, AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey})
	if err != nil {
		b.Fatal(err)
	}
	if err := st.MakeBucket(b.Context()); err != nil {
		b.Fatal(err)
	}
	return st
}

// shipped is a world open with blaze-balanced, shipping to st when st is
// not nil.
type shipped struct {
	*provider.DB
	rep *replica.Replicator
}

func openShipped(b *testing.B, dir string, st *replica.Store) *shipped {
	p := &shipped{DB: openBlaze(b, dir, blazedb.DurabilityBalanced).(*provider.DB)}
	if st != nil {
		rep, err := replica.Start(b.Context(), p.Engine(), dir, st, replica.Config{Interval: replicaInterval, Logger: quiet, Owner: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		p.rep = rep
	}
	return p
}

// finish ships the rest, then closes the world; a failed shipment fails
// the benchmark, so "on" never measures a replicator that gave up.
func (p *shipped) finish(b *testing.B) {
	if p.rep != nil {
		if err := p.rep.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
		if s := p.rep.Stats(); s.Failures > 0 {
			b.Fatalf("%d shipments failed: %s", s.Failures, s.LastError)
		}
	}
	if err := p.DB.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReplicaCost times stores and loads of BenchmarkStoreColumn's and
// BenchmarkLoadColumn's realistic columns in blaze-balanced with shipping
// off and on (ship=on: a Replicator uploading every replicaInterval). The
// loads run while a writer stores a changed column every 5 ms elsewhere in
// the world, in both, so that "on" ships while they run. Compare with
// benchstat -col /ship.
func BenchmarkReplicaCost(b *testing.B) {
	srv := s3test.Start(b)
	cols := realistic(benchColumns)
	for _, ship := range []string{"off", "on"} {
		var st *replica.Store
		if ship == "on" {
			st = replicaStore(b, srv, b.Name())
		}
		// The same subjects as BenchmarkStoreColumn's "changed" and "new".
		for _, k := range storeKinds(cols)[:2] {
			b.Run("store-"+k.name+"/ship="+ship, func(b *testing.B) {
				dir := b.TempDir()
				if !k.empty {
					filled(b, contenders[0], dir, cols).Close()
				}
				p := openShipped(b, dir, st)
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if err := k.store(p, i); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				p.finish(b)
			})
		}
		b.Run("load-hot/ship="+ship, func(b *testing.B) {
			dir := b.TempDir()
			filled(b, contenders[0], dir, cols).Close()
			p := openShipped(b, dir, st)
			stop := backgroundStores(b, p, cols)
			for i := range cols {
				p.LoadColumn(pos(i), world.Overworld)
			}
			time.Sleep(100 * time.Millisecond) // as loadHot: the cache fills in a pause
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := p.LoadColumn(pos(i%len(cols)), world.Overworld); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			stop()
			p.finish(b)
		})
		b.Run("load-cold/ship="+ship, func(b *testing.B) {
			dir := b.TempDir()
			filled(b, contenders[0], dir, cols).Close()
			// A provider opened without its column cache: every load
			// reads and decodes its record, as the first load of a
			// column does, with no reopening between rounds.
			p := &shipped{DB: openNoCache(b, dir)}
			if st != nil {
				rep, err := replica.Start(b.Context(), p.Engine(), dir, st, replica.Config{Interval: replicaInterval, Logger: quiet, Owner: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				p.rep = rep
			}
			stop := backgroundStores(b, p, cols)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := p.LoadColumn(pos(i%len(cols)), world.Overworld); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			stop()
			p.finish(b)
		})
	}
}

// openNoCache opens dir with blaze-balanced and no caches.
func openNoCache(b *testing.B, dir string) *provider.DB {
	db, err := provider.Config{Log: quiet, CacheBytes: -1, ColumnCacheBytes: -1}.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// backgroundStores stores a changed column every 5 ms at positions the
// loads do not read, until the function it returns is called.
func backgroundStores(b *testing.B, p *shipped, cols []*chunk.Column) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		col := worldtest.Synthetic(7, world.Overworld, world.DefaultBlockRegistry)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-t.C:
			}
			worldtest.ChangeOneBlock(col, i)
			if err := p.StoreColumn(world.ChunkPos{int32(i % 16), 1000}, world.Overworld, col); err != nil {
				b.Error(err)
				return
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// BenchmarkRestore10k restores the tiled world of 10,000 columns (the
// world-scale benchmarks', stored by blaze-balanced) from its replica: the
// whole copy shipped at the replicator's start, downloaded, written,
// verified record by record and given an edition of its own. MB/s is of
// chunks.dat.
func BenchmarkRestore10k(b *testing.B) {
	srv := s3test.Start(b)
	st := replicaStore(b, srv, "restore10k")
	dir := tiled(b, contenders[0])
	p := openShipped(b, dir, st)
	if err := p.rep.Ship(b.Context()); err != nil {
		b.Fatal(err)
	}
	_, size, err := p.Engine().DurableLog()
	if err != nil {
		b.Fatal(err)
	}
	p.finish(b)
	b.SetBytes(size)
	out := b.TempDir()
	for b.Loop() {
		rdir := filepath.Join(out, "restored")
		rep, err := replica.Restore(b.Context(), st, rdir, time.Time{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if rep.LogBytes != size {
			b.Fatalf("restored %d bytes of chunks.dat, shipped %d", rep.LogBytes, size)
		}
		os.RemoveAll(rdir)
		b.StartTimer()
	}
}

// BenchmarkRestart10k is a server's restart on the tiled world of 10,000
// columns with its replica: open the world, start the replicator, ship
// (its first shipment), close both. "resumed" starts on the replica the
// last run shipped, and carries its log on after hashing it locally;
// "whole" starts on a new prefix each time, as every restart did before
// resuming, and uploads the whole log. uploaded-B/op is what the start
// uploaded.
func BenchmarkRestart10k(b *testing.B) {
	srv := s3test.Start(b)
	dir := tiled(b, contenders[0])
	for _, mode := range []string{"resumed", "whole"} {
		b.Run(mode, func(b *testing.B) {
			st := replicaStore(b, srv, "restart-"+mode)
			openShipped(b, dir, st).finish(b) // the replica the first restart resumes
			var uploaded int64
			for b.Loop() {
				if mode == "whole" {
					st = replicaStore(b, srv, fmt.Sprintf("restart-whole-%d", time.Now().UnixNano()))
				}
				p := openShipped(b, dir, st)
				if err := p.rep.Ship(b.Context()); err != nil {
					b.Fatal(err)
				}
				uploaded += p.rep.Stats().UploadBytes
				p.finish(b)
			}
			b.ReportMetric(float64(uploaded)/float64(b.N), "uploaded-B/op")
		})
	}
}
