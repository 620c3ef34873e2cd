package provider

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/nbtwalk"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/entity/effect"
	"github.com/df-mc/dragonfly/server/item"
	"github.com/df-mc/dragonfly/server/item/inventory"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/player/playerdb"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// testPlayer makes a player's data with something in every part playerdb
// stores, n selecting the contents.
func testPlayer(id uuid.UUID, n int) player.Config {
	c := player.Config{
		UUID: id, XUID: "2535", Name: "Steve",
		Position: mgl64.Vec3{1.5, 70, -3.25}, Velocity: mgl64.Vec3{0, -0.5, 0},
		Health: 17, MaxHealth: 20, Food: 15, FoodTick: 3, Exhaustion: 1.5, Saturation: 2,
		Experience: 42, AirSupply: 300, MaxAirSupply: 300, EnchantmentSeed: 99,
		GameMode: world.GameModeCreative, FireTicks: 7, FallDistance: 1.25, HeldSlot: 4,
		Inventory:           inventory.New(inventorySize, nil),
		EnderChestInventory: inventory.New(enderChestSize, nil),
		OffHand:             inventory.New(1, nil),
		Armour:              inventory.NewArmour(nil),
		Effects:             []effect.Effect{effect.New(effect.Speed, 2, 30*time.Second), effect.NewInfinite(effect.NightVision, 1)},
	}
	_ = c.Inventory.SetItem(0, item.NewStack(block.Stone{}, 1+n%64))
	_ = c.Inventory.SetItem(35, item.NewStack(item.Diamond{}, 3).WithCustomName("shiny"))
	_ = c.EnderChestInventory.SetItem(26, item.NewStack(item.Emerald{}, 5))
	_ = c.OffHand.SetItem(0, item.NewStack(item.Arrow{}, 16))
	c.Armour.Set(item.NewStack(item.Helmet{Tier: item.ArmourTierIron{}}, 1), item.Stack{}, item.Stack{}, item.NewStack(item.Boots{Tier: item.ArmourTierDiamond{}}, 1))
	return c
}

// comparable returns what playerdb keeps of c, in a form to compare.
func comparablePlayer(t *testing.T, c player.Config) map[string]any {
	t.Helper()
	stacks := func(inv *inventory.Inventory) []string {
		var out []string
		for i, s := range inv.Slots() {
			if !s.Empty() {
				out = append(out, fmt.Sprintf("%d:%v", i, s))
			}
		}
		return out
	}
	m := map[string]any{
		"pos": c.Position, "vel": c.Velocity, "rot": c.Rotation, "health": c.Health, "max": c.MaxHealth,
		"food": c.Food, "foodtick": c.FoodTick, "exh": c.Exhaustion, "sat": c.Saturation, "xp": c.Experience,
		"air": c.AirSupply, "maxair": c.MaxAirSupply, "seed": c.EnchantmentSeed, "mode": c.GameMode,
		"fire": c.FireTicks, "fall": c.FallDistance, "held": c.HeldSlot, "name": c.Name, "uuid": c.UUID,
		"inv": stacks(c.Inventory), "ender": stacks(c.EnderChestInventory), "off": stacks(c.OffHand),
		"armour": stacks(c.Armour.Inventory()),
	}
	var effs []string
	for _, e := range c.Effects {
		id, _ := effect.ID(e.Type())
		effs = append(effs, fmt.Sprintf("%d/%v/%d/%v", id, e.Duration(), e.Level(), e.Infinite()))
	}
	m["effects"] = effs
	return m
}

func samePlayer(t *testing.T, what string, got, want player.Config) {
	t.Helper()
	g, w := comparablePlayer(t, got), comparablePlayer(t, want)
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s:\n got %v\nwant %v", what, g, w)
	}
}

