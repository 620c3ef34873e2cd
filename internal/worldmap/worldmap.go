package worldmap

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
)

// MaxSide is the largest width or height of a map, in pixels (blocks).
const MaxSide = 16384

// Map gathers the columns of one dimension from one or more databases and
// draws them.
type Map struct {
	dim   world.Dimension
	reg   world.BlockRegistry
	cols  map[world.ChunkPos]*top
	names map[uint32]color.NRGBA // colour by runtime id, cached
}

// top is what a map keeps of a column: each block column's height and
// colour, and which database it came from.
type top struct {
	height [256]int16
	colour [256]color.NRGBA
	source int
}

// New returns an empty Map of dim, whose block states are read with reg
// (world.DefaultBlockRegistry when nil).
func New(dim world.Dimension, reg world.BlockRegistry) *Map {
	if reg == nil {
		reg = world.DefaultBlockRegistry
	}
	return &Map{dim: dim, reg: reg, cols: map[world.ChunkPos]*top{}, names: map[uint32]color.NRGBA{}}
}

// Add reads every column of the Map's dimension in db. Columns of each
// call are told apart from those of other calls by a line where they meet.
// The first column that cannot be read stops it, with the error.
func (m *Map) Add(db *provider.DB, source int) error {
	places, err := db.Columns()
	if err != nil {
		return err
	}
	for _, p := range places {
		if p.Dim != m.dim {
			continue
		}
		col, err := db.LoadColumn(p.Pos, p.Dim)
		if err != nil {
			return fmt.Errorf("load column %v (%v): %w", p.Pos, p.Dim, err)
		}
		m.cols[p.Pos] = m.top(col.Chunk, source)
	}
	return nil
}

// Loader reads a column as a world.Provider does: *provider.DB,
// *segment.Provider and *overlay.Provider.
type Loader interface {
	LoadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error)
}

// AddColumns reads the columns at positions in the Map's dimension from
// src, in place of those the Map holds there: an arena's changed chunks
// over its template's, or a world's columns as they were at a point of its
// history (a provider.View). A column src does not hold (its error
// satisfies errors.Is(err, leveldb.ErrNotFound)) is taken off the Map; any
// other error stops it. A negative source keeps the source of the column
// replaced (0 where there is none), so that no line is drawn around it.
func (m *Map) AddColumns(src Loader, positions []world.ChunkPos, source int) error {
	for _, pos := range positions {
		col, err := src.LoadColumn(pos, m.dim)
		switch {
		case errors.Is(err, leveldb.ErrNotFound):
			delete(m.cols, pos)
		case err != nil:
			return fmt.Errorf("load column %v (%v): %w", pos, m.dim, err)
		default:
			src := source
			if old, ok := m.cols[pos]; ok && src < 0 {
				src = old.source
			}
			m.cols[pos] = m.top(col.Chunk, max(src, 0))
		}
	}
	return nil
}

// Dimension returns the dimension the Map draws.
func (m *Map) Dimension() world.Dimension { return m.dim }

// Columns returns how many columns the Map holds.
func (m *Map) Columns() int { return len(m.cols) }

func (m *Map) top(c *chunk.Chunk, source int) *top {
	t := &top{source: source}
	air := m.air()
	for x := range 16 {
		for z := range 16 {
			y := c.HighestBlock(uint8(x), uint8(z))
			if m.dim == world.Nether {
				y = belowRoof(c, uint8(x), uint8(z), air)
			}
			i := z*16 + x
			t.height[i] = y
			if y < int16(c.Range()[0]) || c.Block(uint8(x), y, uint8(z), 0) == air {
				continue // nothing but air: left transparent
			}
			t.colour[i] = m.colourOf(c.Block(uint8(x), y, uint8(z), 0))
		}
	}
	return t
}

// belowRoof returns the height of the highest block under the first air
// below the top of the column: the Nether's floor under its roof of
// bedrock and netherrack, which a map from above would show alone. A
// column with no air under its top gives its top.
func belowRoof(c *chunk.Chunk, x, z uint8, air uint32) int16 {
	r := c.Range()
	y := int16(r[1])
	for y >= int16(r[0]) && c.Block(x, y, z, 0) != air {
		y--
	}
	if y < int16(r[0]) {
		return int16(r[1])
	}
	for y >= int16(r[0]) && c.Block(x, y, z, 0) == air {
		y--
	}
	return y
}

