package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/nbtwalk"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/entity/effect"
	"github.com/df-mc/dragonfly/server/item"
	"github.com/df-mc/dragonfly/server/item/inventory"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// Players' data (what Dragonfly's player.Provider saves when a player
// leaves: position, inventories, health, effects, game mode) lives in the
// engine beside the chunks, one named record per player, so that it has
// the world's durability, backups and history, and a checkpoint
// (checkpoint.go) writes it in one atomic batch with the chunks:
//
//	name  "playerdata/" + UUID (canonical, lowercase)
//	+-------+-------------------------------------------------------+
//	| bytes | field                                                 |
//	+-------+-------------------------------------------------------+
//	|     1 | version (1)                                           |
//	|     n | the JSON document Dragonfly's playerdb stores, field  |
//	|       | for field (playerDataJSON): items as little-endian    |
//	|       | NBT, as playerdb writes them                          |
//	+-------+-------------------------------------------------------+
//
// The engine checksums the record. The document is playerdb's own, so
// that converting a playerdb folder is a copy. Part of the on-disk format.
const (
	playerDataPrefix  = "playerdata/"
	playerDataVersion = 1
)

// Inventory sizes, as Dragonfly's player and playerdb make them.
const (
	inventorySize  = 36
	enderChestSize = 27
)

// playerDataJSON is the document Dragonfly's playerdb stores (its
// unexported jsonData), with the same field names, so that the bytes are
// interchangeable.
type playerDataJSON struct {
	UUID                             string
	XUID                             string
	Username                         string
	Position, Velocity               mgl64.Vec3
	Yaw, Pitch                       float64
	Health, MaxHealth                float64
	Hunger                           int
	FoodTick                         int
	ExhaustionLevel, SaturationLevel float64
	EnchantmentSeed                  int64
	Experience                       int
	AirSupply, MaxAirSupply          int
	GameMode                         uint8
	Inventory                        playerInventoryJSON
	EnderChestInventory              []playerSlotJSON
	Effects                          []playerEffectJSON
	FireTicks                        int64
	FallDistance                     float64
	Dimension                        int32
}

type playerInventoryJSON struct {
	Items        []playerSlotJSON
	Boots        []byte
	Leggings     []byte
	Chestplate   []byte
	Helmet       []byte
	OffHand      []byte
	MainHandSlot uint32
}

type playerSlotJSON struct {
	Item []byte
	Slot int
}

type playerEffectJSON struct {
	ID              int
	Level           int
	Duration        time.Duration
	Ambient         bool
	ParticlesHidden bool
	Infinite        bool
}

// Players returns the world's player.Provider, to set as a server's
// PlayerProvider (server.Config.PlayerProvider, or UserConfig's
// Players.SaveData off and the field set): the players' data is kept in
// the world's engine, with its durability mode, in its backups and
// history, and Checkpoint writes it in one atomic batch with the chunks.
// Its Close does not close the DB (Dragonfly closes the player provider
// before the worlds): after it, Save fails with ErrClosed, and Checkpoint
// no longer gathers into the DB. Safe for concurrent use.
func (db *DB) Players() player.Provider {
	addPlayerDB(db)
	return &playerStore{db: db}
}

// playerStore is the player.Provider that Players returns.
type playerStore struct {
	db     *DB
	closed atomic.Bool
}

// Save stores player id's data, as Dragonfly does when the player leaves.
func (s *playerStore) Save(id uuid.UUID, d player.Config, w *world.World) error {
	if s.closed.Load() {
		return fmt.Errorf("save data of player %v: %w", id, ErrClosed)
	}
	if w == nil {
		return fmt.Errorf("save data of player %v: no world", id)
	}
	v, err := encodePlayerData(id, d, w.Dimension())
	if err != nil {
		return fmt.Errorf("save data of player %v: %w", id, err)
	}
	if err := s.db.putPlayerData(id, v); err != nil {
		return fmt.Errorf("save data of player %v: %w", id, err)
	}
	return nil
}

