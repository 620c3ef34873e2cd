package column

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// needRaw skips a test of the fast path when the build forces the public
// one (blaze_safe); otherwise the dictionaries have a Builder
// (rawchunk's TestProbeAccepts fails if the probe refuses).
func needRaw(t *testing.T, d *Codec) {
	t.Helper()
	if rawchunk.Forced {
		t.Skip("built with blaze_safe: no fast path to compare")
	}
	if d.raw == nil {
		t.Fatal("the probe refused this Dragonfly")
	}
}

// decodeSlow decodes rec with d as if the probe had refused: through
// NetworkDecode. d must be used by nothing else meanwhile.
func decodeSlow(d *Codec, rec []byte, rng cube.Range) (*chunk.Column, error) {
	return withoutRaw(d, func() (*chunk.Column, error) { return d.DecodeColumn(rec, rng) })
}

// withoutRaw runs f with d as if the probe had refused.
func withoutRaw[T any](d *Codec, f func() (T, error)) (T, error) {
	raw := d.raw
	d.raw = nil
	defer func() { d.raw = raw }()
	return f()
}

// sameEncoding fails unless encoding col with rawchunk gives the record
// Dragonfly's encoders give.
func sameEncoding(d *Codec, col *chunk.Column) error {
	fast, err := d.Encode(col, Prev{}, blazedb.CompressionLZ4)
	if err != nil {
		return err
	}
	slow, err := withoutRaw(d, func() (*Encoded, error) { return d.Encode(col, Prev{}, blazedb.CompressionLZ4) })
	if err != nil {
		return err
	}
	if !bytes.Equal(fast.Rec, slow.Rec) || !bytes.Equal(fast.Biomes, slow.Biomes) {
		return fmt.Errorf("rawchunk encodes the column differently")
	}
	return nil
}

// sameChunk fails unless a and b serialise identically in Dragonfly's
// network encoding, layer by layer (so bits per index, index words and
// palettes agree, not only the blocks), have the same layer counts and
// biomes, and grow alike when a block is set.
func sameChunk(a, b *chunk.Chunk) error {
	sa, sb := a.Sub(), b.Sub()
	if len(sa) != len(sb) {
		return fmt.Errorf("%d sub-chunks against %d", len(sa), len(sb))
	}
	for i := range sa {
		if len(sa[i].Layers()) != len(sb[i].Layers()) {
			return fmt.Errorf("sub-chunk %d: %d layers against %d", i, len(sa[i].Layers()), len(sb[i].Layers()))
		}
		if !bytes.Equal(chunk.EncodeSubChunk(a, chunk.NetworkEncoding, i), chunk.EncodeSubChunk(b, chunk.NetworkEncoding, i)) {
			return fmt.Errorf("sub-chunk %d encodes differently", i)
		}
	}
	if !bytes.Equal(chunk.EncodeBiomes(a, chunk.NetworkEncoding), chunk.EncodeBiomes(b, chunk.NetworkEncoding)) {
		return fmt.Errorf("biomes encode differently")
	}
	if !slices.Equal(a.HeightMap(), b.HeightMap()) {
		return fmt.Errorf("height maps differ")
	}
	r := a.Range()
	for i, y := 0, int16(r[0]); y <= int16(r[1]); i, y = i+1, y+7 {
		x, z := uint8(i*5%16), uint8(i*3%16)
		a.SetBlock(x, y, z, 0, uint32(1000+i))
		b.SetBlock(x, y, z, 0, uint32(1000+i))
	}
	for i := range sa {
		if !bytes.Equal(chunk.EncodeSubChunk(a, chunk.NetworkEncoding, i), chunk.EncodeSubChunk(b, chunk.NetworkEncoding, i)) {
			return fmt.Errorf("sub-chunk %d encodes differently after SetBlock", i)
		}
	}
	if !slices.Equal(a.HeightMap(), b.HeightMap()) {
		return fmt.Errorf("height maps differ after SetBlock")
	}
	return nil
}

