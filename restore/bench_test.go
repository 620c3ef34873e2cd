package restore_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/restore"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl64"
)

// benchWorlds writes a source world of synthetic columns covering an
// area of side chunks and a margin of one, and a copy of it as the target.
func benchWorlds(b *testing.B, side int32) (src, dst string) {
	b.Helper()
	dir := b.TempDir()
	src, dst = dir+"/src", dir+"/dst"
	db := openDB(b, src)
	a := restore.Area{Dim: world.Overworld, Max: world.ChunkPos{side - 1, side - 1}}
	each(a, 1, func(pos world.ChunkPos) {
		col := worldtest.Synthetic(uint64(pos[0]*1000+pos[1]+5000), world.Overworld, world.DefaultBlockRegistry)
		col.Entities, col.ScheduledBlocks = nil, nil
		if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
			b.Fatal(err)
		}
	})
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	copyDir(b, src, dst)
	return src, dst
}

// BenchmarkLiveRestore restores an area of a real ticking World after a
// match changed blocks spread across it (obsidian placed and holes dug
// around the surface), with a viewer holding every chunk of the area as
// players would. It reports the job's time per tick (p50, p99, max over
// every tick of every run; wall-clock, and the CPU time of the slice's
// thread, which a busy machine does not inflate) and the ticks a restore
// used.
//
//	go test -run '^$' -bench LiveRestore -benchtime 3x ./restore/
func BenchmarkLiveRestore(b *testing.B) {
	for _, c := range []struct {
		side    int32
		changes int
	}{
		{24, 0}, {24, 1000}, {24, 10000}, {8, 10000}, {16, 10000}, {24, 50000}, {32, 10000},
	} {
		b.Run(fmt.Sprintf("area=%dx%d/changes=%d", c.side, c.side, c.changes), func(b *testing.B) {
			benchRestore(b, c.side, c.changes)
		})
	}
}

func benchRestore(b *testing.B, side int32, changes int) {
	src, dst := benchWorlds(b, side)
	from := openDB(b, src)
	defer from.Close()
	w := newWorld(openDB(b, dst), false)
	defer w.Close()
	area := restore.Area{Dim: world.Overworld, Max: world.ChunkPos{side - 1, side - 1}}

	// A viewer on every chunk of the area, as players would hold them.
	l := world.NewLoader(int(side), w, world.NopViewer{})
	call(b, w, func(tx *world.Tx) { l.Move(tx, mgl64.Vec3{float64(side) * 8, 0, float64(side) * 8}) })
	loadArea(b, w, l, area, 4096)
	defer call(b, w, func(tx *world.Tx) { l.Close(tx) })

	rng := rand.New(rand.NewPCG(1, 2))
	n := int(side) * 16
	var ticks, cpu []time.Duration
	var used, blocks int
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		call(b, w, func(tx *world.Tx) {
			for i := range changes {
				x, z := rng.IntN(n), rng.IntN(n)
				y := tx.HighestBlock(x, z) + rng.IntN(3) - 1
				var bl world.Block = block.Obsidian{}
				if i%2 == 1 {
					bl = block.Air{}
				}
				tx.SetBlock(cube.Pos{x, y, z}, bl, noUpdates)
			}
		})
		b.StartTimer()
		job, err := restore.Config{TickBudget: 5 * time.Millisecond}.Start(w, from, area)
		if err != nil {
			b.Fatal(err)
		}
		st := wait(b, job)
		if err := job.Err(); err != nil {
			b.Fatal(err)
		}
		ticks = append(ticks, st.TickTimes...)
		cpu = append(cpu, st.TickCPU...)
		used += st.Ticks
		blocks += st.BlocksSet
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	report := func(d []time.Duration, unit string) {
		if len(d) == 0 {
			return
		}
		slices.Sort(d)
		b.ReportMetric(ms(d[len(d)/2]), "p50-"+unit)
		b.ReportMetric(ms(d[min(len(d)-1, len(d)*99/100)]), "p99-"+unit)
		b.ReportMetric(ms(d[len(d)-1]), "max-"+unit)
	}
	report(ticks, "ms/tick")
	report(cpu, "cpu-ms/tick")
	b.ReportMetric(float64(used)/float64(b.N), "ticks/op")
	var total time.Duration
	for _, d := range cpu {
		total += d
	}
	// The job's CPU time on the World's ticks per restore, which a busy
	// machine does not inflate: what one tick would need to hold.
	b.ReportMetric(ms(total)/float64(b.N), "tick-cpu-ms/op")
	b.ReportMetric(float64(blocks)/float64(b.N), "blocks/op")
}
