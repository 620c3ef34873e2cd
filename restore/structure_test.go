package restore_test

import (
	"errors"
	"maps"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/blazeworld/blaze/restore"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/structure"
)

// The box exported: across six columns and part of the height, holding
// the source's chest (20, y, 20) and sign (40, y, 20), water-logged blocks
// and the surface.
var boxMin, boxMax = cube.Pos{10, 40, 10}, cube.Pos{45, 100, 30}

func inBox(p cube.Pos) bool {
	return p[0] >= boxMin[0] && p[0] <= boxMax[0] && p[1] >= boxMin[1] && p[1] <= boxMax[1] && p[2] >= boxMin[2] && p[2] <= boxMax[2]
}

func blockEntities(col *chunk.Column, in func(cube.Pos) bool) map[cube.Pos]map[string]any {
	out := map[cube.Pos]map[string]any{}
	for _, be := range col.BlockEntities {
		if in(be.Pos) {
			d := maps.Clone(be.Data)
			delete(d, "x")
			delete(d, "y")
			delete(d, "z")
			out[be.Pos] = d
		}
	}
	return out
}

// checkBox compares the columns the box touches: inside the box (both
// layers, block entities) with want, outside it with else.
func checkBox(t *testing.T, got, want, other map[world.ChunkPos]*chunk.Column) {
	t.Helper()
	bad := 0
	for cx := int32(boxMin[0] >> 4); cx <= int32(boxMax[0]>>4); cx++ {
		for cz := int32(boxMin[2] >> 4); cz <= int32(boxMax[2]>>4); cz++ {
			pos := world.ChunkPos{cx, cz}
			g := got[pos]
			r := g.Chunk.Range()
			for x := range 16 {
				for z := range 16 {
					for y := r[0]; y <= r[1]; y++ {
						p := cube.Pos{int(cx)<<4 | x, y, int(cz)<<4 | z}
						ref := other[pos]
						if inBox(p) {
							ref = want[pos]
						}
						for l := range uint8(2) {
							if a, b := g.Chunk.Block(uint8(x), int16(y), uint8(z), l), ref.Chunk.Block(uint8(x), int16(y), uint8(z), l); a != b && bad < 5 {
								bad++
								t.Errorf("block %v layer %d (in box: %v): %d, want %d", p, l, inBox(p), a, b)
							}
						}
					}
				}
			}
			if a, b := blockEntities(g, inBox), blockEntities(want[pos], inBox); !reflect.DeepEqual(a, b) {
				t.Errorf("column %v: block entities in the box %v, want %v", pos, a, b)
			}
			out := func(p cube.Pos) bool { return !inBox(p) }
			if a, b := blockEntities(g, out), blockEntities(other[pos], out); !reflect.DeepEqual(a, b) {
				t.Errorf("column %v: block entities outside the box %v, want %v", pos, a, b)
			}
		}
	}
}

// Issue 36, structures: an area exported from a world on disk to
// .mcstructure, read back and pasted offline into another Blaze world
// holds the same blocks (both layers) and block entities; outside the box
// the other world is unchanged.
func TestStructureRoundTrip(t *testing.T) {
	f := newFixture(t)
	from := openDB(t, f.src)
	s, err := restore.Export(from, world.Overworld, boxMin, boxMax)
	from.Close()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "area.mcstructure")
	if err := structure.WriteFile(file, s); err != nil {
		t.Fatal(err)
	}
	read, err := structure.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if d := read.Dimensions(); d != [3]int{36, 61, 21} {
		t.Fatalf("dimensions %v", d)
	}
	// Paste into the changed world (f.dst), whose box differs from the
	// source's.
	to := openDB(t, f.dst)
	if err := restore.Paste(to, world.Overworld, read, boxMin); err != nil {
		t.Fatal(err)
	}
	if err := to.Close(); err != nil {
		t.Fatal(err)
	}
	checkBox(t, readAll(t, f.dst, testArea, margin), f.srcCols, f.before)
}

