package worldmap

import (
	"hash/fnv"
	"image/color"
	"strings"
)

// Colours of Minecraft's map palette (its "map colours"), by the kind of
// block that shows them.
var (
	grass     = color.NRGBA{127, 178, 56, 255}
	sand      = color.NRGBA{247, 233, 163, 255}
	snow      = color.NRGBA{255, 255, 255, 255}
	lava      = color.NRGBA{255, 0, 0, 255}
	ice       = color.NRGBA{160, 160, 255, 255}
	plant     = color.NRGBA{0, 124, 0, 255}
	clay      = color.NRGBA{164, 168, 184, 255}
	dirt      = color.NRGBA{151, 109, 77, 255}
	stone     = color.NRGBA{112, 112, 112, 255}
	water     = color.NRGBA{64, 64, 255, 255}
	wood      = color.NRGBA{143, 119, 72, 255}
	quartz    = color.NRGBA{255, 252, 245, 255}
	nether    = color.NRGBA{112, 2, 0, 255}
	black     = color.NRGBA{25, 25, 25, 255}
	purple    = color.NRGBA{127, 63, 178, 255}
	warped    = color.NRGBA{22, 126, 134, 255}
	crimson   = color.NRGBA{148, 63, 97, 255}
	gold      = color.NRGBA{250, 238, 77, 255}
	terracott = color.NRGBA{209, 177, 161, 255}
	unknown   = color.NRGBA{255, 0, 255, 255}
)

// rules give the colour of a block by a part of its name, the first that
// matches: more particular parts come before the general ones they hold
// ("end_stone" before "stone", "sandstone" before "sand").
var rules = []struct {
	part   string
	colour color.NRGBA
}{
	{"water", water}, {"bubble_column", water}, {"lava", lava}, {"magma", nether},
	{"cobble", stone}, {"grass_block", grass}, {"grass_path", dirt}, {"dirt_path", dirt}, {"mycelium", purple},
	{"leaves", plant}, {"azalea", plant}, {"vine", plant}, {"kelp", water}, {"seagrass", water},
	{"grass", plant}, {"fern", plant}, {"flower", plant}, {"sapling", plant}, {"bush", plant},
	{"cactus", plant}, {"reeds", plant}, {"sugar_cane", plant}, {"lily", plant}, {"poppy", plant},
	{"dandelion", plant}, {"tulip", plant}, {"orchid", plant}, {"allium", plant}, {"bluet", plant},
	{"daisy", plant}, {"cornflower", plant}, {"wheat", plant}, {"carrots", plant}, {"potatoes", plant},
	{"bamboo", plant}, {"moss", plant}, {"melon", plant}, {"pumpkin", gold},
	{"powder_snow", snow}, {"snow", snow}, {"ice", ice},
	{"end_stone", sand}, {"sandstone", sand}, {"sand", sand}, {"clay", clay}, {"terracotta", terracott},
	{"gravel", stone}, {"podzol", dirt}, {"farmland", dirt}, {"mud", dirt}, {"dirt", dirt},
	{"crimson", crimson}, {"warped", warped}, {"netherrack", nether}, {"nether", nether},
	{"soul_sand", dirt}, {"soul_soil", dirt}, {"quartz", quartz}, {"obsidian", black}, {"basalt", black},
	{"blackstone", black}, {"log", wood}, {"wood", wood}, {"planks", wood}, {"fence", wood},
	{"oak", wood}, {"spruce", wood}, {"birch", wood}, {"jungle", wood}, {"acacia", wood},
	{"mangrove", wood}, {"cherry", wood}, {"stone", stone}, {"andesite", stone},
	{"diorite", quartz}, {"granite", dirt}, {"deepslate", stone}, {"tuff", stone}, {"ore", stone},
	{"bedrock", stone}, {"gold", gold},
}

// Colour returns the colour a block named name (with or without its
// "minecraft:" prefix) shows on the map. A block no rule names gets a
// colour of its own, made from its name, so that it is told apart from its
// neighbours on every map alike.
func Colour(name string) color.NRGBA {
	name = strings.TrimPrefix(name, "minecraft:")
	for _, r := range rules {
		if strings.Contains(name, r.part) {
			return r.colour
		}
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	// Muted: between 64 and 191 in each channel, so that it is never
	// taken for water, snow or lava.
	return color.NRGBA{64 + uint8(v)&127, 64 + uint8(v>>8)&127, 64 + uint8(v>>16)&127, 255}
}
