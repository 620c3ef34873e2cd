package worldtest

import (
	"math/rand/v2"

	"github.com/df-mc/dragonfly/server/world"
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
