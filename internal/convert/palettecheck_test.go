package convert

import (
	"bytes"
	"encoding/binary"
	"errors"
	"log/slog"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/blazeworld/blaze/internal/nbtwalk"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/df-mc/goleveldb/leveldb/opt"
	"github.com/sandertv/gophertunnel/minecraft/nbt"
)

// airState is the NBT of air's block state, as a palette entry on disk.
func airState(t testing.TB) []byte {
	b, err := nbt.MarshalEncoding(map[string]any{"name": "minecraft:air", "states": map[string]any{}, "version": int32(chunk.CurrentBlockVersion)}, nbt.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hugeSub is a sub-chunk record (version 8) whose last layer, after the
// valid ones given, declares a palette of 0xfffffff0 entries.
func hugeSub(layers ...[]byte) []byte {
	b := []byte{8, byte(len(layers) + 1)}
	for _, l := range layers {
		b = append(b, l...)
	}
	b = append(b, 1<<1|1)
	b = append(b, make([]byte, 128*4)...) // 1 bit an index: 128 words
	return binary.LittleEndian.AppendUint32(b, 0xfffffff0)
}

// hugeList is a named compound holding a list of compounds that declares
// 2^31-1 of them.
func hugeList() []byte {
	b := []byte{nbtwalk.TagCompound, 0, 0, nbtwalk.TagList, 1, 0, 'l', nbtwalk.TagCompound}
	return append(binary.LittleEndian.AppendUint32(b, 1<<31-1), 0, 0)
}

// The records that declare lengths of billions (see palettecheck.go) are
// refused as unreadable without being allocated; before, a palette of
// 0xfffffff0 entries allocated 16 GiB for each read, and a list of 2^31-1
// compounds 32 GiB, which the garbage collector then scanned. The test
// fails on the old code by memory, not by a wrong answer.
func TestLengthsBeyondBytesRefused(t *testing.T) {
	world.DefaultBlockRegistry.Finalize()
	air := airState(t)
	zeroBits := append([]byte{0<<1 | 1}, air...) // 0 bits: one entry, no length
	biomes := append(make([]byte, 512), 1<<1|1)
	biomes = append(biomes, make([]byte, 128*4)...)
	biomes = binary.LittleEndian.AppendUint32(biomes, 0xffffffff)
	cases := map[string]func(r *run){
		"palette of the first layer":  func(r *run) { r.subs[0] = hugeSub() },
		"palette of the second layer": func(r *run) { r.subs[0] = hugeSub(zeroBits) },
		"a block state in a palette": func(r *run) {
			r.subs[0] = append([]byte{8, 1, 0<<1 | 1}, hugeList()...)
		},
		"biome palette":     func(r *run) { r.add(tagBiomes, 0, biomes) },
		"block entities":    func(r *run) { r.add(tagBlockEntities, 0, append(bytes.Clone(air), hugeList()...)) },
		"legacy entities":   func(r *run) { r.add(tagLegacyEntities, 0, hugeList()) },
		"scheduled updates": func(r *run) { r.add(tagScheduled, 0, hugeList()) },
	}
	cr := &columnReader{blocks: world.DefaultBlockRegistry, log: slog.New(slog.DiscardHandler)}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			r := &run{pl: place{Dim: world.Overworld}}
			r.add(tagVersion, 0, []byte{mcdbChunkVersion})
			damage(r)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := cr.column(r)
			runtime.ReadMemStats(&after)
			if !nbtwalk.Refused(err) || !errors.Is(err, ErrUnreadable) {
				t.Fatalf("read %v, want a length beyond its bytes refused", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Fatalf("allocated %d bytes to refuse it", n)
			}
		})
	}
}

