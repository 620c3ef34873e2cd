package worldtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Registry is Dragonfly's block registry with its runtime ids permuted, as
// an upgrade of Dragonfly (or another set of plugin blocks) moves them, and
// optionally without the states of one block, as without a plugin. Only the
// methods of chunk.BlockRegistry are changed (what a provider uses); the rest
// are the default registry's. Safe for concurrent use once made.
type Registry struct {
	world.BlockRegistry
	// Perm maps a runtime id of the default registry to this one's.
	Perm []uint32
	inv  []uint32
	hide string
}

// PermutedRegistry returns the default registry with its runtime ids
// permuted by seed; hide, if not empty, names a block whose states it does
// not know.
func PermutedRegistry(seed uint64, hide string) *Registry {
	br := world.DefaultBlockRegistry
	br.Finalize()
	n := br.BlockCount()
	r := &Registry{BlockRegistry: br, Perm: make([]uint32, n), inv: make([]uint32, n), hide: hide}
	for i, v := range rand.New(rand.NewPCG(seed, 1)).Perm(n) {
		r.Perm[i], r.inv[v] = uint32(v), uint32(i)
	}
	return r
}

func (r *Registry) AirRuntimeID() uint32 { return r.Perm[r.BlockRegistry.AirRuntimeID()] }

func (r *Registry) RuntimeIDToState(rid uint32) (string, map[string]any, bool) {
	if int(rid) >= len(r.inv) {
		return "", nil, false
	}
	name, props, ok := r.BlockRegistry.RuntimeIDToState(r.inv[rid])
	if name == r.hide {
		return "", nil, false
	}
	return name, props, ok
}

func (r *Registry) StateToRuntimeID(name string, props map[string]any) (uint32, bool) {
	rid, ok := r.BlockRegistry.StateToRuntimeID(name, props)
	if !ok || name == r.hide {
		return 0, false
	}
	return r.Perm[rid], true
}

func (r *Registry) FilteringBlock(rid uint32) uint8 {
	return r.BlockRegistry.FilteringBlock(r.inv[rid])
}
func (r *Registry) LightBlock(rid uint32) uint8 { return r.BlockRegistry.LightBlock(r.inv[rid]) }
func (r *Registry) RandomTickBlock(rid uint32) bool {
	return r.BlockRegistry.RandomTickBlock(r.inv[rid])
}
func (r *Registry) NBTBlock(rid uint32) bool    { return r.BlockRegistry.NBTBlock(r.inv[rid]) }
func (r *Registry) LiquidBlock(rid uint32) bool { return r.BlockRegistry.LiquidBlock(r.inv[rid]) }
func (r *Registry) LiquidDisplacingBlock(rid uint32) bool {
	return r.BlockRegistry.LiquidDisplacingBlock(r.inv[rid])
}

func (r *Registry) HashToRuntimeID(hash uint32) (uint32, bool) {
	rid, ok := r.BlockRegistry.HashToRuntimeID(hash)
	if !ok {
		return 0, false
	}
	return r.Perm[rid], true
}

func (r *Registry) RuntimeIDToHash(rid uint32) (uint32, bool) {
	if int(rid) >= len(r.inv) {
		return 0, false
	}
	return r.BlockRegistry.RuntimeIDToHash(r.inv[rid])
}

// CheckMoved reports whether got is orig with every block state (in every
// layer of every sub-chunk, and in scheduled updates) carried from the
// default registry's runtime ids to r's: orig as read under Dragonfly's
// registry, got as read under r.
func (r *Registry) CheckMoved(orig, got *chunk.Column) error {
	if len(got.Chunk.Sub()) != len(orig.Chunk.Sub()) || len(got.ScheduledBlocks) != len(orig.ScheduledBlocks) {
		return fmt.Errorf("%d sub-chunks and %d scheduled updates, want %d and %d",
			len(got.Chunk.Sub()), len(got.ScheduledBlocks), len(orig.Chunk.Sub()), len(orig.ScheduledBlocks))
	}
	rng := orig.Chunk.Range()
	for y := rng[0]; y <= rng[1]; y++ {
		for x := uint8(0); x < 16; x++ {
			for z := uint8(0); z < 16; z++ {
				for l := uint8(0); l < 2; l++ {
					if want, have := r.Perm[orig.Chunk.Block(x, int16(y), z, l)], got.Chunk.Block(x, int16(y), z, l); have != want {
						return fmt.Errorf("block %d,%d,%d in layer %d: runtime id %d, want %d", x, y, z, l, have, want)
					}
				}
			}
		}
	}
	for i, s := range orig.ScheduledBlocks {
		if want, have := r.Perm[s.Block], got.ScheduledBlocks[i].Block; have != want {
			return fmt.Errorf("scheduled update %d: runtime id %d, want %d", i, have, want)
		}
	}
	return nil
}
