package restore

import (
	"encoding/binary"
	"maps"
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
)

// loadedNBT is a source block entity as a World holds it once loaded: its
// block's runtime ID and the NBT that block, decoded from the source's
// data, encodes to. Made off the tick, it lets the slice compare the
// World's block entity with one encoding of the same Go types, and makes
// keys a block does not keep (positions, fields of other versions) count
// for nothing.
type loadedNBT struct {
	rid uint32
	nbt map[string]any
}

// loadBlockEntities decodes the source column's block entities as the
// World would on load and encodes them again, off the tick.
func loadBlockEntities(col *chunk.Column, br world.BlockRegistry) map[cube.Pos]loadedNBT {
	if len(col.BlockEntities) == 0 {
		return nil
	}
	out := make(map[cube.Pos]loadedNBT, len(col.BlockEntities))
	for _, be := range col.BlockEntities {
		p := be.Pos
		if r := col.Chunk.Range(); p[1] < r[0] || p[1] > r[1] {
			continue
		}
		rid := col.Chunk.Block(uint8(p[0]), int16(p[1]), uint8(p[2]), 0)
		b, ok := br.BlockByRuntimeID(rid)
		if !ok {
			continue
		}
		nb, ok := b.(world.NBTer)
		if !ok {
			continue
		}
		if enc, ok := nb.DecodeNBT(maps.Clone(be.Data)).(world.NBTer); ok {
			out[p] = loadedNBT{rid: rid, nbt: enc.EncodeNBT()}
		}
	}
	return out
}

// blockEntities puts back the block entities of the column: those whose
// NBT differs from the source's are decoded again from it, as the World
// decodes them on load, and those the source lacks are removed.
func (j *Job) blockEntities(pos world.ChunkPos, live *world.Column, source source, br world.BlockRegistry) {
	src := source.col
	st := &j.col
	want := make(map[cube.Pos]map[string]any, len(src.BlockEntities))
	for _, be := range src.BlockEntities {
		want[be.Pos] = be.Data
	}
	for p := range live.BlockEntities {
		if j.mask != nil && !j.mask.covers(p) {
			continue
		}
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
			if cn, ok := cur.(world.NBTer); ok {
				if l, ok := source.loaded[p]; ok && l.rid == rid {
					// Encoded and compared off the tick; a later slice
					// compares again and puts back what differs.
					j.beChecks = append(j.beChecks, beCheck{col: pos, pos: p, rid: rid, cur: cn, want: l.nbt, data: data})
					continue
				} else if sameNBT(cn.EncodeNBT(), data) {
					continue
				}
			}
		}
		live.BlockEntities[p] = nb.DecodeNBT(maps.Clone(data)).(world.Block)
		j.st.BlockEntitiesSet++
		st.changed = true
		st.note(p)
	}
}

// beCheck is a block entity of the World whose comparison with the
// source's a slice deferred. cur is the World's block value, copied: a
// Dragonfly block is a value, and one with state that changes in place
// keeps it in an inventory, which locks; so it may be encoded off the
// tick.
type beCheck struct {
	col  world.ChunkPos
	pos  cube.Pos
	rid  uint32
	cur  world.NBTer
	want map[string]any // the source's, as the World would hold it
	data map[string]any // the source's, as the provider gave it
}

// checkBlockEntity encodes a deferred block entity off the tick and queues
// it for a slice when it differs from the source's.
func (j *Job) checkBlockEntity(c beCheck) {
	if !equalNBT(c.cur.EncodeNBT(), c.want) {
		j.beCommits = append(j.beCommits, c)
	}
}

// commitBlockEntity puts back, on the tick, the block entities found to
// differ off it: compared again with what the World holds now, and left
// alone if the block at their place changed since (an edit after the
// comparison, as any made after a column is done).
func (j *Job) commitBlockEntity(tx *world.Tx, c beCheck) {
	l, ok := j.loaders[c.col]
	if !ok {
		return
	}
	live, ok := l.Chunk(c.col)
	if !ok || live.Chunk.Block(uint8(c.pos[0]), int16(c.pos[1]), uint8(c.pos[2]), 0) != c.rid {
		return
	}
	if cur, ok := live.BlockEntities[c.pos].(world.NBTer); ok && equalNBT(cur.EncodeNBT(), c.want) {
		return
	}
	b, _ := j.w.BlockRegistry().BlockByRuntimeID(c.rid)
	nb, ok := b.(world.NBTer)
	if !ok {
		return
	}
	live.BlockEntities[c.pos] = nb.DecodeNBT(maps.Clone(c.data)).(world.Block)
	j.st.BlockEntitiesSet++
	if !j.changed[c.col] {
		j.changed[c.col] = true
		j.st.ColumnsChanged++
	}
	// A column may be half done: commit with a state of its own.
	saved := j.col
	j.col = columnState{}
	j.col.note(c.pos)
	j.commit(tx, c.col, live)
	j.col = saved
}

