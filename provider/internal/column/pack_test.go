package column

import (
	"bytes"
	"errors"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 41 items 1 and 2: Pack puts every part of a record in one frame
// (version 3, whole) at its codec's strongest setting (LZ4 level 9;
// zstd's best), or a given codec's, marks it packed, and leaves a packed
// record alone; the packed record reads as the same column and is
// smaller. It packs a packed record again in another codec, and Recode
// unpacks one into the version 2 record a store writes. Records in Snappy
// or stored raw have nothing to pack them with in their own codec.
func TestPack(t *testing.T) {
	br, d := testCodec()
	col := worldtest.Synthetic(2, world.Overworld, br)
	for _, c := range []struct {
		stored, with, want blazedb.Compression
	}{
		{blazedb.CompressionLZ4, blazedb.CompressionDefault, blazedb.CompressionLZ4},
		{blazedb.CompressionZstd, blazedb.CompressionDefault, blazedb.CompressionZstd},
		{blazedb.CompressionSnappy, blazedb.CompressionLZ4, blazedb.CompressionLZ4},
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
		if err := FrameCodecs(packed, n); err != nil || !Whole(packed) || n[c.want] != 1 {
			t.Fatalf("%v packed with %v: frames %v, %v", c.stored, c.with, n, err)
		}
		got, err := d.DecodeColumn(packed, world.Overworld.Range())
		if err != nil {
			t.Fatal(err)
		}
		if err := worldtest.Compare(col, got); err != nil {
			t.Fatalf("%v packed with %v: %v", c.stored, c.with, err)
		}
		if Pack(packed, c.with) != nil || Pack(packed, c.want) != nil || Pack(packed, blazedb.CompressionDefault) != nil {
			t.Fatalf("%v packed with %v: packed again", c.stored, c.with)
		}
		// Packed again in the other codec, and unpacked into a version 2
		// record of frames as stores write (Recode): the same column.
		other := blazedb.CompressionZstd
		if c.want == other {
			other = blazedb.CompressionLZ4
		}
		repacked := Pack(packed, other)
		unpacked := Recode(packed, blazedb.CompressionLZ4)
		if repacked == nil || !Whole(repacked) || unpacked == nil || Whole(unpacked) || Packed(unpacked) || unpacked[3] != recordVersion {
			t.Fatalf("%v packed with %v: repacked %v, unpacked %v", c.stored, c.with, repacked != nil, unpacked != nil)
		}
		if lz4, _ := d.Encode(col, Prev{}, blazedb.CompressionLZ4); !bytes.Equal(unpacked, lz4.Rec) {
			t.Fatalf("%v packed with %v: unpacked into another record than a store writes", c.stored, c.with)
		}
		for _, rec := range [][]byte{repacked, unpacked} {
			got, err := d.DecodeColumn(rec, world.Overworld.Range())
			if err != nil {
				t.Fatal(err)
			}
			if err := worldtest.Compare(col, got); err != nil {
				t.Fatalf("%v packed with %v, then again: %v", c.stored, c.with, err)
			}
		}
	}
	// A whole record that ends at its flags is left alone, without a panic.
	if Pack([]byte("BZC\x03\x03"), blazedb.CompressionLZ4) != nil || Recode([]byte("BZC\x03\x03"), blazedb.CompressionLZ4) != nil {
		t.Fatal("a record of a header alone was packed")
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

// Issue 41 item 2: a whole record cut short or with a byte changed
// anywhere fails to decode with ErrCorrupt, or decodes (a changed byte of
// NBT or of a stored-raw stretch can still read), never panics: damage
// costs the record it hits and nothing else.
func TestWholeRecordDamage(t *testing.T) {
	br, d := testCodec()
	enc, err := d.Encode(worldtest.Synthetic(1, world.Overworld, br), Prev{}, blazedb.CompressionLZ4)
	if err != nil {
		t.Fatal(err)
	}
	for _, comp := range []blazedb.Compression{blazedb.CompressionLZ4, blazedb.CompressionZstd} {
		rec := Pack(enc.Rec, comp)
		for n := 0; n < len(rec); n += 1 + n/8 {
			if _, err := d.DecodeColumn(rec[:n], world.Overworld.Range()); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%v cut to %d bytes: %v", comp, n, err)
			}
		}
		for i := 0; i < len(rec); i += 1 + i/4 {
			bad := bytes.Clone(rec)
			bad[i] ^= 0x5a
			if _, err := d.DecodeColumn(bad, world.Overworld.Range()); err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, errUnknown) {
				t.Fatalf("%v with byte %d changed: %v", comp, i, err)
			}
		}
	}
}

// framesIn reports whether the frame counts n hold no frame but those in
// comp or stored raw.
func framesIn(n map[blazedb.Compression]int, comp blazedb.Compression) bool {
	for c := range n {
		if c != comp && c != blazedb.CompressionNone {
			return false
		}
	}
	return true
}