// Decoding with rawchunk builds exactly what NetworkDecode builds, and
// encoding with it gives the record Dragonfly's encoders give, on
// synthetic columns of every dimension and every record codec, and on
// every column of the real worlds.
func TestRawStorageMatchesNetworkDecode(t *testing.T) {
	br, d := testCodec()
	needRaw(t, d)
	check := func(t *testing.T, what string, rec []byte, rng cube.Range) {
		t.Helper()
		fast, err1 := d.DecodeColumn(rec, rng)
		want, err2 := decodeSlow(d, rec, rng)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v, %v", what, err1, err2)
		}
		if err := worldtest.Compare(want, fast); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := sameEncoding(d, fast); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := sameChunk(want.Chunk, fast.Chunk); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := sameEncoding(d, fast); err != nil { // after sameChunk's SetBlocks
			t.Fatalf("%s: %v", what, err)
		}
	}
	for _, dim := range []world.Dimension{world.Overworld, world.Nether, world.End} {
		for i := range uint64(4) {
			col := worldtest.Synthetic(i, dim, br)
			for _, comp := range []blazedb.Compression{blazedb.CompressionNone, blazedb.CompressionLZ4, blazedb.CompressionZstd} {
				enc, err := d.Encode(col, Prev{}, comp)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%v column %d codec %v", dim, i, comp)
				check(t, what, enc.Rec, dim.Range())
			}
		}
	}
	for _, path := range worldtest.Worlds(t) {
		cols, err := worldtest.ReadAll(worldtest.UnpackTemp(t, path), br)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			enc, err := d.Encode(c.Col, Prev{}, blazedb.CompressionLZ4)
			if err != nil {
				t.Fatal(err)
			}
			check(t, fmt.Sprintf("%s %v %v", worldtest.Name(path), c.Pos, c.Dim), enc.Rec, c.Dim.Range())
		}
	}
}

// A stored column's snapshot holds copies of its sub-chunks, built in an
// arena: layer for layer the same words and palettes as the World's, and
// sharing nothing with them, whichever side then sets blocks.
func TestSnapshotSubChunksAreCopies(t *testing.T) {
	br, d := testCodec()
	// The proved Builder reads the layers' words and palettes, whichever
	// way the snapshot was copied (blaze_safe: by SubChunk.Clone).
	rs, err := rawchunk.Probe()
	if err != nil {
		t.Fatal(err)
	}
	subBytes := func(s *chunk.SubChunk) []byte {
		var b []byte
		for _, l := range s.Layers() {
			b = rs.AppendStorage(b, l)
		}
		return b
	}
	check := func(t *testing.T, what string, col *chunk.Column) {
		t.Helper()
		enc, err := d.Encode(col, Prev{}, blazedb.CompressionLZ4)
		if err != nil {
			t.Fatal(err)
		}
		for i, sub := range col.Chunk.Sub() {
			cp := enc.Subs[i]
			if cp == sub || len(cp.Layers()) != len(sub.Layers()) || !bytes.Equal(subBytes(cp), subBytes(sub)) || cp.Block(0, 0, 0, 255) != sub.Block(0, 0, 0, 255) {
				t.Fatalf("%s: sub-chunk %d: the snapshot is not an exact copy", what, i)
			}
			for l := range sub.Layers() {
				if cp.Layers()[l] == sub.Layers()[l] {
					t.Fatalf("%s: sub-chunk %d layer %d is shared", what, i, l)
				}
			}
			// Setting blocks (new states, so palettes grow and storages
			// are replaced) on either side leaves the other as it was.
			before := subBytes(sub)
			for j := range 40 {
				cp.SetBlock(byte(j%16), byte(j*7%16), byte(j*3%16), 0, uint32(5000+j))
			}
			if !bytes.Equal(subBytes(sub), before) {
				t.Fatalf("%s: sub-chunk %d: setting blocks in the copy changed the original", what, i)
			}
			after := subBytes(cp)
			for j := range 40 {
				sub.SetBlock(byte(j*5%16), byte(j%16), byte(j*11%16), 0, uint32(6000+j))
			}
			if !bytes.Equal(subBytes(cp), after) {
				t.Fatalf("%s: sub-chunk %d: setting blocks in the original changed the copy", what, i)
			}
		}
	}
	for _, dim := range []world.Dimension{world.Overworld, world.Nether, world.End} {
		for i := range uint64(3) {
			check(t, fmt.Sprintf("%v column %d", dim, i), worldtest.Synthetic(i, dim, br))
		}
	}
	// A sub-chunk keeps its own air, whatever the registry's.
	odd := worldtest.Synthetic(4, world.Overworld, br)
	odd.Chunk.Sub()[len(odd.Chunk.Sub())-1] = chunk.NewSubChunk(777)
	check(t, "a sub-chunk of another air", odd)
	for _, path := range worldtest.Worlds(t) {
		cols, err := worldtest.ReadAll(worldtest.UnpackTemp(t, path), br)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			check(t, fmt.Sprintf("%s %v %v", worldtest.Name(path), c.Pos, c.Dim), c.Col)
		}
	}
}

