package segment

import (
	"errors"
	"slices"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Issue 39 (segmented worlds shipped): ShipRegions offers the open
// regions, a closed one written to while open (once: the shipper's own
// opening does not make it due again), a deleted one with no engine before
// anything else, and every region on disk with all; a region whose
// shipment failed is offered again.
func TestShipRegionsOffers(t *testing.T) {
	p := openSeg(t, t.TempDir(), Config{SegmentSize: 2, MaxOpen: 1})
	defer p.Close()
	store := func(x int32) {
		t.Helper()
		// An empty column: what is stored does not matter here, and
		// making a realistic one costs more than the test.
		c := &chunk.Column{Chunk: chunk.New(world.DefaultBlockRegistry, world.Overworld.Range())}
		if err := p.StoreColumn(world.ChunkPos{x, 0}, world.Overworld, c); err != nil {
			t.Fatal(err)
		}
	}
	type offer struct {
		rel  string
		open bool
	}
	ship := func(all bool, fail string) ([]offer, error) {
		t.Helper()
		var got []offer
		err := p.ShipRegions(all, func(rel string, db *blazedb.DB) error {
			got = append(got, offer{rel, db != nil})
			if db != nil {
				if _, _, err := db.DurableLog(); err != nil {
					t.Errorf("%s: the engine offered is not open: %v", rel, err)
				}
			}
			if rel == fail {
				return errors.New("the store is down")
			}
			return nil
		})
		return got, err
	}
	want := func(got []offer, err error, w ...offer) {
		t.Helper()
		if err != nil || !slices.Equal(got, w) {
			t.Errorf("offered %v (%v); want %v", got, err, w)
		}
	}
	a, b, c := offer{"regions/0/r.0.0", true}, offer{"regions/0/r.1.0", true}, offer{"regions/0/r.2.0", true}

	store(0) // region a
	store(2) // region b: MaxOpen 1 closes a, written to
	got, err := ship(false, "")
	want(got, err, a, b)
	// a was opened to be shipped and closed again as b opened (MaxOpen
	// 1): not due.
	got, err = ship(false, "")
	want(got, err, b)

	store(3) // region b again (the shipper's own opening of it wrote nothing)
	store(4) // region c: b closes, written to
	if got, err := ship(false, b.rel); err == nil {
		t.Fatalf("a failed shipment was not returned: %v", got)
	}
	got, err = ship(false, "") // b again, after its failure
	want(got, err, b, c)

	if err := p.DeleteSegmentFor(world.ChunkPos{0, 0}, world.Overworld); err != nil {
		t.Fatal(err)
	}
	got, err = ship(false, "")
	want(got, err, offer{a.rel, false}, c)
	got, err = ship(true, "")
	want(got, err, b, c)
}