// Issue 40 item 1: a player's data is stored in the world's engine, read
// back exactly after a reopen, kept by a backup, and seen as it was by a
// View of the past.
func TestPlayerDataStored(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir, Config{})
	ow := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer ow.Close()
	pp := db.Players()
	id := uuid.New()
	if _, _, err := pp.Load(id, nil); !errors.Is(err, leveldb.ErrNotFound) {
		t.Fatalf("load of a player never saved: %v, want leveldb.ErrNotFound", err)
	}
	first := testPlayer(id, 1)
	if err := pp.Save(id, first, ow); err != nil {
		t.Fatal(err)
	}
	if err := db.Snapshot("before"); err != nil {
		t.Fatal(err)
	}
	second := testPlayer(id, 2)
	second.Position = mgl64.Vec3{100, 64, 100}
	if err := pp.Save(id, second, ow); err != nil {
		t.Fatal(err)
	}
	got, w, err := pp.Load(id, func(world.Dimension) *world.World { return ow })
	if err != nil {
		t.Fatal(err)
	}
	if w != ow {
		t.Fatalf("load gave world %v", w)
	}
	samePlayer(t, "loaded", got, second)

	v, err := db.At("before")
	if err != nil {
		t.Fatal(err)
	}
	old, _, err := v.Players().Load(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	samePlayer(t, "at the snapshot", old, first)
	if err := v.Players().Save(id, second, ow); !errors.Is(err, blazedb.ErrReadOnly) {
		t.Fatalf("save through a View: %v", err)
	}
	v.Close()

	bdir := filepath.Join(t.TempDir(), "backup")
	if err := db.Backup(bdir); err != nil {
		t.Fatal(err)
	}
	if err := pp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pp.Save(id, second, ow); !errors.Is(err, ErrClosed) {
		t.Fatalf("save after Close: %v", err)
	}
	for _, d := range []string{dir, bdir} {
		if d == dir {
			if err := ow.Close(); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		}
		re := openDB(t, d, Config{})
		got, _, err := re.Players().Load(id, nil)
		if err != nil {
			t.Fatal(d, err)
		}
		samePlayer(t, "after reopen of "+d, got, second)
		all, err := re.PlayerData()
		if err != nil || len(all) != 1 || all[0].Err != nil || all[0].ID != id {
			t.Fatalf("PlayerData of %s: %v, %v", d, all, err)
		}
		re.Close()
	}
}