// Load reads player id's data, as Dragonfly does when the player joins. A
// player never saved gives an error satisfying errors.Is(err,
// leveldb.ErrNotFound), as playerdb's does.
//
// Data that does not read (damaged, or holding an item this server does
// not know) gives an error, with which Dragonfly lets the player join with
// defaults; that player's record is then never overwritten while the DB is
// open (Save and Checkpoint fail for it), so that nothing of it is lost
// before blaze check names it and blaze repair, or a server that knows the
// item, reads it.
func (s *playerStore) Load(id uuid.UUID, dim func(world.Dimension) *world.World) (player.Config, *world.World, error) {
	v, err := s.db.eng.GetNamed(playerDataPrefix + id.String())
	conf, w, err := loadPlayerData(id, v, err, dim)
	switch {
	case err == nil:
		s.db.unreadPlayers.Delete(id)
	case errors.Is(err, ErrPlayerCorrupt) || errors.Is(err, blazedb.ErrCorrupt):
		s.db.unreadPlayers.Store(id, struct{}{})
	}
	return conf, w, err
}

// Close marks the provider closed; the DB stays open.
func (s *playerStore) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		removePlayerDB(s.db)
	}
	return nil
}

// loadPlayerData decodes player id's record v, read with error err.
func loadPlayerData(id uuid.UUID, v []byte, err error, dim func(world.Dimension) *world.World) (player.Config, *world.World, error) {
	if errors.Is(err, blazedb.ErrNotFound) {
		return player.Config{}, nil, fmt.Errorf("load data of player %v: %w", id, leveldb.ErrNotFound)
	}
	if err != nil {
		return player.Config{}, nil, fmt.Errorf("load data of player %v: %w", id, err)
	}
	conf, d, err := decodePlayerData(id, v)
	if err != nil {
		return player.Config{}, nil, fmt.Errorf("load data of player %v: %w", id, playerCorruption(id.String(), err))
	}
	var w *world.World
	if dim != nil {
		w = dim(d)
	}
	return conf, w, nil
}

// putPlayerData writes player id's record v, into the checkpoint being
// gathered if there is one.
func (db *DB) putPlayerData(id uuid.UUID, v []byte) error {
	if db.conf.ReadOnly {
		return blazedb.ErrReadOnly
	}
	if db.closed.Load() {
		return ErrClosed
	}
	if _, unread := db.unreadPlayers.Load(id); unread {
		return fmt.Errorf("%w: not overwritten: the stored data did not read when the player joined (blaze check names it)", ErrPlayerCorrupt)
	}
	db.ckpt.mu.RLock()
	defer db.ckpt.mu.RUnlock()
	if p := db.ckpt.pending; p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.b.PutNamed(playerDataPrefix+id.String(), v)
		return nil
	}
	return db.eng.PutNamed(playerDataPrefix+id.String(), v)
}