func (m *Map) air() uint32 { return m.reg.BlockRuntimeID(m.reg.Air()) }

func (m *Map) colourOf(rid uint32) color.NRGBA {
	if c, ok := m.names[rid]; ok {
		return c
	}
	name, _, ok := m.reg.RuntimeIDToState(rid)
	c := unknown
	if ok {
		c = Colour(name)
	}
	m.names[rid] = c
	return c
}

// Image draws the Map: north up, one pixel per block, its top left corner
// the north-west corner of the westernmost and northernmost columns. Where
// no column is stored the image is transparent. It also returns the
// position of the chunk at the top left.
func (m *Map) Image() (*image.NRGBA, world.ChunkPos, error) {
	if len(m.cols) == 0 {
		return image.NewNRGBA(image.Rect(0, 0, 0, 0)), world.ChunkPos{}, nil
	}
	minX, minZ, maxX, maxZ := int32(math.MaxInt32), int32(math.MaxInt32), int32(math.MinInt32), int32(math.MinInt32)
	for p := range m.cols {
		minX, minZ, maxX, maxZ = min(minX, p[0]), min(minZ, p[1]), max(maxX, p[0]), max(maxZ, p[1])
	}
	w, h := (int64(maxX)-int64(minX)+1)*16, (int64(maxZ)-int64(minZ)+1)*16
	if w > MaxSide || h > MaxSide {
		return nil, world.ChunkPos{}, fmt.Errorf("%w: %d×%d blocks, at most %d a side", ErrTooLarge, w, h, MaxSide)
	}
	img := image.NewNRGBA(image.Rect(0, 0, int(w), int(h)))
	// at returns the column at pixel (x, z) and its index in it.
	at := func(x, z int) (*top, int) {
		t := m.cols[world.ChunkPos{minX + int32(x>>4), minZ + int32(z>>4)}]
		return t, (z&15)*16 + x&15
	}
	for z := range int(h) {
		for x := range int(w) {
			t, i := at(x, z)
			if t == nil || t.colour[i].A == 0 {
				continue
			}
			c := shade(t.colour[i], t.height[i], func() (int16, bool) {
				if z == 0 {
					return 0, false
				}
				n, j := at(x, z-1)
				if n == nil || n.colour[j].A == 0 {
					return 0, false
				}
				return n.height[j], true
			})
			// A line where the column to the west or north came from
			// another database.
			if x&15 == 0 && x > 0 {
				if o, _ := at(x-1, z); o != nil && o.source != t.source {
					c = boundary
				}
			}
			if z&15 == 0 && z > 0 {
				if o, _ := at(x, z-1); o != nil && o.source != t.source {
					c = boundary
				}
			}
			img.SetNRGBA(x, z, c)
		}
	}
	return img, world.ChunkPos{minX, minZ}, nil
}

// shade darkens c where the block is lower than its northern neighbour and
// lightens it where higher, as a Minecraft map does, so that relief shows.
func shade(c color.NRGBA, y int16, north func() (int16, bool)) color.NRGBA {
	ny, ok := north()
	f := 220.0 / 255 // as Minecraft's middle shade
	switch {
	case !ok:
	case y > ny:
		f = 1
	case y < ny:
		f = 180.0 / 255
	}
	return color.NRGBA{uint8(float64(c.R) * f), uint8(float64(c.G) * f), uint8(float64(c.B) * f), c.A}
}

// Highlight outlines each chunk of chunks in img, a map whose top left
// chunk is origin, so that changed chunks (an arena's) stand out.
func Highlight(img *image.NRGBA, origin world.ChunkPos, chunks []world.ChunkPos) {
	b := img.Bounds()
	for _, p := range chunks {
		x0, z0 := int(p[0]-origin[0])*16, int(p[1]-origin[1])*16
		for i := range 16 {
			for _, q := range [][2]int{{x0 + i, z0}, {x0 + i, z0 + 15}, {x0, z0 + i}, {x0 + 15, z0 + i}} {
				if (image.Point{q[0], q[1]}).In(b) {
					img.SetNRGBA(q[0], q[1], highlight)
				}
			}
		}
	}
}

var (
	boundary  = color.NRGBA{255, 255, 255, 255}
	highlight = color.NRGBA{255, 0, 255, 255}
)
