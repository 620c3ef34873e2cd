package replica

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Issue 39: the bytes uploaded per changed column, and the time of a
// shipment: n columns changed (one block each) and stored, then shipped
// (the manifest's renewal and one log object), against versitygw on
// loopback. uploaded-B/column counts the objects' bytes, not the
// manifest's renewal nor the requests' headers.
func BenchmarkShipChangedColumn(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("columns=%d", n), func(b *testing.B) { benchShipChanged(b, n) })
	}
}

func benchShipChanged(b *testing.B, n int) {
	srv := s3test.Start(b)
	st := testStore(b, srv, "ship")
	ctx := b.Context()
	dir := filepath.Join(b.TempDir(), "world")
	db := openWorld(b, dir)
	defer db.Close()
	rep, err := Start(ctx, db.Engine(), dir, st, Config{Interval: time.Hour, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer rep.Close(ctx)
	cols := make([]*chunk.Column, n)
	for i := range cols {
		cols[i] = worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
		if err := db.StoreColumn(world.ChunkPos{int32(i), 0}, world.Overworld, cols[i]); err != nil {
			b.Fatal(err)
		}
	}
	if err := rep.Ship(ctx); err != nil {
		b.Fatal(err)
	}
	before := rep.Stats().UploadBytes
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		for j, c := range cols {
			worldtest.ChangeOneBlock(c, i)
			if err := db.StoreColumn(world.ChunkPos{int32(j), 0}, world.Overworld, c); err != nil {
				b.Fatal(err)
			}
		}
		if err := db.Sync(); err != nil { // the store queue's stores in the log
			b.Fatal(err)
		}
		b.StartTimer()
		if err := rep.Ship(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rep.Stats().UploadBytes-before)/float64(b.N*n), "uploaded-B/column")
}

// Issue 39: the time to restore a world of 1,000 columns shipped as a
// whole copy and appended objects (verification included).
func BenchmarkRestore1k(b *testing.B) {
	srv := s3test.Start(b)
	st := testStore(b, srv, "restore")
	ctx := b.Context()
	dir := filepath.Join(b.TempDir(), "world")
	db := openWorld(b, dir)
	rep, err := Start(ctx, db.Engine(), dir, st, Config{Interval: time.Hour, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		c := worldtest.Synthetic(uint64(i%16), world.Overworld, world.DefaultBlockRegistry)
		if err := db.StoreColumn(world.ChunkPos{int32(i % 32), int32(i / 32)}, world.Overworld, c); err != nil {
			b.Fatal(err)
		}
		if i%100 == 99 {
			if err := rep.Ship(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := db.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := rep.Close(ctx); err != nil {
		b.Fatal(err)
	}
	_, size, _ := db.Engine().DurableLog()
	db.Close()
	b.SetBytes(size)
	for i := 0; b.Loop(); i++ {
		if _, err := Restore(ctx, st, filepath.Join(b.TempDir(), fmt.Sprint(i)), time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}
