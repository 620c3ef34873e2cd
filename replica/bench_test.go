package replica

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/s3test"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 39: the bytes uploaded per changed column, and the time of a
// shipment: one column changed and stored, then shipped (the manifest's
// renewal and one log object), against versitygw on loopback.
func BenchmarkShipChangedColumn(b *testing.B) {
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
	col := worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)
	if err := db.StoreColumn(world.ChunkPos{}, world.Overworld, col); err != nil {
		b.Fatal(err)
	}
	if err := rep.Ship(ctx); err != nil {
		b.Fatal(err)
	}
	before := rep.Stats().UploadBytes
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		c := worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)
		worldtest.ChangeOneBlock(c, i)
		if err := db.StoreColumn(world.ChunkPos{}, world.Overworld, c); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := rep.Ship(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rep.Stats().UploadBytes-before)/float64(b.N), "uploaded-B/column")
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
