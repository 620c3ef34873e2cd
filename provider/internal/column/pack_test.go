package column

import (
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 41 item 1: Pack compresses every frame of a record again at its
// codec's strongest setting (LZ4 level 9; zstd's best), or in a given
// codec, marks it packed, and leaves a packed record alone; the packed
// record reads as the same column and is smaller. Records in Snappy or
// stored raw have nothing to pack them with in their own codec.
func TestPack(t *testing.T) {
	br, d := testCodec()
	col := worldtest.Synthetic(2, world.Overworld, br)
	for _, c := range []struct {
		stored, with, want blazedb.Compression
	}{
		{blazedb.CompressionLZ4, blazedb.CompressionDefault, blazedb.CompressionLZ4},
		{blazedb.CompressionZstd, blazedb.CompressionDefault, blazedb.CompressionZstd},
		{blazedb.CompressionLZ4, blazedb.CompressionZstd, blazedb.CompressionZstd},
		{blazedb.CompressionSnappy, blazedb.CompressionLZ4, blazedb.CompressionLZ4},
		{blazedb.CompressionNone, blazedb.CompressionZstd, blazedb.CompressionZstd},
	} {
		enc, err := d.Encode(col, Prev{}, c.stored)
		if err != nil {
			t.Fatal(err)
		}
		packed := Pack(enc.Rec, c.with)
		if packed == nil || !Packed(packed) || Packed(enc.Rec) {
			t.Fatalf("%v packed with %v: %v, marked %v", c.stored, c.with, packed != nil, Packed(packed))
		}
		if len(packed) >= len(enc.Rec) {
			t.Fatalf("%v packed with %v: %d bytes, %d before", c.stored, c.with, len(packed), len(enc.Rec))
		}
		n := map[blazedb.Compression]int{}
		if err := FrameCodecs(packed, n); err != nil || !framesIn(n, c.want) {
			t.Fatalf("%v packed with %v: frames %v, %v", c.stored, c.with, n, err)
		}
		got, err := d.DecodeColumn(packed, world.Overworld.Range())
		if err != nil {
			t.Fatal(err)
		}
		if err := worldtest.Compare(col, got); err != nil {
			t.Fatalf("%v packed with %v: %v", c.stored, c.with, err)
		}
		if Pack(packed, c.with) != nil || Pack(packed, c.want) != nil {
			t.Fatalf("%v packed with %v: packed again", c.stored, c.with)
		}
		// Recompressing to the codec a packed record is in changes nothing.
		if Recode(packed, c.want) != nil {
			t.Fatalf("%v packed with %v: recoded", c.stored, c.with)
		}
	}
	for _, c := range []blazedb.Compression{blazedb.CompressionSnappy, blazedb.CompressionNone} {
		enc, err := d.Encode(col, Prev{}, c)
		if err != nil {
			t.Fatal(err)
		}
		if Pack(enc.Rec, blazedb.CompressionDefault) != nil || Pack(enc.Rec, c) != nil {
			t.Fatalf("a record in %v was packed in its own codec", c)
		}
	}
}
