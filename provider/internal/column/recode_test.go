package column

import (
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// FuzzRecode (issue 38 item 4): recoding any bytes never panics; a record
// it rewrites decodes as the original does, to the same column, and is
// left alone by a second recoding to the same codec. The same holds of
// packing (issue 41): a packed record is left alone by a second Pack.
func FuzzRecode(f *testing.F) {
	br, d := testCodec()
	for i := uint64(0); i < 3; i++ {
		for _, c := range []blazedb.Compression{blazedb.CompressionNone, blazedb.CompressionLZ4, blazedb.CompressionZstd, blazedb.CompressionSnappy} {
			enc, err := d.Encode(worldtest.Synthetic(i, world.Overworld, br), Prev{}, c)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(enc.Rec, uint8(c))
			if i == 0 && (c == blazedb.CompressionLZ4 || c == blazedb.CompressionZstd) {
				f.Add(enc.Rec, uint8(c)|4)  // packed in a codec (issue 41)
				f.Add(enc.Rec, uint8(c)|12) // packed in its own codec
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, c uint8) {
		comp := []blazedb.Compression{blazedb.CompressionNone, blazedb.CompressionLZ4, blazedb.CompressionSnappy, blazedb.CompressionZstd}[c%4]
		pack := c&4 != 0
		if pack && c&8 != 0 {
			comp = blazedb.CompressionDefault // each record in its own codec
		}
		recode := Recode
		if pack {
			recode = Pack
		}
		out := recode(b, comp)
		if out == nil {
			return
		}
		if again := recode(out, comp); again != nil {
			t.Fatal("a recoded record is recoded again")
		}
		want, werr := d.DecodeColumn(b, world.Overworld.Range())
		got, gerr := d.DecodeColumn(out, world.Overworld.Range())
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("the original decodes: %v; the recoded: %v", werr, gerr)
		}
		if werr == nil {
			if err := worldtest.Compare(want, got); err != nil {
				t.Fatalf("recoding changed the column: %v", err)
			}
		}
		codecs := map[blazedb.Compression]int{}
		if err := FrameCodecs(out, codecs); err != nil {
			t.Fatalf("a recoded record's frames: %v", err)
		}
		if comp != blazedb.CompressionDefault && !framesIn(codecs, comp) {
			t.Fatalf("recoded to %v: frames %v", comp, codecs)
		}
	})
}
