package convert

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/goleveldb/leveldb"
)

// A fuzz input is LevelDB records, each as a selector byte, an extra byte
// and a value of a 16-bit length (fuzzRecord): the selector picks one of
// fuzzPlaces, the way its dimension is written (none, an id, an id of 0)
// and the kind of key, which keeps the keys the pass must group near one
// another.
var fuzzPlaces = [4]world.ChunkPos{{0, 0}, {1, 0}, {-1, 0}, {0, 1}}

// fuzzKey is the key of the record of selector sel and extra byte b, and
// the value it is given of v.
func fuzzKey(sel, b byte, v []byte) (k, val []byte) {
	pos := fuzzPlaces[sel&3]
	dim := int32(sel >> 2 & 3) // 0 overworld, 1 nether, 2 end, 3: an id of 0, written
	id := func() []byte {
		k := binary.LittleEndian.AppendUint32(nil, uint32(pos[0]))
		k = binary.LittleEndian.AppendUint32(k, uint32(pos[1]))
		switch dim {
		case 1, 2:
			k = binary.LittleEndian.AppendUint32(k, uint32(dim))
		case 3:
			k = binary.LittleEndian.AppendUint32(k, 0)
		}
		return k
	}
	switch sel >> 4 {
	case 0:
		return append(id(), tagVersion), v
	case 1:
		return append(id(), tagVersionOld), v
	case 2:
		return append(id(), tagBiomes), v
	case 3:
		return append(id(), tagBlockEntities), v
	case 4:
		return append(id(), tagLegacyEntities), v
	case 5:
		return append(id(), tagScheduled), v
	case 6:
		return append(id(), tagSubChunk, b), v
	case 7:
		return append([]byte(digpPrefix), id()...), v
	case 8: // an entity: its id is the value's first 8 bytes
		if len(v) < 8 {
			return nil, nil
		}
		return append([]byte(actorPrefix), v[:8]...), v[8:]
	case 9:
		return append(id(), b), v
	case 10:
		return append(id(), b, byte(len(v))), v
	case 11:
		return append(id(), tagSubChunk), v
	case 12:
		return append(id(), tagVersion, b), v
	case 13:
		return []byte("player_00000000-0000-0000-0000-00000000000" + string('0'+b%10)), v
	default:
		return append([]byte("scoreboard"), b), v
	}
}

// fuzzRecord is the fuzz input of one record.
func fuzzRecord(sel, b byte, v []byte) []byte {
	return append(binary.LittleEndian.AppendUint16([]byte{sel, b}, uint16(len(v))), v...)
}

// Issue 42 item 4: whatever records a LevelDB world holds, the one pass
// reads its columns into what mcdb.LoadColumn returns (or the same error),
// lists what the key listing listed and carries what readExtrasByKeys
// carried (checkPass).
func FuzzPassReadsAsMCDB(f *testing.F) {
	// Seeds: the records mcdb writes for synthetic columns at two of the
	// places, in the overworld and the nether, as fuzz records.
	dir := filepath.Join(f.TempDir(), "w")
	mcdbWorld(f, dir, 3, []place{{Pos: fuzzPlaces[0], Dim: world.Overworld}, {Pos: fuzzPlaces[1], Dim: world.Nether}})
	ldb, err := leveldb.OpenFile(filepath.Join(dir, "db"), nil)
	if err != nil {
		f.Fatal(err)
	}
	var all []byte
	it := ldb.NewIterator(nil, nil)
	for it.Next() {
		k, v := it.Key(), it.Value()
		var sel, b byte
		if c := classify(k); c.actor {
			all = append(all, fuzzRecord(8<<4, 0, append(k[len(actorPrefix):len(actorPrefix):len(actorPrefix)], v...))...)
			continue
		} else if !c.chunk {
			continue
		} else {
			sel = byte(c.pl.Pos[0]) // places 0 and 1
			if c.pl.Dim == world.Nether {
				sel |= 1 << 2
			}
			switch c.tag {
			case -1:
				sel |= 7 << 4
			case tagVersion:
			case tagBiomes:
				sel |= 2 << 4
			case tagBlockEntities:
				sel |= 3 << 4
			case tagScheduled:
				sel |= 5 << 4
			case tagSubChunk:
				sel, b = sel|6<<4, byte(c.sub)
			default:
				sel, b = sel|9<<4, byte(c.tag)
			}
		}
		all = append(all, fuzzRecord(sel, b, v)...)
	}
	it.Release()
	if err := ldb.Close(); err != nil {
		f.Fatal(err)
	}
	f.Add(all)
	f.Add(append(fuzzRecord(1<<4, 0, []byte{19}), fuzzRecord(4<<4, 0, []byte{10, 0, 0, 0})...))
	f.Add(append(fuzzRecord(3<<2, 0, []byte{40}), fuzzRecord(9<<4, 1, []byte{1})...))
	// A sub-chunk declaring a palette of billions, which mcdb would allocate.
	f.Add(append(fuzzRecord(0, 0, []byte{mcdbChunkVersion}), fuzzRecord(6<<4, 0, hugeSub())...))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		ldb, err := leveldb.OpenFile(filepath.Join(dir, "db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		for len(data) >= 4 {
			sel, b, n := data[0], data[1], int(binary.LittleEndian.Uint16(data[2:]))
			data = data[4:]
			n = min(n, len(data))
			k, v := fuzzKey(sel, b, data[:n])
			data = data[n:]
			if k != nil {
				if err := ldb.Put(k, v, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := ldb.Close(); err != nil {
			t.Fatal(err)
		}
		checkPass(t, dir, false)
	})
}
