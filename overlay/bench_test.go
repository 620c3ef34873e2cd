package overlay

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
	"github.com/blazeworld/blaze/internal/fsutil"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/mcdb"
)

// arenaSide is the arena of the issue: 24 x 24 chunks.
const arenaSide = 24

// BenchmarkResetOverlay times ResetOverlay on a 24x24 arena after a match
// changed 10, 100 or 1,000 columns: the cost must not grow with them.
//
// slow-fsync (issue 35 item 18) times it after a match changed 10 columns,
// on a disk whose every fsync takes slowFsync: a reset must not wait for
// one. Between resets the background work of the last one (its spare, the
// old generation's deletion) is let finish untimed, as a match's minutes
// would.
func BenchmarkResetOverlay(b *testing.B) {
	tp := openTemplate(b, template(b, arenaSide))
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	for _, dirty := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("dirty=%d", dirty), func(b *testing.B) {
			o, err := Config{Log: quiet}.Open(tp, filepath.Join(b.TempDir(), "arena"))
			if err != nil {
				b.Fatal(err)
			}
			defer o.Shutdown()
			for b.Loop() {
				b.StopTimer()
				for i := 0; i < dirty; i++ {
					pos := world.ChunkPos{int32(i % 40), int32(i / 40)}
					col, err := o.LoadColumn(pos, world.Overworld)
					if err != nil {
						col = worldtest.Synthetic(uint64(i), world.Overworld, world.DefaultBlockRegistry)
					}
					col.Chunk.SetBlock(1, 1, 1, 0, obsidian)
					if err := o.StoreColumn(pos, world.Overworld, col); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if err := o.ResetOverlay(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("slow-fsync", func(b *testing.B) {
		o, err := Config{Log: quiet, FS: slowFsyncFS()}.Open(tp, filepath.Join(b.TempDir(), "arena"))
		if err != nil {
			b.Fatal(err)
		}
		defer o.Shutdown()
		for b.Loop() {
			b.StopTimer()
			for i := 0; i < 10; i++ {
				pos := world.ChunkPos{int32(i), 0}
				col, err := o.LoadColumn(pos, world.Overworld)
				if err != nil {
					b.Fatal(err)
				}
				col.Chunk.SetBlock(1, 1, 1, 0, obsidian)
				if err := o.StoreColumn(pos, world.Overworld, col); err != nil {
					b.Fatal(err)
				}
			}
			o.bg.wg.Wait()
			b.StartTimer()
			if err := o.ResetOverlay(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// slowFsync is the latency of every fsync (of a file or a directory) on
// the slow disk of BenchmarkResetOverlay/slow-fsync: a disk that commits
// each one to stable media, as many cloud volumes do.
const slowFsync = 9 * time.Millisecond

// slowFsyncFS is the operating system's filesystem with every fsync
// slowFsync slower.
func slowFsyncFS() vfs.FS {
	return vfstest.Inject(vfs.Default, func(op vfstest.Op, name string) error {
		if op == vfstest.OpSync || op == vfstest.OpSyncDir {
			time.Sleep(slowFsync)
		}
		return nil
	})
}

// BenchmarkArenaMemory opens 100 arenas on one template, each of which
// changes 0, 10 or 50 columns, and reports the heap each arena adds.
func BenchmarkArenaMemory(b *testing.B) {
	tp := openTemplate(b, template(b, arenaSide))
	obsidian := worldtest.States(world.DefaultBlockRegistry)["minecraft:obsidian"]
	for _, dirty := range []int{0, 10, 50} {
		b.Run(fmt.Sprintf("dirty=%d", dirty), func(b *testing.B) {
			for b.Loop() {
				base := b.TempDir()
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				var arenas []*Provider
				for a := 0; a < 100; a++ {
					o, err := Config{Log: quiet}.Open(tp, filepath.Join(base, fmt.Sprint(a)))
					if err != nil {
						b.Fatal(err)
					}
					for i := 0; i < dirty; i++ {
						pos := world.ChunkPos{int32(i % arenaSide), int32((a + i/arenaSide) % arenaSide)}
						col, _ := o.LoadColumn(pos, world.Overworld)
						col.Chunk.SetBlock(2, 2, 2, 0, obsidian)
						o.StoreColumn(pos, world.Overworld, col)
					}
					arenas = append(arenas, o)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/100/1024, "heap-KiB/arena")
				for _, o := range arenas {
					o.Shutdown()
				}
			}
		})
	}
}

// BenchmarkArenaCycle compares what it takes to give the next match a
// fresh 24x24 arena: ResetOverlay, against what servers do today, copying
// the template's LevelDB world directory and opening it.
func BenchmarkArenaCycle(b *testing.B) {
	tdir := template(b, arenaSide)
	tp := openTemplate(b, tdir)
	b.Run("blaze-overlay-reset", func(b *testing.B) {
		o, err := Config{Log: quiet}.Open(tp, filepath.Join(b.TempDir(), "arena"))
		if err != nil {
			b.Fatal(err)
		}
		defer o.Shutdown()
		for b.Loop() {
			if err := o.ResetOverlay(); err != nil {
				b.Fatal(err)
			}
		}
	})
	ldb := filepath.Join(b.TempDir(), "template-leveldb")
	mc, err := mcdb.Config{Log: quiet}.Open(ldb)
	if err != nil {
		b.Fatal(err)
	}
	for x := int32(0); x < arenaSide; x++ {
		for z := int32(0); z < arenaSide; z++ {
			col, _ := tp.LoadColumn(world.ChunkPos{x, z}, world.Overworld)
			mc.StoreColumn(world.ChunkPos{x, z}, world.Overworld, col)
		}
	}
	mc.Close()
	b.Run("mcdb-copy-directory", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			dst := filepath.Join(b.TempDir(), fmt.Sprint("match", i))
			if err := fsutil.CopyTree(ldb, dst, nil); err != nil {
				b.Fatal(err)
			}
			m, err := mcdb.Config{Log: quiet}.Open(dst)
			if err != nil {
				b.Fatal(err)
			}
			m.Close()
		}
	})
}

// BenchmarkLoadPrefetched loads, through the overlay and from the template
// directly, a template column the match did not change, right after a
// prefetch left its ready copy: what a predicted load costs the World's
// tick, so what the overlay adds to it shows. Run it a set number of
// times (make bench: -benchtime 20000x): every iteration also prefetches,
// untimed, so the default second of timed loads would take minutes.
func BenchmarkLoadPrefetched(b *testing.B) {
	tp := openTemplate(b, template(b, 4))
	o, err := Config{Log: quiet}.Open(tp, filepath.Join(b.TempDir(), "arena"))
	if err != nil {
		b.Fatal(err)
	}
	defer o.Shutdown()
	for name, p := range map[string]interface {
		world.Provider
		Prefetch(world.ChunkPos, world.Dimension) (bool, error)
	}{"template": tp, "overlay": o} {
		b.Run(name, func(b *testing.B) {
			pos := world.ChunkPos{2, 2}
			for b.Loop() {
				b.StopTimer()
				if _, err := p.Prefetch(pos, world.Overworld); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := p.LoadColumn(pos, world.Overworld); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
