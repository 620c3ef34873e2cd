package column

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// errUnknown is testDict's error for an id it does not map.
var errUnknown = errors.New("column test: unknown block state")

// testDict is a Dictionary over one registry whose dictionary ids are the
// runtime ids themselves, every one persisted: the codec's tests need
// ids, not the provider's dictionary (whose own tests cover it).
type testDict struct {
	sync.Mutex
	br      world.BlockRegistry
	idToRID []uint32
}

func (d *testDict) ID(rid uint32) (int32, bool, error) {
	if int(rid) >= len(d.idToRID) {
		return 0, false, fmt.Errorf("runtime id %d is not in the block registry", rid)
	}
	return int32(rid), false, nil
}

func (d *testDict) Registry() chunk.BlockRegistry { return d.br }

func (d *testDict) Decoding(rng cube.Range, template bool) (chunk.BlockRegistry, []uint32, *chunk.Chunk) {
	var tmpl *chunk.Chunk
	if template {
		tmpl = chunk.New(d.br, rng)
	}
	return d.br, d.idToRID, tmpl
}

func (d *testDict) Unknown(id uint64) error {
	return fmt.Errorf("%w: dictionary id %d", errUnknown, id)
}

// testCodec returns Dragonfly's default registry and a codec of a testDict
// on it, building through rawchunk unless the build forces the public
// path.
func testCodec() (world.BlockRegistry, *Codec) {
	br := world.DefaultBlockRegistry
	br.Finalize()
	d := &testDict{br: br, idToRID: make([]uint32, br.BlockCount())}
	for i := range d.idToRID {
		d.idToRID[i] = uint32(i)
	}
	raw, _ := rawchunk.Get()
	return br, New(d, raw)
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
