package provider

import (
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// FuzzFrameRecoder (issue 38 item 4): recoding any bytes never panics; a
// record it rewrites decodes as the original does, to the same column, and
// is left alone by a second recoding to the same codec.
func FuzzFrameRecoder(f *testing.F) {
	br, d := testDictionary()
	for i := uint64(0); i < 3; i++ {
		for _, c := range []blazedb.Compression{blazedb.CompressionNone, blazedb.CompressionLZ4, blazedb.CompressionZstd, blazedb.CompressionSnappy} {
			enc, err := d.encodeColumn(worldtest.Synthetic(i, world.Overworld, br), nil, c)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(enc.rec, uint8(c))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, c uint8) {
		comp := []blazedb.Compression{blazedb.CompressionNone, blazedb.CompressionLZ4, blazedb.CompressionSnappy, blazedb.CompressionZstd}[c%4]
		r := frameRecoder{comp}
		out := r.Recode(blazedb.Key{}, b)
		if out == nil {
			return
		}
		if again := r.Recode(blazedb.Key{}, out); again != nil {
			t.Fatal("a recoded record is recoded again")
		}
		want, werr := d.decodeColumn(b, world.Overworld.Range())
		got, gerr := d.decodeColumn(out, world.Overworld.Range())
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("the original decodes: %v; the recoded: %v", werr, gerr)
		}
		if werr == nil {
			if err := worldtest.Compare(want, got); err != nil {
				t.Fatalf("recoding changed the column: %v", err)
			}
		}
		codecs := map[blazedb.Compression]int{}
		rd := &reader{b: out, off: 5}
		for range rd.count(maxSubChunks) + 2 {
			codecs[frameCodecs[rd.byte()]]++
			rd.count(maxFrameLen)
			rd.bytes(rd.count(len(out)))
		}
		for k := range codecs {
			if k != comp && k != blazedb.CompressionNone {
				t.Fatalf("recoded to %v: frames %v", comp, codecs)
			}
		}
	})
}
