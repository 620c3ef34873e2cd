package provider

import (
	"errors"
	"testing"

	"github.com/df-mc/dragonfly/server/item"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

// Issue 40 item 1: a rollback restores a player's inventory: RevertPlayers
// puts each player's data back as it was at a snapshot, and removes a
// player first saved after it; the revert itself can be undone.
func TestRevertPlayers(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	ow := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer ow.Close()
	pp := db.Players()
	defer pp.Close()
	old, later := uuid.New(), uuid.New()
	save := func(id uuid.UUID, diamonds int) {
		c := testPlayer(id, 0)
		_ = c.Inventory.SetItem(10, item.NewStack(item.Diamond{}, diamonds))
		if err := pp.Save(id, c, ow); err != nil {
			t.Fatal(err)
		}
	}
	diamonds := func(id uuid.UUID) int {
		c, _, err := pp.Load(id, nil)
		if errors.Is(err, leveldb.ErrNotFound) {
			return -1
		}
		if err != nil {
			t.Fatal(err)
		}
		s, _ := c.Inventory.Item(10)
		return s.Count()
	}
	save(old, 3)
	if err := db.Snapshot("before"); err != nil {
		t.Fatal(err)
	}
	save(old, 60)
	save(later, 7)
	if err := db.Snapshot("after"); err != nil {
		t.Fatal(err)
	}
	n, err := db.RevertPlayers("before")
	if err != nil || n != 2 {
		t.Fatalf("revert: %d changed, %v; want 2", n, err)
	}
	if d, l := diamonds(old), diamonds(later); d != 3 || l != -1 {
		t.Fatalf("after the revert: %d diamonds and a later player with %d, want 3 and none", d, l)
	}
	if _, err := db.RevertPlayers("after"); err != nil {
		t.Fatal(err)
	}
	if d, l := diamonds(old), diamonds(later); d != 60 || l != 7 {
		t.Fatalf("after undoing the revert: %d and %d, want 60 and 7", d, l)
	}
}