// note records a changed block entity for the viewers.
func (st *columnState) note(p cube.Pos) { st.noteLayer(p, 0) }

// noteLayer records a changed block of layer l at p for the viewers.
func (st *columnState) noteLayer(p cube.Pos, l uint8) {
	if st.overflow {
		return
	}
	if len(st.updates) == maxBlockUpdates {
		st.overflow = true
		return
	}
	st.updates = append(st.updates, layerPos{p, l})
}

// changedBlock records that the block of layer l at p went from a to b:
// whether light must be computed again, and the update for the viewers.
func (st *columnState) changedBlock(p cube.Pos, l uint8, a, b uint32, br world.BlockRegistry) {
	if !st.light && (br.LightBlock(a) != br.LightBlock(b) || br.FilteringBlock(a) != br.FilteringBlock(b)) {
		st.light = true
	}
	st.noteLayer(p, l)
}

// sameNBT compares a block's NBT, freshly encoded, with NBT as a provider
// decoded it. The Go types differ where NBT does not: a block encodes a
// list as []map[string]any or []int32 where a decoder gives []any, so lists
// and compounds are compared element by element and the rest by value. The
// position keys are ignored: providers add them, blocks do not.
func sameNBT(a, b map[string]any) bool {
	n := 0
	for k, va := range a {
		if k == "x" || k == "y" || k == "z" {
			continue
		}
		vb, ok := b[k]
		if !ok || !sameValue(reflect.ValueOf(va), reflect.ValueOf(vb)) {
			return false
		}
		n++
	}
	for k := range b {
		if k != "x" && k != "y" && k != "z" {
			n--
		}
	}
	return n == 0
}

func sameValue(a, b reflect.Value) bool {
	for a.Kind() == reflect.Interface && !a.IsNil() {
		a = a.Elem()
	}
	for b.Kind() == reflect.Interface && !b.IsNil() {
		b = b.Elem()
	}
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	switch a.Kind() {
	case reflect.Slice, reflect.Array:
		if b.Kind() != reflect.Slice && b.Kind() != reflect.Array || a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if b.Kind() != reflect.Map || a.Len() != b.Len() || a.Type().Key().Kind() != reflect.String || b.Type().Key().Kind() != reflect.String {
			return false
		}
		for it := a.MapRange(); it.Next(); {
			vb := b.MapIndex(reflect.ValueOf(it.Key().String()).Convert(b.Type().Key()))
			if !vb.IsValid() || !sameValue(it.Value(), vb) {
				return false
			}
		}
		return true
	case reflect.Float32, reflect.Float64:
		return a.Kind() == b.Kind() && math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	}
	if a.Type() != b.Type() || !a.Type().Comparable() {
		return false
	}
	return a.Equal(b)
}

// equalNBTList reports whether b is a list of the same type and length as
// x, element by element equal as equalNBT finds.
func equalNBTList[T any](x []T, b any) bool {
	y, ok := b.([]T)
	return ok && slices.EqualFunc(x, y, func(p, q T) bool { return equalNBT(p, q) })
}

// equalNBT compares two values of NBT as blocks encode it, both of the
// same block type: the Go types match, so a type switch serves where
// sameNBT needs reflection. Floats compare by bits; what it does not know
// falls back to reflect.DeepEqual.
func equalNBT(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, va := range x {
			vb, ok := y[k]
			if !ok || !equalNBT(va, vb) {
				return false
			}
		}
		return true
	case []map[string]any:
		return equalNBTList(x, b)
	case []any:
		return equalNBTList(x, b)
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case string, bool, uint8, int8, int16, int32, int64:
		return a == b
	}
	return reflect.DeepEqual(a, b)
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
