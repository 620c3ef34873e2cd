package column

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// The format-version ratchet of column records (issue 37's, for the
// engine's formats, in blazedb/version_test.go). testdata/format holds,
// for every record version and kind a build has written, a record written
// by the build that introduced it (NAME.rec), and what reading it gave
// then (NAME.txt): every later build must read the same. A golden file is
// never edited or removed; -golden writes only the missing ones. The
// records hold the ids of goldenDict, which names its blocks, so that
// they read the same whatever runtime ids a Dragonfly gives its blocks.
var writeGolden = flag.Bool("golden", false, "write the golden column records missing from testdata/format")

// goldenBlocks are goldenDict's blocks, each a block name in its first
// state of the registry, at the dictionary id of its index.
var goldenBlocks = []string{
	"minecraft:air", "minecraft:stone", "minecraft:dirt", "minecraft:grass_block", "minecraft:deepslate",
	"minecraft:coal_ore", "minecraft:iron_ore", "minecraft:copper_ore", "minecraft:gold_ore",
	"minecraft:diamond_ore", "minecraft:redstone_ore", "minecraft:lapis_ore", "minecraft:deepslate_iron_ore",
	"minecraft:deepslate_diamond_ore", "minecraft:gravel", "minecraft:sand", "minecraft:andesite",
	"minecraft:diorite", "minecraft:granite", "minecraft:tuff", "minecraft:calcite", "minecraft:bedrock",
	"minecraft:water", "minecraft:lava", "minecraft:oak_log", "minecraft:oak_leaves", "minecraft:short_grass",
	"minecraft:clay", "minecraft:cobblestone", "minecraft:mossy_cobblestone", "minecraft:glow_lichen",
	"minecraft:netherrack", "minecraft:soul_sand", "minecraft:end_stone", "minecraft:obsidian", "minecraft:chest",
}

// goldenDict is a Dictionary of goldenBlocks.
type goldenDict struct {
	testDict
	ridToID map[uint32]int32
}

func (d *goldenDict) ID(rid uint32) (int32, bool, error) {
	id, ok := d.ridToID[rid]
	if !ok {
		return 0, false, fmt.Errorf("runtime id %d is not a golden block", rid)
	}
	return id, false, nil
}

var goldenCodec = sync.OnceValue(func() *Codec {
	br := world.DefaultBlockRegistry
	br.Finalize()
	d := &goldenDict{testDict: testDict{br: br}, ridToID: map[uint32]int32{}}
	first := map[string]uint32{}
	for rid := uint32(0); rid < uint32(br.BlockCount()); rid++ {
		if name, _, ok := br.RuntimeIDToState(rid); ok {
			if _, seen := first[name]; !seen {
				first[name] = rid
			}
		}
	}
	for id, name := range goldenBlocks {
		rid, ok := first[name]
		if !ok {
			panic("no block " + name)
		}
		d.idToRID = append(d.idToRID, rid)
		d.ridToID[rid] = int32(id)
	}
	return New(d, nil)
})

// goldenRead describes col as reading a golden record gives it: the
// blocks by name and properties, biomes, NBT and scheduled updates, each
// as a digest of a canonical text.
func goldenRead(br world.BlockRegistry, col *chunk.Column) string {
	var w strings.Builder
	states := map[uint32]string{}
	state := func(rid uint32) string {
		s, ok := states[rid]
		if !ok {
			name, props, _ := br.RuntimeIDToState(rid)
			s = fmt.Sprintf("%s%v", name, props) // fmt prints maps sorted by key
			states[rid] = s
		}
		return s
	}
	digest := func(what string, s string) {
		fmt.Fprintf(&w, "%s %x\n", what, sha256.Sum256([]byte(s)))
	}
	c := col.Chunk
	r := c.Range()
	var blocks, biomes strings.Builder
	for y := r[0]; y <= r[1]; y++ {
		for x := uint8(0); x < 16; x++ {
			for z := uint8(0); z < 16; z++ {
				blocks.WriteString(state(c.Block(x, int16(y), z, 0)))
				blocks.WriteByte('|')
				blocks.WriteString(state(c.Block(x, int16(y), z, 1)))
				blocks.WriteByte('\n')
				biomes.WriteString(strconv.FormatUint(uint64(c.Biome(x, int16(y), z)), 10))
				biomes.WriteByte('\n')
			}
		}
	}
	fmt.Fprintf(&w, "range %v, %d sub-chunks\n", r, len(c.Sub()))
	digest("blocks", blocks.String())
	digest("biomes", biomes.String())
	fmt.Fprintf(&w, "block entities %d, entities %d, tick %d, scheduled updates %d\n", len(col.BlockEntities), len(col.Entities), col.Tick, len(col.ScheduledBlocks))
	digest("block entities", fmt.Sprint(col.BlockEntities))
	digest("entities", fmt.Sprint(col.Entities))
	var sched strings.Builder
	for _, s := range col.ScheduledBlocks {
		fmt.Fprintf(&sched, "%v %s %d\n", s.Pos, state(s.Block), s.Tick)
	}
	digest("scheduled updates", sched.String())
	return w.String()
}

// goldenRecords are the records -golden writes, by name: a version 2
// record as stores write it, and version 3 whole records (issue 41) as
// compaction packs it, in LZ4 and in zstd.
func goldenRecords(t *testing.T) map[string][]byte {
	br := world.DefaultBlockRegistry
	col := worldtest.Synthetic(7, world.Overworld, br)
	// Synthetic places only goldenBlocks; one more scheduled update, of
	// water, whose dictionary id is 22.
	col.ScheduledBlocks = append(col.ScheduledBlocks, chunk.ScheduledBlockUpdate{Pos: cube.Pos{1, 2, 3}, Block: goldenCodec().dict.(*goldenDict).idToRID[22], Tick: 9})
	enc, err := goldenCodec().Encode(col, Prev{}, blazedb.CompressionLZ4)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{
		"v2-lz4":        enc.Rec,
		"v3-whole-lz4":  Pack(enc.Rec, blazedb.CompressionLZ4),
		"v3-whole-zstd": Pack(enc.Rec, blazedb.CompressionZstd),
	}
}

// Issue 41 item 2: every golden column record reads as it did when it was
// written.
func TestColumnFormatVersionsStillRead(t *testing.T) {
	dir := filepath.Join("testdata", "format")
	if *writeGolden {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, rec := range goldenRecords(t) {
			path := filepath.Join(dir, name+".rec")
			if _, err := os.Stat(path); err == nil {
				continue
			}
			col, err := goldenCodec().DecodeColumn(rec, world.Overworld.Range())
			if err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(os.WriteFile(path, rec, 0o644), os.WriteFile(filepath.Join(dir, name+".txt"), []byte(goldenRead(world.DefaultBlockRegistry, col)), 0o644)); err != nil {
				t.Fatal(err)
			}
		}
	}
	recs, err := filepath.Glob(filepath.Join(dir, "*.rec"))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(recs))
	for _, p := range recs {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".rec"))
	}
	for _, name := range []string{"v2-lz4", "v3-whole-lz4", "v3-whole-zstd"} {
		if !slices.Contains(names, name) {
			t.Fatalf("no golden record %s (go test -run TestColumnFormatVersionsStillRead -golden)", name)
		}
	}
	for _, name := range names {
		rec, err := os.ReadFile(filepath.Join(dir, name+".rec"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(dir, name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		col, err := goldenCodec().DecodeColumn(rec, world.Overworld.Range())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := goldenRead(world.DefaultBlockRegistry, col); got != string(want) {
			t.Fatalf("%s reads\n%s\nwhere it read\n%s", name, got, want)
		}
	}
}