// An entity under digp/actorprefix whose NBT declares 2^31-1 compounds
// refuses its column, which the pass and checkPass's reference agree on;
// mcdb would allocate the list and keep the entity with what decoded
// before it.
func TestEntityBeyondBytesRefusesColumn(t *testing.T) {
	dir := t.TempDir()
	ldb, err := leveldb.OpenFile(filepath.Join(dir, "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	id := binary.LittleEndian.AppendUint64(nil, 7)
	for k, v := range map[string][]byte{
		string(chunkKey(0, 0, 0, tagVersion)):  {mcdbChunkVersion},
		digpPrefix + string(chunkKey(0, 0, 0)): id,
		actorPrefix + string(id):               hugeList(),
		string(chunkKey(1, 0, 0, tagVersion)):  {mcdbChunkVersion},
	} {
		if err := ldb.Put([]byte(k), v, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ldb.Close(); err != nil {
		t.Fatal(err)
	}
	refused := refusedByWalk(t, dir, []place{{Dim: world.Overworld}, {Pos: world.ChunkPos{1, 0}, Dim: world.Overworld}})
	if !nbtwalk.Refused(refused[0]) || refused[1] != nil {
		t.Fatalf("refused %v, want the first column refused and not the second", refused)
	}
	checkPass(t, dir, false)
}

// The palette walks refuse only what Dragonfly's disk decoder fails on.
// The input's first byte picks what the rest is: a sub-chunk record, or
// the biomes of a column of 4 sub-chunks. A refused record goes to the
// decoder unless an audited walk (nbtwalk.Walker.Audit), which follows it
// as the decoder would, finds lengths it would allocate beyond 1<<16
// elements. The NBT walk has its own target, nbtwalk.FuzzTree.
func FuzzPaletteChecks(f *testing.F) {
	world.DefaultBlockRegistry.Finalize()
	col := worldtest.Synthetic(7, world.Overworld, world.DefaultBlockRegistry)
	enc := chunk.Encode(col.Chunk, chunk.DiskEncoding)
	for _, sub := range enc.SubChunks {
		if len(sub) != 0 {
			f.Add(append([]byte{0}, sub...))
			break
		}
	}
	f.Add(append([]byte{0}, hugeSub(append([]byte{0<<1 | 1}, airState(f)...))...))
	f.Add(append([]byte{0, 8, 1, 1<<1 | 1}, append(make([]byte, 512), 2, 0, 0, 0, 0)...)) // 2 entries, 1 byte
	f.Add(append([]byte{1}, enc.Biomes...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		biomes := data[0]&1 == 1
		d, r := chunk.SerialisedData{SubChunks: [][]byte{data[1:]}}, cube.Range{0, 15}
		walk := func(w *nbtwalk.Walker) error { return walkSubChunk(w) }
		if biomes {
			d, r = chunk.SerialisedData{Biomes: data[1:]}, cube.Range{0, 63}
			walk = func(w *nbtwalk.Walker) error { return walkBiomes(w, 4) }
		}
		err := checkPalettes(d, (r.Height()>>4)+1)
		if !nbtwalk.Refused(err) {
			return
		}
		audit := &nbtwalk.Walker{B: data[1:], Audit: true}
		if _ = walk(audit); audit.Declared > 1<<16 {
			return
		}
		if decodes(d, r) && !errors.Is(err, nbtwalk.ErrTooDeep) {
			t.Fatalf("refused %v, but the decoder reads it", err)
		}
	})
}

// decodes says whether chunk.DiskDecode reads d. A panic of its is a
// failure to read.
func decodes(d chunk.SerialisedData, r cube.Range) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_, err := chunk.DiskDecode(world.DefaultBlockRegistry, d, r)
	return err == nil
}

// runByGets is the run of the column at pl as mcdb's Gets find its
// records, without the pass's iteration.
func runByGets(ldb *leveldb.DB, pl place) *run {
	id, _ := world.DimensionID(pl.Dim)
	r := &run{pl: pl}
	get := func(tag byte, rest ...byte) {
		k := chunkKey(pl.Pos[0], pl.Pos[1], int32(id), append([]byte{tag}, rest...)...)
		if v, err := ldb.Get(k, nil); err == nil {
			sub := byte(0)
			if len(rest) == 1 {
				sub = rest[0]
			}
			r.add(tag, sub, v)
		}
	}
	for _, tag := range []byte{tagVersion, tagVersionOld, tagBiomes, tagBlockEntities, tagLegacyEntities, tagScheduled} {
		get(tag)
	}
	rng := pl.Dim.Range()
	for y := rng[0] >> 4; y <= rng[1]>>4; y++ {
		get(tagSubChunk, byte(int8(y)))
	}
	return r
}

// refusedByWalk reads each column of the LevelDB world in dir as the pass
// reads it and returns the errors of those refused for a length beyond
// its bytes: mcdb would allocate the length, so checkPass expects the
// refusal instead of asking mcdb.
func refusedByWalk(t *testing.T, dir string, places []place) []error {
	ldb, err := leveldb.OpenFile(filepath.Join(dir, "db"), &opt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ldb.Close()
	cr := &columnReader{ldb: ldb, blocks: world.DefaultBlockRegistry, log: slog.New(slog.DiscardHandler)}
	if _, err := cr.readDigp(); err != nil {
		t.Fatal(err)
	}
	out := make([]error, len(places))
	for i, pl := range places {
		if _, err := cr.column(runByGets(ldb, pl)); nbtwalk.Refused(err) {
			out[i] = err
		}
	}
	return out
}
