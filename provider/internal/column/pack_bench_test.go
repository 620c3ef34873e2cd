package column

import (
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 41: decoding a column as stores write it (version 2, a frame a
// part in LZ4), packed by compaction (version 3, one LZ4 level 9 frame)
// and archived (one zstd frame at its best level): the decode is what a
// cold load adds to reading the record. Reports the record's bytes.
//
//	go test ./provider/internal/column -run '^$' -bench BenchmarkDecodePacked -count 6
func BenchmarkDecodePacked(b *testing.B) {
	d, stored := storedSynthetic(b)
	for _, c := range []struct {
		name string
		pack func([]byte) []byte
	}{
		{"stored-lz4", func(rec []byte) []byte { return rec }},
		{"packed-lz4hc", func(rec []byte) []byte { return Pack(rec, blazedb.CompressionLZ4) }},
		{"archive-zstd", func(rec []byte) []byte { return Pack(rec, blazedb.CompressionZstd) }},
	} {
		recs := make([][]byte, len(stored))
		size := 0
		for i, rec := range stored {
			recs[i] = c.pack(rec)
			size += len(recs[i])
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := d.DecodeColumn(recs[i%len(recs)], world.Overworld.Range()); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(size)/float64(len(recs)), "record-bytes")
		})
	}
}

// Issue 41: what packing costs compaction, per column (the synthetic
// columns of BenchmarkDecodePacked, stored in LZ4).
//
//	go test ./provider/internal/column -run '^$' -bench BenchmarkPack -count 6
func BenchmarkPack(b *testing.B) {
	_, stored := storedSynthetic(b)
	for _, comp := range []blazedb.Compression{blazedb.CompressionLZ4, blazedb.CompressionZstd} {
		b.Run(comp.String(), func(b *testing.B) {
			i := 0
			for b.Loop() {
				if Pack(stored[i%len(stored)], comp) == nil {
					b.Fatal("nothing packed")
				}
				i++
			}
		})
	}
}

// storedSynthetic returns a codec and eight synthetic columns' records as
// stores write them (version 2, LZ4).
func storedSynthetic(b *testing.B) (*Codec, [][]byte) {
	br, d := testCodec()
	var stored [][]byte
	for i := range 8 {
		enc, err := d.Encode(worldtest.Synthetic(uint64(i), world.Overworld, br), Prev{}, blazedb.CompressionLZ4)
		if err != nil {
			b.Fatal(err)
		}
		stored = append(stored, enc.Rec)
	}
	return d, stored
}