// encodePlayerData encodes d, of a player in dimension dim, as its record.
func encodePlayerData(id uuid.UUID, d player.Config, dim world.Dimension) ([]byte, error) {
	dimID, ok := world.DimensionID(dim)
	if !ok {
		return nil, fmt.Errorf("unknown dimension %v", dim)
	}
	mode, ok := world.GameModeID(d.GameMode)
	if !ok {
		return nil, fmt.Errorf("unknown game mode %T", d.GameMode)
	}
	j := playerDataJSON{
		UUID:            id.String(),
		XUID:            d.XUID,
		Username:        d.Name,
		Position:        d.Position,
		Velocity:        d.Velocity,
		Yaw:             d.Rotation.Yaw(),
		Pitch:           d.Rotation.Pitch(),
		Health:          d.Health,
		MaxHealth:       d.MaxHealth,
		Hunger:          d.Food,
		FoodTick:        d.FoodTick,
		ExhaustionLevel: d.Exhaustion,
		SaturationLevel: d.Saturation,
		Experience:      d.Experience,
		AirSupply:       d.AirSupply,
		MaxAirSupply:    d.MaxAirSupply,
		EnchantmentSeed: d.EnchantmentSeed,
		GameMode:        uint8(mode),
		FireTicks:       d.FireTicks,
		FallDistance:    d.FallDistance,
		Dimension:       int32(dimID),
	}
	var err error
	if d.Inventory != nil {
		if j.Inventory.Items, err = encodeSlots(d.Inventory.Slots()); err != nil {
			return nil, fmt.Errorf("inventory: %w", err)
		}
	}
	if d.EnderChestInventory != nil {
		if j.EnderChestInventory, err = encodeSlots(d.EnderChestInventory.Slots()); err != nil {
			return nil, fmt.Errorf("ender chest: %w", err)
		}
	}
	if d.Armour != nil {
		for _, a := range []struct {
			dst *[]byte
			s   item.Stack
		}{{&j.Inventory.Helmet, d.Armour.Helmet()}, {&j.Inventory.Chestplate, d.Armour.Chestplate()},
			{&j.Inventory.Leggings, d.Armour.Leggings()}, {&j.Inventory.Boots, d.Armour.Boots()}} {
			if *a.dst, err = encodeStack(a.s); err != nil {
				return nil, fmt.Errorf("armour: %w", err)
			}
		}
	}
	if d.OffHand != nil {
		off, _ := d.OffHand.Item(0)
		if j.Inventory.OffHand, err = encodeStack(off); err != nil {
			return nil, fmt.Errorf("off hand: %w", err)
		}
	}
	j.Inventory.MainHandSlot = uint32(d.HeldSlot)
	for _, e := range d.Effects {
		id, ok := effect.ID(e.Type())
		if !ok {
			continue // an effect with no id cannot be stored (playerdb writes an empty one)
		}
		j.Effects = append(j.Effects, playerEffectJSON{ID: id, Level: e.Level(), Duration: e.Duration(),
			Ambient: e.Ambient(), ParticlesHidden: e.ParticlesHidden(), Infinite: e.Infinite()})
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	return append([]byte{playerDataVersion}, b...), nil
}

// encodeSlots encodes the non-empty stacks of an inventory, as playerdb does.
func encodeSlots(stacks []item.Stack) ([]playerSlotJSON, error) {
	var out []playerSlotJSON
	for slot, s := range stacks {
		b, err := encodeStack(s)
		if err != nil {
			return nil, fmt.Errorf("slot %d: %w", slot, err)
		}
		if b != nil {
			out = append(out, playerSlotJSON{Item: b, Slot: slot})
		}
	}
	return out, nil
}

// encodeStack encodes s as little-endian NBT, nil when empty.
func encodeStack(s item.Stack) ([]byte, error) {
	if s.Empty() {
		return nil, nil
	}
	var b bytes.Buffer
	if err := nbt.NewEncoderWithEncoding(&b, nbt.LittleEndian).Encode(item.WriteNBT(s, true)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodePlayerData decodes player id's record v into a player.Config and
// the dimension it was saved in. Unlike playerdb, it never substitutes an
// empty stack for one that does not decode, nor panics on a slot out of
// range: either is damage, reported wrapping ErrPlayerCorrupt.
func decodePlayerData(id uuid.UUID, v []byte) (conf player.Config, dim world.Dimension, err error) {
	bad := func(format string, a ...any) (player.Config, world.Dimension, error) {
		return player.Config{}, nil, fmt.Errorf("%w: "+format, append([]any{ErrPlayerCorrupt}, a...)...)
	}
	switch {
	case len(v) == 0:
		return bad("empty record")
	case v[0] > playerDataVersion:
		return bad("record version %d is newer than this build reads (%d)", v[0], playerDataVersion)
	case v[0] != playerDataVersion:
		return bad("record version %d", v[0])
	}
	dec := json.NewDecoder(bytes.NewReader(v[1:]))
	dec.DisallowUnknownFields()
	var j playerDataJSON
	if err := dec.Decode(&j); err != nil {
		return bad("%v", err)
	}
	if dec.More() {
		return bad("bytes after the document")
	}
	if got, err := uuid.Parse(j.UUID); err != nil || got != id {
		return bad("record holds UUID %q", j.UUID)
	}
	var ok bool
	if dim, ok = world.DimensionByID(int(j.Dimension)); !ok {
		return bad("unknown dimension %d", j.Dimension)
	}
	mode, ok := world.GameModeByID(int(j.GameMode))
	if !ok {
		return bad("unknown game mode %d", j.GameMode)
	}
	conf = player.Config{
		UUID: id, XUID: j.XUID, Name: j.Username,
		Position: j.Position, Rotation: cube.Rotation{j.Yaw, j.Pitch}, Velocity: j.Velocity,
		Health: j.Health, MaxHealth: j.MaxHealth,
		Food: j.Hunger, FoodTick: j.FoodTick, Exhaustion: j.ExhaustionLevel, Saturation: j.SaturationLevel,
		Experience: j.Experience, AirSupply: j.AirSupply, MaxAirSupply: j.MaxAirSupply,
		EnchantmentSeed: j.EnchantmentSeed, GameMode: mode,
		FireTicks: j.FireTicks, FallDistance: j.FallDistance,
		HeldSlot:            int(j.Inventory.MainHandSlot),
		Inventory:           inventory.New(inventorySize, nil),
		EnderChestInventory: inventory.New(enderChestSize, nil),
		OffHand:             inventory.New(1, nil),
		Armour:              inventory.NewArmour(nil),
	}
	if j.Inventory.MainHandSlot > 8 {
		return bad("held slot %d", j.Inventory.MainHandSlot)
	}
	if err := decodeSlots(j.Inventory.Items, conf.Inventory); err != nil {
		return bad("inventory: %w", err)
	}
	if err := decodeSlots(j.EnderChestInventory, conf.EnderChestInventory); err != nil {
		return bad("ender chest: %w", err)
	}
	var armour [4]item.Stack
	for i, b := range [][]byte{j.Inventory.Helmet, j.Inventory.Chestplate, j.Inventory.Leggings, j.Inventory.Boots} {
		if armour[i], err = decodeStack(b); err != nil {
			return bad("armour: %w", err)
		}
	}
	conf.Armour.Set(armour[0], armour[1], armour[2], armour[3])
	off, err := decodeStack(j.Inventory.OffHand)
	if err != nil {
		return bad("off hand: %w", err)
	}
	_ = conf.OffHand.SetItem(0, off)
	for _, e := range j.Effects {
		t, ok := effect.ByID(e.ID)
		if !ok {
			return bad("%w: unknown effect %d", errNotKnownHere, e.ID)
		}
		lt, lasting := t.(effect.LastingType)
		var eff effect.Effect
		switch {
		case !lasting:
			eff = effect.NewInstant(t, e.Level)
		case e.Ambient:
			eff = effect.NewAmbient(lt, e.Level, e.Duration)
		case e.Infinite:
			eff = effect.NewInfinite(lt, e.Level)
		default:
			eff = effect.New(lt, e.Level, e.Duration)
		}
		if e.ParticlesHidden && lasting {
			eff = eff.WithoutParticles()
		}
		conf.Effects = append(conf.Effects, eff)
	}
	return conf, dim, nil
}

// decodeSlots puts the stacks of slots into inv.
func decodeSlots(slots []playerSlotJSON, inv *inventory.Inventory) error {
	for _, s := range slots {
		if s.Slot < 0 || s.Slot >= inv.Size() {
			return fmt.Errorf("slot %d of %d", s.Slot, inv.Size())
		}
		st, err := decodeStack(s.Item)
		if err != nil {
			return fmt.Errorf("slot %d: %w", s.Slot, err)
		}
		if err := inv.SetItem(s.Slot, st); err != nil {
			return fmt.Errorf("slot %d: %w", s.Slot, err)
		}
	}
	return nil
}

// decodeStack decodes an item stack playerdb encoded: nil is empty.
func decodeStack(b []byte) (s item.Stack, err error) {
	if len(b) == 0 {
		return item.Stack{}, nil
	}
	defer func() {
		// A panic in a third-party decoder is damage, never a crash.
		if r := recover(); r != nil {
			s, err = item.Stack{}, fmt.Errorf("item NBT: %v", r)
		}
	}()
	// A length beyond the bytes would be allocated by the decoder before
	// it fails (GiBs), and nesting too deep would overflow its stack:
	// fatal errors no recover catches.
	if err := nbtwalk.CheckOne(b); err != nil {
		return item.Stack{}, fmt.Errorf("item NBT: %w", err)
	}
	var m map[string]any
	r := bytes.NewReader(b)
	if err := nbt.NewDecoderWithEncoding(r, nbt.LittleEndian).Decode(&m); err != nil {
		return item.Stack{}, fmt.Errorf("item NBT: %w", err)
	}
	if r.Len() != 0 {
		return item.Stack{}, fmt.Errorf("item NBT: %d bytes after the compound", r.Len())
	}
	// Only stacks that are not empty are stored: one that reads empty is
	// an item this server does not know, or a count of 0.
	s = item.ReadNBT(m, nil)
	if s.Empty() {
		return item.Stack{}, fmt.Errorf("%w: item %v does not read as a stack (an item this server does not know?)", errNotKnownHere, m["Name"])
	}
	return s, nil
}

// PlayerData is a player's stored data, as PlayerData reads it: a plain
// value, safe to copy and to use from any goroutine.
type PlayerData struct {
	Name string    // the id as stored: a UUID, unless the record is bad
	ID   uuid.UUID // Name parsed
	// Record is the record's value (playerDataVersion, then playerdb's
	// JSON document); nil when Err is set.
	Record []byte
	// Err is why it could not be read: damage, satisfying
	// errors.Is(Err, blazedb.ErrCorrupt), and wrapping ErrPlayerCorrupt
	// when the record read intact but does not decode (or its name is no
	// UUID).
	Err error
}

// JSON returns the document playerdb stores for the player: the record
// without its version byte.
func (p PlayerData) JSON() []byte {
	if len(p.Record) == 0 {
		return nil
	}
	return p.Record[1:]
}

// PlayerData reads every player's stored data, for tools that visit a
// whole world (check, info, convert): each one it cannot read or decode
// comes with the reason rather than stopping it. Safe for concurrent use;
// data saved meanwhile may be left out.
func (db *DB) PlayerData() ([]PlayerData, error) {
	names, err := db.eng.Names()
	if err != nil {
		return nil, err
	}
	var out []PlayerData
	for _, n := range names {
		s, ok := strings.CutPrefix(n, playerDataPrefix)
		if !ok {
			continue
		}
		p := PlayerData{Name: s}
		if p.ID, err = uuid.Parse(s); err != nil || p.ID.String() != s {
			// Blaze writes the canonical form only; another would not be
			// found by its UUID.
			p.Err = playerCorruption(s, fmt.Errorf("%w: player data record %q is not named by a UUID", ErrPlayerCorrupt, n))
			out = append(out, p)
			continue
		}
		v, err := db.eng.GetNamed(n)
		if errors.Is(err, blazedb.ErrNotFound) {
			continue // removed meanwhile
		}
		if err == nil {
			if _, _, err = decodePlayerData(p.ID, v); err != nil {
				err = playerCorruption(s, err)
			}
		}
		if err != nil {
			p.Err = fmt.Errorf("data of player %v: %w", p.ID, err)
		} else {
			p.Record = v
		}
		out = append(out, p)
	}
	return out, nil
}

// errNotKnownHere marks a record that reads intact but holds an item or
// effect this server does not know.
var errNotKnownHere = errors.New("not known to this server")

// playerCorruption marks err, a stored player data record named name
// (after playerDataPrefix) that does not decode, as damage: it then
// satisfies errors.Is(err, blazedb.ErrCorrupt) as well as ErrPlayerCorrupt.
// A document a caller hands SavePlayerData is refused with
// ErrPlayerCorrupt alone: bad input is not damage; nor is an item or
// effect this server does not know (a plugin's, say), which another server
// may read, as a column's unknown block state is not (ErrUnknownState).
func playerCorruption(name string, err error) error {
	if errors.Is(err, errNotKnownHere) {
		return err
	}
	return CorruptionError{File: chunksFile, Record: fmt.Sprintf("named record %q", playerDataPrefix+name), Err: err}
}

// SavePlayerData stores player id's data as the JSON document Dragonfly's
// playerdb stores (its value under the UUID's 16 bytes), for conversion
// from a playerdb folder. A document that does not decode is refused with
// ErrPlayerCorrupt and nothing is written.
func (db *DB) SavePlayerData(id uuid.UUID, doc []byte) error {
	v := append([]byte{playerDataVersion}, doc...)
	if _, _, err := decodePlayerData(id, v); err != nil {
		return fmt.Errorf("save data of player %v: %w", id, err)
	}
	if err := db.putPlayerData(id, v); err != nil {
		return fmt.Errorf("save data of player %v: %w", id, err)
	}
	return nil
}

// Players returns the players' data as it was at the View's point, as a
// player.Provider whose Save fails with blazedb.ErrReadOnly: a rollback
// loads a player's inventory from it and saves it through the DB's.
func (v *View) Players() player.Provider { return viewPlayers{v} }

// viewPlayers is the read-only player.Provider of a View.
type viewPlayers struct{ v *View }

// Save fails with blazedb.ErrReadOnly: a View is read-only.
func (p viewPlayers) Save(id uuid.UUID, _ player.Config, _ *world.World) error {
	return fmt.Errorf("save data of player %v: %w", id, blazedb.ErrReadOnly)
}

// Load reads player id's data as it was at the View's point.
func (p viewPlayers) Load(id uuid.UUID, dim func(world.Dimension) *world.World) (player.Config, *world.World, error) {
	if p.v.closed.Load() {
		return player.Config{}, nil, fmt.Errorf("load data of player %v: %w", id, ErrClosed)
	}
	v, err := p.v.db.eng.GetNamedAt(playerDataPrefix+id.String(), p.v.at.seq)
	return loadPlayerData(id, v, err, dim)
}

// Close does nothing: the View is closed on its own.
func (viewPlayers) Close() error { return nil }