// Issue 36, structures: a structure imported into a running, ticking
// World with the budgeted job puts the box back and leaves the rest of its
// columns as they were; voids keep the World's blocks.
func TestStructureImport(t *testing.T) {
	f := newFixture(t)
	from := openDB(t, f.src)
	s, err := restore.Export(from, world.Overworld, boxMin, boxMax)
	from.Close()
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(openDB(t, f.dst), false)
	rec, viewer := watch(t, w)
	job, err := restore.Config{TickBudget: 5 * time.Millisecond}.Import(w, s, boxMin)
	if err != nil {
		t.Fatal(err)
	}
	st := wait(t, job)
	if job.Err() != nil {
		t.Fatal(job.Err())
	}
	t.Logf("%+v", st)
	if st.BlocksSet == 0 || st.BlockEntitiesSet == 0 || st.Columns != 6 {
		t.Errorf("stats %+v", st)
	}
	if rec.seen(world.ChunkPos{1, 1}) == 0 {
		t.Error("the viewer was not shown the import")
	}
	again, err := restore.Config{TickBudget: time.Second}.Import(w, s, boxMin)
	if err != nil {
		t.Fatal(err)
	}
	if st := wait(t, again); st.BlocksSet != 0 || st.BlockEntitiesSet != 0 || st.Ticks != 1 {
		t.Errorf("importing again: %+v", st)
	}
	call(t, w, func(tx *world.Tx) { viewer.Close(tx) })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkBox(t, readAll(t, f.dst, testArea, margin), f.srcCols, f.before)
}

// Voids (-1 in the structure) keep the block the world has.
func TestStructureVoid(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	s := structure.New([3]int{2, 1, 1})
	s.Set(0, 0, 0, block.Obsidian{}, nil)
	s.Set(1, 0, 0, block.Glowstone{}, nil)
	s.Structure.BlockIndices[0][1] = -1 // the second position is void
	col := &chunk.Column{Chunk: chunk.New(world.DefaultBlockRegistry, world.Overworld.Range())}
	stone := world.BlockRuntimeID(block.Stone{})
	col.Chunk.SetBlock(3, 10, 3, 0, stone)
	col.Chunk.SetBlock(4, 10, 3, 0, stone)
	if err := db.StoreColumn(world.ChunkPos{}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	if err := restore.Paste(db, world.Overworld, s, cube.Pos{3, 10, 3}); err != nil {
		t.Fatal(err)
	}
	got, err := db.LoadColumn(world.ChunkPos{}, world.Overworld)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := got.Chunk.Block(3, 10, 3, 0), got.Chunk.Block(4, 10, 3, 0); a != world.BlockRuntimeID(block.Obsidian{}) || b != stone {
		t.Fatalf("pasted %d and %d, want obsidian then the stone kept", a, b)
	}
	if err := restore.Paste(db, world.Overworld, structure.Structure{}, cube.Pos{}); !errors.Is(err, restore.ErrArea) {
		t.Fatalf("pasting the zero Structure: %v", err)
	}
	db.Close()
}

// A structure is input: one whose block indices lie beyond its palette,
// or whose liquid layer names a block that is no liquid, is refused
// (ErrArea) before anything is written, where the structure package would
// read outside its memory (a crash no recover catches) or panic.
func TestStructureRefusesBadIndices(t *testing.T) {
	world.DefaultBlockRegistry.Finalize() // as a World would, before structure.New
	for name, damage := range map[string]func(s structure.Structure){
		"an index beyond the palette": func(s structure.Structure) { s.Structure.BlockIndices[0][0] = 1_000_000 },
		"an index below -1":           func(s structure.Structure) { s.Structure.BlockIndices[0][1] = -2 },
		"a liquid index beyond it":    func(s structure.Structure) { s.Structure.BlockIndices[1][0] = 7 },
		// In the second column: the first must not be stored either.
		"a solid block in the liquid layer": func(s structure.Structure) { s.Structure.BlockIndices[1][16] = s.Structure.BlockIndices[0][16] },
	} {
		t.Run(name, func(t *testing.T) {
			s := structure.New([3]int{17, 1, 1}) // two columns
			s.Set(0, 0, 0, block.Stone{}, nil)
			s.Set(1, 0, 0, block.Dirt{}, nil)
			s.Set(16, 0, 0, block.Dirt{}, nil)
			damage(s)
			dir := t.TempDir()
			to := openDB(t, dir)
			defer to.Close()
			if err := restore.Paste(to, world.Overworld, s, cube.Pos{0, 64, 0}); !errors.Is(err, restore.ErrArea) {
				t.Fatalf("Paste: %v, want ErrArea", err)
			}
			if _, err := to.LoadColumn(world.ChunkPos{0, 0}, world.Overworld); err == nil {
				t.Fatal("a refused structure stored a column")
			}
		})
	}
}
