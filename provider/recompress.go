package provider

import (
	"fmt"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider/internal/column"
)

// frameRecoder packs column records (column.Pack; Config.Packing) and
// brings the frames of those it does not pack to one codec
// (Config.Recompress) when compaction copies them
// (blazedb.Options.Recoder). It is a plain value, safe for concurrent use.
type frameRecoder struct {
	pack bool
	// comp is Recompress's codec, or CompressionDefault without it: each
	// record is then packed in its own codec.
	comp blazedb.Compression
}

// Recode returns the column record rec packed, or with every frame that
// is not in r.comp compressed again with it (a packed record unpacked),
// or nil when that changes nothing; a record that is not a column record
// is left alone.
func (r frameRecoder) Recode(_ blazedb.Key, rec []byte) []byte {
	if r.pack {
		return column.Pack(rec, r.comp)
	}
	return column.Recode(rec, r.comp)
}

// FrameCodecs counts the frames of the live column records by codec (a
// record of another version counts as none): how the world's column data
// is compressed, which blaze compact -recompress brings to one codec
// (CompressionNone counts frames that no codec shrinks). It reads every
// column record. Safe for concurrent use; a column stored meanwhile may be
// counted either way.
func (db *DB) FrameCodecs() (map[blazedb.Compression]int, error) {
	places, err := db.Columns()
	if err != nil {
		return nil, err
	}
	n := map[blazedb.Compression]int{}
	for _, pl := range places {
		k, err := key(pl.Pos, pl.Dim)
		if err != nil {
			return nil, err
		}
		rec, err := db.eng.GetShared(k)
		if err != nil {
			return nil, fmt.Errorf("column %v (%v): %w", pl.Pos, pl.Dim, err)
		}
		if err := column.FrameCodecs(rec, n); err != nil {
			return nil, fmt.Errorf("column %v (%v): %w", pl.Pos, pl.Dim, err)
		}
	}
	return n, nil
}