// Issue 40 item 1: the record is the document Dragonfly's playerdb stores,
// so each reads what the other wrote.
func TestPlayerDataIsPlayerdbs(t *testing.T) {
	id := uuid.New()
	want := testPlayer(id, 3)
	pdir := t.TempDir()
	pdb, err := playerdb.NewProvider(pdir)
	if err != nil {
		t.Fatal(err)
	}
	ow := world.Config{Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer ow.Close()
	if err := pdb.Save(id, want, ow); err != nil {
		t.Fatal(err)
	}
	if err := pdb.Close(); err != nil {
		t.Fatal(err)
	}
	ldb, err := leveldb.OpenFile(pdir, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ldb.Get(id[:], nil)
	if err != nil {
		t.Fatal(err)
	}

	db := openDB(t, t.TempDir(), Config{})
	defer db.Close()
	if err := db.SavePlayerData(id, doc); err != nil {
		t.Fatal(err)
	}
	got, _, err := db.Players().Load(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	samePlayer(t, "playerdb's document read by Blaze", got, want)

	// And the other way.
	other := uuid.New()
	if err := db.Players().Save(other, testPlayer(other, 4), ow); err != nil {
		t.Fatal(err)
	}
	all, err := db.PlayerData()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if p.ID == other {
			if err := ldb.Put(other[:], p.JSON(), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	ldb.Close()
	pdb, err = playerdb.NewProvider(pdir)
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	back, _, err := pdb.Load(other, func(world.Dimension) *world.World { return ow })
	if err != nil {
		t.Fatal(err)
	}
	samePlayer(t, "Blaze's document read by playerdb", back, testPlayer(other, 4))
}

// Issue 40 item 1: a record that does not decode is reported, never read
// as defaults: a stack that does not decode, a slot out of range (which
// panics playerdb), another player's document.
func TestPlayerDataDamage(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	defer db.Close()
	id := uuid.New()
	for _, doc := range []string{
		`{`,
		`{"UUID":"` + id.String() + `","Inventory":{"Items":[{"Item":"AAAA","Slot":0}]}}`,
		`{"UUID":"` + id.String() + `","Inventory":{"Items":[{"Item":null,"Slot":99}]}}`,
		`{"UUID":"` + uuid.NewString() + `"}`,
		`{"UUID":"` + id.String() + `","Unknown":1}`,
	} {
		if err := db.SavePlayerData(id, []byte(doc)); !errors.Is(err, ErrPlayerCorrupt) {
			t.Errorf("SavePlayerData(%s): %v", doc, err)
		}
		if err := db.eng.PutNamed(playerDataPrefix+id.String(), append([]byte{playerDataVersion}, doc...)); err != nil {
			t.Fatal(err)
		}
		// A stored record that does not decode is damage, as every other
		// the provider reports: blaze check and callers testing
		// blazedb.ErrCorrupt see it, with the record named.
		var ce CorruptionError
		if _, _, err := db.Players().Load(id, nil); !errors.Is(err, ErrPlayerCorrupt) || !errors.Is(err, blazedb.ErrCorrupt) || !errors.As(err, &ce) || !strings.Contains(ce.Record, id.String()) {
			t.Errorf("load of %s: %v", doc, err)
		}
		all, err := db.PlayerData()
		if err != nil || len(all) != 1 || !errors.Is(all[0].Err, ErrPlayerCorrupt) || !errors.Is(all[0].Err, blazedb.ErrCorrupt) {
			t.Errorf("PlayerData with %s: %v %v", doc, all, err)
		}
	}
	if err := db.eng.PutNamed(playerDataPrefix+id.String(), []byte{playerDataVersion + 1, '{', '}'}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Players().Load(id, nil); !errors.Is(err, ErrPlayerCorrupt) {
		t.Errorf("newer version: %v", err)
	}
}

// Issue 40 item 1: an item this server does not know fails the load,
// rather than vanish from the inventory; Dragonfly then lets the player
// join with defaults, and the stored data is not overwritten, by a save or
// a checkpoint, until it reads again.
func TestPlayerDataUnknownItemKept(t *testing.T) {
	db := openDB(t, t.TempDir(), Config{})
	defer db.Close()
	ow := world.Config{Provider: db, Dim: world.Overworld, Synchronous: true, Log: quiet}.New()
	defer ow.Close()
	id := uuid.New()
	var b bytes.Buffer
	if err := nbt.NewEncoderWithEncoding(&b, nbt.LittleEndian).Encode(map[string]any{"Name": "plugin:relic", "Count": byte(1), "Damage": int16(0)}); err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(map[string]any{"UUID": id.String(), "Inventory": map[string]any{"Items": []map[string]any{{"Item": b.Bytes(), "Slot": 3}}}})
	if err := db.eng.PutNamed(playerDataPrefix+id.String(), append([]byte{playerDataVersion}, doc...)); err != nil {
		t.Fatal(err)
	}
	pp := db.Players()
	defer pp.Close()
	// Not damage: a server that knows the item reads it.
	if _, _, err := pp.Load(id, nil); !errors.Is(err, ErrPlayerCorrupt) || errors.Is(err, blazedb.ErrCorrupt) || !strings.Contains(err.Error(), "plugin:relic") {
		t.Fatalf("load of an unknown item: %v", err)
	}
	if err := pp.Save(id, testPlayer(id, 1), ow); !errors.Is(err, ErrPlayerCorrupt) {
		t.Fatalf("save over data that did not read: %v", err)
	}
	got, err := db.eng.GetNamed(playerDataPrefix + id.String())
	if err != nil || !bytes.Equal(got[1:], doc) {
		t.Fatalf("the stored data changed: %q, %v", got, err)
	}
}

// An item whose NBT declares a list of 2^31-1 compounds is refused as
// damage before gophertunnel's decoder allocates it (32 GiB: the process
// died of it before).
func TestDecodeStackRefusesHugeList(t *testing.T) {
	b := binary.LittleEndian.AppendUint32([]byte{10, 0, 0, 9, 1, 0, 'l', 10}, 1<<31-1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := decodeStack(append(b, 0, 0))
	runtime.ReadMemStats(&after)
	if !nbtwalk.Refused(err) {
		t.Fatalf("decoded %v, want the list refused", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("allocated %d bytes to refuse it", n)
	}
}

// FuzzDecodePlayerData: no record makes the decoder panic.
func FuzzDecodePlayerData(f *testing.F) {
	id := uuid.MustParse("8a7d2f34-5b2c-4c2a-9a55-6f1f3c1a0b7e")
	good, err := encodePlayerData(id, testPlayer(id, 5), world.Overworld)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte{1, '{', '}'})
	f.Fuzz(func(t *testing.T, v []byte) {
		c, _, err := decodePlayerData(id, v)
		if err == nil && c.UUID != id {
			t.Fatalf("decoded the data of %v", c.UUID)
		}
	})
}
