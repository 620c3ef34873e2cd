package blazedb

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// A checkpoint rewrites index.dat while the database is open, covering
// only what is durable: after a power loss Open loads it and scans only
// what followed, and every acknowledged value is there.
func TestIndexCheckpoint(t *testing.T) {
	for _, mode := range []Durability{DurabilityFast, DurabilityBalanced, DurabilitySafe} {
		t.Run(mode.String(), func(t *testing.T) {
			fs := vfstest.NewMem()
			opts := Options{FS: fs, Logger: quiet, Durability: mode, ExternalMaintenance: true,
				IndexCheckpointBytes: 64 << 10, DisableAutoCompaction: true}
			db, err := Open("/db", opts)
			if err != nil {
				t.Fatal(err)
			}
			want := map[Key][]byte{}
			put := func(from, to int) {
				for i := from; i < to; i++ {
					k := Key{X: int32(i % 40), Z: int32(i / 40)}
					want[k] = value(i, 4<<10)
					if err := db.Put(k, want[k]); err != nil {
						t.Fatal(err)
					}
				}
				if err := db.PutNamed("last", []byte{byte(to)}); err != nil {
					t.Fatal(err)
				}
			}
			put(0, 100) // about 400 KiB: a checkpoint is due
			if err := db.Maintain(); err != nil {
				t.Fatal(err)
			}
			if db.Stats().Checkpoints != 1 {
				t.Fatalf("%d checkpoints", db.Stats().Checkpoints)
			}
			covered := db.checkpointed.Load()
			// Power loss right after it, nothing synced since (DurabilityFast
			// never syncs a write): index.dat covers only durable bytes.
			{
				clone := fs.CrashClone(rand.New(rand.NewPCG(3, 4)), 0)
				db1, err := Open("/db", Options{FS: clone, Logger: quiet})
				if err != nil {
					t.Fatal(err)
				}
				if rec := db1.Recovery(); !rec.IndexLoaded || rec.ScannedBytes != 0 {
					t.Fatalf("recovery right after a checkpoint: %+v", rec)
				}
				for k, v := range want {
					if got, err := db1.Get(k); err != nil || !bytes.Equal(got, v) {
						t.Fatalf("%v after a crash right after the checkpoint: %v", k, err)
					}
				}
				db1.Close()
			}
			if err := db.Maintain(); err != nil || db.Stats().Checkpoints != 1 {
				t.Fatalf("a second checkpoint with nothing new: %v", err)
			}
			put(100, 110) // below the threshold: no checkpoint
			if err := db.Maintain(); err != nil || db.Stats().Checkpoints != 1 {
				t.Fatalf("checkpoint before the threshold: %v", err)
			}
			if err := db.Sync(); err != nil {
				t.Fatal(err)
			}
			// Power loss: only what was synced survives.
			clone := fs.CrashClone(rand.New(rand.NewPCG(1, 2)), 0)
			db.Close()
			db2, err := Open("/db", Options{FS: clone, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			defer db2.Close()
			rec := db2.Recovery()
			if !rec.IndexLoaded || rec.ScannedBytes <= 0 || rec.ScannedBytes > 64<<10 {
				t.Fatalf("recovery %+v: index.dat should cover %d bytes and leave the rest to a short scan", rec, covered)
			}
			for k, v := range want {
				got, err := db2.Get(k)
				if err != nil || !bytes.Equal(got, v) {
					t.Fatalf("%v after the crash: %v", k, err)
				}
			}
			if v, err := db2.GetNamed("last"); err != nil || v[0] != 110 {
				t.Fatalf("last: %v %v", v, err)
			}
			if err := db2.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The background goroutine checkpoints on its own once enough is written.
func TestIndexCheckpointInBackground(t *testing.T) {
	db := open(t, vfstest.NewMem(), "/db", Options{Durability: DurabilityFast, IndexCheckpointBytes: 32 << 10})
	for i := range 40 {
		if err := db.Put(Key{X: int32(i)}, value(i, 4<<10)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for db.Stats().Checkpoints == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint in the background")
		}
		time.Sleep(time.Millisecond)
	}
}