// A biome storage written as "the same as the one below" decodes, in both
// decode paths, to a copy of that storage: NetworkDecode makes it the same
// storage, so that a SetBiome in one sub-chunk changed the other too. A
// hot load (a Chunk.Clone) always gave each its own.
func TestRepeatedBiomeStoragesAreIndependent(t *testing.T) {
	br, d := testCodec()
	rng := world.Overworld.Range()
	subs := rng.Height()>>4 + 1
	// The first storage: 1 bit per index, biomes 1 and 2 alternating; the
	// rest repeat it.
	bio := []byte{1<<1 | 1}
	for range 128 {
		bio = append(bio, 0x55, 0x55, 0x55, 0x55)
	}
	bio = append(bio, 2<<1, 1<<1, 2<<1) // zig-zag varints: length 2, biomes 1 and 2
	for range subs - 1 {
		bio = append(bio, 0x7f<<1|1)
	}
	c, err := chunk.NetworkDecode(br, bio, 0, rng)
	if err != nil {
		t.Fatal(err)
	}
	if c.SetBiome(0, 0, 0, 2); c.Biome(0, 16, 0) != 2 {
		t.Fatal("NetworkDecode no longer shares repeated storages: this test's premise is gone")
	}
	c.SetBiome(0, 0, 0, 1)
	enc, err := d.Encode(&chunk.Column{Chunk: c}, Prev{}, blazedb.CompressionLZ4)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(enc.Biomes, []byte{0x7f<<1 | 1}) {
		t.Fatal("the record has no repeated biome storage")
	}
	for name, decode := range map[string]func() (*chunk.Column, error){
		"fast":   func() (*chunk.Column, error) { return d.DecodeColumn(enc.Rec, rng) },
		"public": func() (*chunk.Column, error) { return decodeSlow(d, enc.Rec, rng) },
	} {
		col, err := decode()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if col.Chunk.Biome(0, 0, 0) != 1 || col.Chunk.Biome(0, 16, 0) != 1 || col.Chunk.Biome(1, 16, 0) != 2 {
			t.Fatalf("%s: biomes decoded wrong", name)
		}
		col.Chunk.SetBiome(0, 0, 0, 7)
		if got := col.Chunk.Biome(0, 16, 0); got != 1 {
			t.Fatalf("%s: a biome set at y 0 changed y 16 to %d", name, got)
		}
		if got := col.Chunk.Biome(0, 0, 0); got != 7 {
			t.Fatalf("%s: the biome set reads %d", name, got)
		}
	}
}

// Issue 37 step 3: the encoder writes a changed sub-chunk straight from its
// storages' words and palettes, and keeps every check that stopped an
// unreadable record being written when it went through the network
// encoding: here, an index beyond its palette is refused both ways. So is
// a biome storage's (which Dragonfly's decoders take from a damaged
// LevelDB world), as a load would refuse the record, instead of being
// stored unreadable.
func TestEncodeRefusesIndexBeyondPalette(t *testing.T) {
	br, d := testCodec()
	b, err := rawchunk.Probe()
	if err != nil {
		t.Fatal(err)
	}
	n, _ := rawchunk.IndexWords(2)
	words := make([]byte, 4*n)
	words[0] = 3 // index 3 under a palette of 2
	var a rawchunk.Arena

	col := worldtest.Synthetic(2, world.Overworld, br)
	layers := a.Layers(1)
	layers[0] = b.Storage(&a, 2, words, a.Palette([]uint32{br.AirRuntimeID(), 1}))
	col.Chunk.Sub()[0] = b.SubChunk(&a, br.AirRuntimeID(), layers)
	refusedBothWays(t, d, col)

	col = worldtest.Synthetic(2, world.Overworld, br)
	biomes := make([]*chunk.PalettedStorage, len(col.Chunk.Sub()))
	ys := make([]byte, len(col.Chunk.Sub()))
	for i := range biomes {
		biomes[i] = b.Storage(&a, 0, nil, a.Palette([]uint32{1}))
		ys[i] = byte(i + int(col.Chunk.Range()[0]>>4))
	}
	biomes[3] = b.Storage(&a, 2, words, a.Palette([]uint32{1, 2}))
	if col.Chunk, err = b.Chunk(&a, chunk.New(br, col.Chunk.Range()), col.Chunk.Sub(), ys, biomes); err != nil {
		t.Fatal(err)
	}
	refusedBothWays(t, d, col)
}

// refusedBothWays checks that encoding col, on the raw path and on the
// public one, is refused for an index beyond its palette.
func refusedBothWays(t *testing.T, d *Codec, col *chunk.Column) {
	t.Helper()
	for name, encode := range map[string]func() (*Encoded, error){
		"fast": func() (*Encoded, error) { return d.Encode(col, Prev{}, blazedb.CompressionLZ4) },
		"public": func() (*Encoded, error) {
			return withoutRaw(d, func() (*Encoded, error) { return d.Encode(col, Prev{}, blazedb.CompressionLZ4) })
		},
	} {
		if _, err := encode(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "beyond its palette") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
