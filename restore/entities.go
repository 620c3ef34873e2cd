package restore

import (
	"encoding/binary"
	"maps"
	"math"
	"reflect"
	"time"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// blockEntities puts back the block entities of the column: those whose
// NBT differs from the source's are decoded again from it, as the World
// decodes them on load, and those the source lacks are removed.
func (j *Job) blockEntities(pos world.ChunkPos, live *world.Column, src *chunk.Column, br world.BlockRegistry) {
	st := &j.col
	want := make(map[cube.Pos]map[string]any, len(src.BlockEntities))
	for _, be := range src.BlockEntities {
		want[be.Pos] = be.Data
	}
	for p := range live.BlockEntities {
		if _, ok := want[p]; !ok {
			delete(live.BlockEntities, p)
			j.st.BlockEntitiesSet++
			st.changed = true
			st.note(p)
		}
	}
	for p, data := range want {
		rid := live.Chunk.Block(uint8(p[0]), int16(p[1]), uint8(p[2]), 0)
		b, ok := br.BlockByRuntimeID(rid)
		if !ok {
			continue
		}
		nb, ok := b.(world.NBTer)
		if !ok {
			// The World drops such an entry on load too.
			continue
		}
		if cur, ok := live.BlockEntities[p]; ok {
			if cn, ok := cur.(world.NBTer); ok && sameNBT(cn.EncodeNBT(), data) {
				continue
			}
		}
		live.BlockEntities[p] = nb.DecodeNBT(maps.Clone(data)).(world.Block)
		j.st.BlockEntitiesSet++
		st.changed = true
		st.note(p)
	}
}

// note records a changed block entity for the viewers.
func (st *columnState) note(p cube.Pos) {
	if st.overflow {
		return
	}
	if len(st.updates) == maxBlockUpdates {
		st.overflow = true
		return
	}
	st.updates = append(st.updates, layerPos{pos: p})
}

// sameNBT compares two NBT compounds as they would be stored: each is
// encoded and decoded again, so that the Go types of a freshly encoded
// block and of one read from disk agree. The position keys are ignored:
// providers add them, blocks do not.
func sameNBT(a, b map[string]any) bool {
	ca, err := canonical(a)
	if err != nil {
		return false
	}
	cb, err := canonical(b)
	if err != nil {
		return false
	}
	return reflect.DeepEqual(ca, cb)
}

func canonical(m map[string]any) (map[string]any, error) {
	m = maps.Clone(m)
	delete(m, "x")
	delete(m, "y")
	delete(m, "z")
	data, err := nbt.MarshalEncoding(m, nbt.LittleEndian)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = nbt.UnmarshalEncoding(data, &out, nbt.LittleEndian)
	return out, err
}

// entityKey is what identifies an entity for the comparison: its unique id,
// type and position.
type entityKey struct {
	id      int64
	typ     string
	x, y, z float32
}

// entities puts back the entities of the column: if the World's entities
// (players aside) are not the source's by id, type and position, they are
// removed and the source's added.
func (j *Job) entities(tx *world.Tx, pos world.ChunkPos, src *chunk.Column) {
	var live []world.Entity
	have := map[entityKey]int{}
	box := cube.Box(float64(pos[0])*16, -math.MaxFloat32, float64(pos[1])*16, float64(pos[0])*16+16, math.MaxFloat32, float64(pos[1])*16+16)
	for e := range tx.EntitiesWithin(box) {
		if e.H().Type().EncodeEntity() == "minecraft:player" || chunkOf(e.Position()) != pos {
			continue
		}
		live = append(live, e)
		id := e.H().UUID()
		p := e.Position()
		have[entityKey{int64(binary.LittleEndian.Uint64(id[8:])), e.H().Type().EncodeEntity(), float32(p[0]), float32(p[1]), float32(p[2])}]++
	}
	same := len(live) == len(src.Entities)
	for _, e := range src.Entities {
		if !same {
			break
		}
		typ, _ := e.Data["identifier"].(string)
		p := readVec3(e.Data, "Pos")
		k := entityKey{e.ID, typ, float32(p[0]), float32(p[1]), float32(p[2])}
		if have[k] == 0 {
			same = false
		}
		have[k]--
	}
	if same {
		return
	}
	j.col.changed = true
	for _, e := range live {
		if h := tx.RemoveEntity(e); h != nil {
			_ = h.Close()
		}
		j.st.EntitiesRemoved++
	}
	reg := j.w.EntityRegistry()
	for _, e := range src.Entities {
		typ, _ := e.Data["identifier"].(string)
		t, ok := reg.Lookup(typ)
		if !ok {
			j.st.EntitiesSkipped++
			continue
		}
		var id uuid.UUID
		binary.LittleEndian.PutUint64(id[8:], uint64(e.ID))
		data := maps.Clone(e.Data)
		opts := world.EntitySpawnOpts{
			ID:       id,
			Position: readVec3(data, "Pos"),
			Velocity: readVec3(data, "Motion"),
			Rotation: cube.Rotation{float64(readFloat32(data, "Yaw")), float64(readFloat32(data, "Pitch"))},
		}
		opts.NameTag, _ = data["NameTag"].(string)
		tx.AddEntity(opts.New(t, entityNBT{t: t, data: data}))
		j.st.EntitiesAdded++
	}
}

// entityNBT decodes an entity as the World does when it loads a column.
type entityNBT struct {
	t    world.EntityType
	data map[string]any
}

func (c entityNBT) Apply(d *world.EntityData) {
	d.Age = time.Duration(readInt16(c.data, "Age")) * (time.Second / 20)
	d.FireDuration = time.Duration(readInt16(c.data, "Fire")) * time.Second / 20
	c.t.DecodeNBT(c.data, d)
}

func chunkOf(v mgl64.Vec3) world.ChunkPos {
	return world.ChunkPos{int32(math.Floor(v[0])) >> 4, int32(math.Floor(v[2])) >> 4}
}

// readVec3, readFloat32 and readInt16 read NBT as Dragonfly does.
func readVec3(m map[string]any, k string) mgl64.Vec3 {
	switch v := m[k].(type) {
	case []any:
		if len(v) != 3 {
			return mgl64.Vec3{}
		}
		var out mgl64.Vec3
		for i, f := range v {
			f32, _ := f.(float32)
			out[i] = float64(f32)
		}
		return out
	case []float32:
		if len(v) != 3 {
			return mgl64.Vec3{}
		}
		return mgl64.Vec3{float64(v[0]), float64(v[1]), float64(v[2])}
	}
	return mgl64.Vec3{}
}

func readFloat32(m map[string]any, k string) float32 {
	f, _ := m[k].(float32)
	return f
}

func readInt16(m map[string]any, k string) int16 {
	v, _ := m[k].(int16)
	return v
}
