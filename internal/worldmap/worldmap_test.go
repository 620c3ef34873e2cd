package worldmap

import (
	"errors"
	"image/color"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func scale(c color.NRGBA, f float64) color.NRGBA {
	return color.NRGBA{uint8(float64(c.R) * f), uint8(float64(c.G) * f), uint8(float64(c.B) * f), c.A}
}

// flat returns a column of stone up to y, topped at y by the block top,
// and at y+step where z >= 8.
func flat(br world.BlockRegistry, top uint32, y, step int) *chunk.Column {
	s := worldtest.States(br)
	c := chunk.New(br, world.Overworld.Range())
	for x := range uint8(16) {
		for z := range uint8(16) {
			h := y
			if z >= 8 {
				h += step
			}
			for yy := 0; yy < h; yy++ {
				c.SetBlock(x, int16(yy), z, 0, s["minecraft:stone"])
			}
			c.SetBlock(x, int16(h), z, 0, top)
		}
	}
	return &chunk.Column{Chunk: c}
}

// Issue 38 item 8: a map of a world read back from two databases: each
// block column in the colour of its highest block, shaded by height as a
// Minecraft map is (lighter where higher than the block to the north,
// darker where lower); a chunk with no column stored is transparent; a line
// where one database's columns meet another's.
func TestMapOfTwoDatabases(t *testing.T) {
	br := world.DefaultBlockRegistry
	s := worldtest.States(br)
	dir := t.TempDir()
	open := func(name string) *provider.DB {
		db, err := provider.Config{Log: quiet}.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	a, b := open("a"), open("b")
	defer a.Close()
	defer b.Close()
	store := func(db *provider.DB, pos world.ChunkPos, col *chunk.Column) {
		t.Helper()
		if err := db.StoreColumn(pos, world.Overworld, col); err != nil {
			t.Fatal(err)
		}
	}
	store(a, world.ChunkPos{-1, 0}, flat(br, s["minecraft:grass_block"], 64, 3)) // z >= 8 three higher
	store(a, world.ChunkPos{0, 0}, flat(br, s["minecraft:water"], 62, -2))       // z >= 8 two lower
	store(b, world.ChunkPos{-1, 1}, flat(br, s["minecraft:sand"], 70, 0))
	// A column of the nether is not drawn on the overworld's map.
	nether := chunk.New(br, world.Nether.Range())
	nether.SetBlock(0, 10, 0, 0, s["minecraft:netherrack"])
	if err := a.StoreColumn(world.ChunkPos{5, 5}, world.Nether, &chunk.Column{Chunk: nether}); err != nil {
		t.Fatal(err)
	}

	m := New(world.Overworld, br)
	if err := m.Add(a, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(b, 1); err != nil {
		t.Fatal(err)
	}
	img, origin, err := m.Image()
	if err != nil {
		t.Fatal(err)
	}
	if m.Columns() != 3 || origin != (world.ChunkPos{-1, 0}) || img.Bounds().Dx() != 32 || img.Bounds().Dy() != 32 {
		t.Fatalf("%d columns, origin %v, %v", m.Columns(), origin, img.Bounds())
	}
	mid, light, dark := 220.0/255, 1.0, 180.0/255
	for _, c := range []struct {
		x, z int
		want color.NRGBA
		what string
	}{
		{3, 0, scale(grass, mid), "grass, nothing to its north"},
		{3, 5, scale(grass, mid), "grass, level with its north"},
		{3, 8, scale(grass, light), "grass, higher than its north"},
		{20, 8, scale(water, dark), "water, lower than its north"},
		{20, 9, scale(water, mid), "water, level"},
		{3, 16, boundary, "the line where b's column meets a's"},
		{3, 17, scale(sand, mid), "sand, level with its north"},
		{16 + 3, 17, color.NRGBA{}, "no column stored: transparent"},
	} {
		if got := img.NRGBAAt(c.x, c.z); got != c.want {
			t.Errorf("(%d, %d), %s: %v, want %v", c.x, c.z, c.what, got, c.want)
		}
	}
	// Grass at its edge with water, both from a: no line.
	if got := img.NRGBAAt(16, 3); got != scale(water, mid) {
		t.Errorf("(16, 3): %v, want water", got)
	}

	Highlight(img, origin, []world.ChunkPos{{0, 0}})
	if img.NRGBAAt(16, 0) != highlight || img.NRGBAAt(31, 15) != highlight || img.NRGBAAt(20, 9) == highlight {
		t.Error("the highlighted chunk is not outlined alone")
	}
}

// Issue 38 item 8: colours by name: the more particular part of a name
// wins ("end_stone" is not stone, "seagrass" not grass), and a block no
// rule names has a colour made from its name, the same on every map,
// never one of the palette's loud ones.
func TestColourByName(t *testing.T) {
	for name, want := range map[string]color.NRGBA{
		"minecraft:grass_block": grass, "minecraft:short_grass": plant, "minecraft:seagrass": water,
		"minecraft:water": water, "minecraft:flowing_lava": lava, "minecraft:end_stone": sand,
		"minecraft:sandstone": sand, "minecraft:sand": sand, "minecraft:stone": stone,
		"minecraft:mossy_cobblestone": stone, "minecraft:oak_leaves": plant, "minecraft:oak_log": wood,
		"minecraft:oak_stairs": wood, "minecraft:stone_brick_stairs": stone, "minecraft:snow_layer": snow,
		"minecraft:packed_ice": ice, "minecraft:netherrack": nether, "minecraft:deepslate_diamond_ore": stone,
		"grass_block": grass,
	} {
		if got := Colour(name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	chest := Colour("minecraft:chest")
	if chest != Colour("minecraft:chest") || chest == Colour("minecraft:barrel") {
		t.Error("unnamed blocks' colours are not their own")
	}
	for _, ch := range []uint8{chest.R, chest.G, chest.B} {
		if ch < 64 || ch > 191 {
			t.Errorf("chest's colour %v is not muted", chest)
		}
	}
}

// Issue 38 item 8: an arena's map: its changed columns, read from the
// overlay over the template's, replace them, and one the overlay no longer
// holds leaves the map.
func TestAddColumnsReplaces(t *testing.T) {
	br := world.DefaultBlockRegistry
	s := worldtest.States(br)
	dir := t.TempDir()
	tmpl, err := provider.Config{Log: quiet}.Open(filepath.Join(dir, "template"))
	if err != nil {
		t.Fatal(err)
	}
	defer tmpl.Close()
	changes, err := provider.Config{Log: quiet}.Open(filepath.Join(dir, "changes"))
	if err != nil {
		t.Fatal(err)
	}
	defer changes.Close()
	for x := range int32(2) {
		if err := tmpl.StoreColumn(world.ChunkPos{x, 0}, world.Overworld, flat(br, s["minecraft:grass_block"], 64, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := changes.StoreColumn(world.ChunkPos{0, 0}, world.Overworld, flat(br, s["minecraft:lava"], 64, 0)); err != nil {
		t.Fatal(err)
	}
	m := New(world.Overworld, br)
	if err := m.Add(tmpl, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.AddColumns(changes, []world.ChunkPos{{0, 0}, {1, 0}}, 0); err != nil {
		t.Fatal(err)
	}
	img, origin, err := m.Image()
	if err != nil {
		t.Fatal(err)
	}
	if m.Columns() != 1 || origin != (world.ChunkPos{0, 0}) || img.NRGBAAt(3, 3) != scale(lava, 220.0/255) {
		t.Fatalf("%d columns from %v, (3, 3) %v", m.Columns(), origin, img.NRGBAAt(3, 3))
	}
}

// Issue 38 item 8: the Nether is drawn below its roof: the highest block
// under the first air beneath the top, not the bedrock above everything.
func TestNetherBelowRoof(t *testing.T) {
	br := world.DefaultBlockRegistry
	s := worldtest.States(br)
	db, err := provider.Config{Log: quiet}.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := chunk.New(br, world.Nether.Range())
	for x := range uint8(16) {
		for z := range uint8(16) {
			for y := int16(120); y <= 127; y++ {
				c.SetBlock(x, y, z, 0, s["minecraft:bedrock"])
			}
			floor := s["minecraft:netherrack"]
			if x < 8 {
				floor = s["minecraft:lava"]
			}
			for y := int16(0); y <= 40; y++ {
				c.SetBlock(x, y, z, 0, floor)
			}
		}
	}
	if err := db.StoreColumn(world.ChunkPos{0, 0}, world.Nether, &chunk.Column{Chunk: c}); err != nil {
		t.Fatal(err)
	}
	m := New(world.Nether, br)
	if err := m.Add(db, 0); err != nil {
		t.Fatal(err)
	}
	img, _, err := m.Image()
	if err != nil {
		t.Fatal(err)
	}
	if got := img.NRGBAAt(2, 2); got != scale(lava, 220.0/255) {
		t.Errorf("lava under the roof: %v", got)
	}
	if got := img.NRGBAAt(12, 2); got != scale(nether, 220.0/255) {
		t.Errorf("netherrack under the roof: %v", got)
	}
}

// Issue 38 item 8: a column read over the map's with a negative source
// keeps the source of the one it replaces (blaze render of an arena over
// a segmented template): the line between regions stays where it was, and
// none is drawn around the changed column.
func TestAddColumnsKeepsSource(t *testing.T) {
	br := world.DefaultBlockRegistry
	s := worldtest.States(br)
	dir := t.TempDir()
	open := func(name string) *provider.DB {
		db, err := provider.Config{Log: quiet}.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b, changes := open("a"), open("b"), open("changes")
	for _, c := range []struct {
		db  *provider.DB
		pos world.ChunkPos
	}{{a, world.ChunkPos{0, 0}}, {b, world.ChunkPos{1, 0}}, {b, world.ChunkPos{2, 0}}, {changes, world.ChunkPos{1, 0}}} {
		if err := c.db.StoreColumn(c.pos, world.Overworld, flat(br, s["minecraft:grass_block"], 64, 0)); err != nil {
			t.Fatal(err)
		}
	}
	m := New(world.Overworld, br)
	if err := errors.Join(m.Add(a, 0), m.Add(b, 1), m.AddColumns(changes, []world.ChunkPos{{1, 0}}, -1)); err != nil {
		t.Fatal(err)
	}
	img, _, err := m.Image()
	if err != nil {
		t.Fatal(err)
	}
	if img.NRGBAAt(16, 5) != boundary || img.NRGBAAt(32, 5) == boundary {
		t.Fatalf("(16, 5) %v, want the line between a and b; (32, 5) %v, want none", img.NRGBAAt(16, 5), img.NRGBAAt(32, 5))
	}
}
