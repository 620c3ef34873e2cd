package tests

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider"
	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Issue 41 item 2: the levers that could make Blaze smaller, measured over
// the records Blaze stored of a world without changing the format. Each
// lever re-encodes the parts of those records as the format would if it
// had the lever, and reports
//
//   - storage-bytes: the world's measured storage bytes with today's frames
//     of the parts it re-encodes taken out and its own put in, plus what it
//     stores once per world (a dictionary, shared payloads, each as an
//     engine record of its own);
//   - ratio-mcdb: that against mcdb's measured bytes of the same world;
//   - decode-ns/column: the time to decode every part it re-encodes, per
//     column (each reference to a shared payload decodes that payload, as
//     a load with no cache of them would);
//   - cold-ratio-lz4: a cold load under the lever against today's: the
//     measured cold load of Blaze's LZ4 world plus the decode time the lever
//     adds (or saves) over today's LZ4 frames.
//
// The dedup levers also report how much of the sub-chunks repeats:
// dup-raw-% of their raw bytes and dup-lz4-% of their LZ4 frames.

// recordBytes is what an engine record costs beyond its value: the record
// header (28 bytes) and a chunk key (13) in chunks.dat and an entry of
// index.dat (28). A shared payload or a dictionary stored as a record of
// its own costs this much besides its bytes.
const recordBytes = 28 + 13 + 28

// columnParts is one column record split into its parts, as drawn in the
// provider's codec.go (record version 2).
type columnParts struct {
	key       blazedb.Key
	rec       []byte   // the whole record
	header    int      // bytes before the first frame
	subs      [][]byte // each sub-chunk, raw
	subFrames int      // bytes of the sub-chunks' frames as stored
	allFrames int      // bytes of every frame as stored
	raw       []byte   // the raw bytes of every frame, one after another
}

// splitColumnRecord splits a version 2 column record into its parts.
func splitColumnRecord(rec []byte) (columnParts, error) {
	var cp columnParts
	if len(rec) < 6 || string(rec[:3]) != "BZC" || rec[3] != 2 {
		return cp, errors.New("not a version 2 column record")
	}
	r := rec[5:]
	n, k := binary.Uvarint(r)
	if k <= 0 || n > 64 {
		return cp, errors.New("bad sub-chunk count")
	}
	r = r[k:]
	cp.rec = rec
	cp.header = len(rec) - len(r)
	frame := func() ([]byte, int, error) {
		if len(r) < 3 {
			return nil, 0, errors.New("short frame")
		}
		codec := r[0]
		rawLen, k1 := binary.Uvarint(r[1:])
		storedLen, k2 := binary.Uvarint(r[1+max(k1, 0):])
		h := 1 + k1 + k2
		if k1 <= 0 || k2 <= 0 || uint64(len(r)-h) < storedLen || codec > 3 {
			return nil, 0, errors.New("bad frame")
		}
		stored := r[h : h+int(storedLen)]
		cost := h + int(storedLen)
		r = r[cost:]
		comp := [...]blazedb.Compression{blazedb.CompressionNone, blazedb.CompressionLZ4, blazedb.CompressionSnappy, blazedb.CompressionZstd}[codec]
		if comp == blazedb.CompressionNone {
			return stored, cost, nil
		}
		raw, err := blazedb.Decompress(nil, comp, stored, int(rawLen))
		return raw, cost, err
	}
	for range n {
		raw, cost, err := frame()
		if err != nil {
			return cp, err
		}
		cp.subs = append(cp.subs, raw)
		cp.subFrames += cost
		cp.raw = append(cp.raw, raw...)
	}
	cp.allFrames = cp.subFrames
	for range 2 { // biomes, then block entities and entities
		raw, cost, err := frame()
		if err != nil {
			return cp, err
		}
		cp.allFrames += cost
		cp.raw = append(cp.raw, raw...)
	}
	return cp, nil
}

// readColumnParts reads every column record of the Blaze world in dir.
func readColumnParts(b *testing.B, dir string) []columnParts {
	p, err := provider.Config{Log: quiet, ReadOnly: true}.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	var out []columnParts
	for dim := int32(0); dim < 3; dim++ {
		keys, err := p.Engine().Keys(blazedb.Area{Dim: dim, MinX: math.MinInt32, MinZ: math.MinInt32, MaxX: math.MaxInt32, MaxZ: math.MaxInt32})
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range keys {
			rec, err := p.Engine().Get(k)
			if err != nil {
				b.Fatal(err)
			}
			cp, err := splitColumnRecord(rec)
			if err != nil {
				b.Fatalf("column %v: %v", k, err)
			}
			cp.key = k
			out = append(out, cp)
		}
	}
	return out
}

// frameBytes is what a frame of stored bytes of a raw length costs: codec
// byte, two uvarints, the bytes.
func frameBytes(rawLen, storedLen int) int {
	return 1 + uvarLen(uint64(rawLen)) + uvarLen(uint64(storedLen)) + storedLen
}

func uvarLen(v uint64) int { return len(binary.AppendUvarint(nil, v)) }

// codec is one way of compressing a payload: enc returns the stored bytes
// (the raw bytes themselves when compressing would not shrink them), dec
// reverses it.
type codec struct {
	enc func(raw []byte) []byte
	dec func(dst, stored []byte, rawLen int) ([]byte, error)
}

func lz4Codec() codec {
	return codec{
		enc: func(raw []byte) []byte {
			out, _, err := blazedb.Compress(nil, blazedb.CompressionLZ4, raw)
			if err != nil {
				panic(err)
			}
			return out
		},
		dec: func(dst, stored []byte, rawLen int) ([]byte, error) {
			if len(stored) == rawLen { // stored raw: a copy, as the decoder makes
				return append(dst, stored...), nil
			}
			return blazedb.Decompress(dst, blazedb.CompressionLZ4, stored, rawLen)
		},
	}
}

// lz4hcCodec is LZ4 compressed harder (LZ4's high-compression mode, at a
// search depth): the same block format, decoded as fast as LZ4 is.
func lz4hcCodec(level lz4.CompressionLevel) codec {
	c := lz4Codec()
	c.enc = func(raw []byte) []byte {
		if len(raw) <= 12 {
			return raw
		}
		var hc lz4.CompressorHC
		hc.Level = level
		dst := make([]byte, lz4.CompressBlockBound(len(raw)))
		n, err := hc.CompressBlock(raw, dst)
		if err != nil {
			panic(err)
		}
		if n == 0 || n >= len(raw) {
			return raw
		}
		return dst[:n]
	}
	return c
}

// zstdCodec compresses at level with the dictionary d (none when nil),
// without zstd's frame checksum: the engine's record checksums cover it.
func zstdCodec(level zstd.EncoderLevel, d []byte) codec { return zstdDictCodec(level, d, false) }

// zstdDictCodec is zstdCodec with d in zstd's dictionary format, or with
// raw, d as content alone (id 1).
func zstdDictCodec(level zstd.EncoderLevel, d []byte, raw bool) codec {
	eo := []zstd.EOption{zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(level), zstd.WithEncoderCRC(false)}
	do := []zstd.DOption{zstd.WithDecoderConcurrency(1)}
	switch {
	case d != nil && raw:
		eo = append(eo, zstd.WithEncoderDictRaw(1, d))
		do = append(do, zstd.WithDecoderDictRaw(1, d))
	case d != nil:
		eo = append(eo, zstd.WithEncoderDict(d))
		do = append(do, zstd.WithDecoderDicts(d))
	}
	enc, err := zstd.NewWriter(nil, eo...)
	if err != nil {
		panic(err)
	}
	dec, err := zstd.NewReader(nil, do...)
	if err != nil {
		panic(err)
	}
	return codec{
		enc: func(raw []byte) []byte {
			if len(raw) <= 12 {
				return raw
			}
			out := enc.EncodeAll(raw, nil)
			if len(out) >= len(raw) {
				return raw
			}
			return out
		},
		dec: func(dst, stored []byte, rawLen int) ([]byte, error) {
			if len(stored) == rawLen {
				return append(dst, stored...), nil
			}
			return dec.DecodeAll(stored, dst)
		},
	}
}

// trainDict trains a zstd dictionary of at most size bytes for level from
// the world's own sub-chunks (each distinct one once); with raw, content
// alone.
func trainDict(parts []columnParts, size int, level zstd.EncoderLevel, raw bool) ([]byte, error) {
	seen := map[string]bool{}
	var samples [][]byte
	for _, cp := range parts {
		for _, s := range cp.subs {
			if len(s) > 12 && !seen[string(s)] {
				seen[string(s)] = true
				samples = append(samples, s)
			}
		}
	}
	if len(samples) < 8 {
		return nil, fmt.Errorf("%d distinct sub-chunks: too few to train on", len(samples))
	}
	o := dict.Options{MaxDictSize: size, HashBytes: 6, ZstdDictID: 1, ZstdLevel: level}
	if raw {
		return dict.BuildRawDict(samples, o)
	}
	return dict.BuildZstdDict(samples, o)
}

// unit is one payload a cold load decodes under a lever.
type unit struct {
	stored []byte
	rawLen int
	dec    func(dst, stored []byte, rawLen int) ([]byte, error)
}

// leverPlan is a lever applied to a world: the bytes it takes out of the
// world's measured size, the bytes it adds, and what a load of every column
// decodes.
type leverPlan struct {
	removed, added int64
	units          []unit
	metrics        map[string]float64
}

// perSub re-encodes every sub-chunk with c, each in a frame of its own; with
// dedup, a sub-chunk that appears more than once is stored once per world
// as a record of its own (its frame compressed with c) and each column
// refers to it by an id: a codec byte and a uvarint, the most frequent
// payloads taking the smallest ids. A payload is shared only where its
// references and record cost less than its frames inline.
func perSub(parts []columnParts, c codec, dedup bool) leverPlan {
	type payload struct {
		raw    []byte
		stored []byte
		count  int
	}
	byRaw := map[string]*payload{}
	var order []*payload
	for _, cp := range parts {
		for _, s := range cp.subs {
			p := byRaw[string(s)]
			if p == nil {
				p = &payload{raw: s, stored: c.enc(s)}
				byRaw[string(s)] = p
				order = append(order, p)
			}
			p.count++
		}
	}
	var plan leverPlan
	for _, cp := range parts {
		plan.removed += int64(cp.subFrames)
	}
	// Ids by frequency, then the cost of each payload either way.
	slices.SortStableFunc(order, func(a, b *payload) int { return cmp.Compare(b.count, a.count) })
	var rawAll, rawDup, lz4All, lz4Dup int64
	lz4 := lz4Codec()
	for id, p := range order {
		inline := int64(p.count) * int64(frameBytes(len(p.raw), len(p.stored)))
		shared := int64(recordBytes+frameBytes(len(p.raw), len(p.stored))) + int64(p.count)*int64(1+uvarLen(uint64(id)))
		if dedup && p.count > 1 && shared < inline {
			plan.added += shared
		} else {
			plan.added += inline
		}
		rawAll += int64(p.count * len(p.raw))
		rawDup += int64((p.count - 1) * len(p.raw))
		lf := int64(frameBytes(len(p.raw), len(lz4.enc(p.raw))))
		lz4All += int64(p.count) * lf
		lz4Dup += int64(p.count-1) * lf
	}
	for _, cp := range parts {
		for _, s := range cp.subs {
			plan.units = append(plan.units, unit{byRaw[string(s)].stored, len(s), c.dec})
		}
	}
	if dedup {
		plan.metrics = map[string]float64{
			"dup-raw-%": 100 * float64(rawDup) / float64(rawAll),
			"dup-lz4-%": 100 * float64(lz4Dup) / float64(lz4All),
		}
	}
	return plan
}

// wholeColumn compresses every frame of a column (its sub-chunks, biomes
// and entities) as one frame with c: the larger frames of cold columns.
func wholeColumn(parts []columnParts, c codec) leverPlan {
	var plan leverPlan
	for _, cp := range parts {
		stored := c.enc(cp.raw)
		plan.removed += int64(cp.allFrames)
		plan.added += int64(frameBytes(len(cp.raw), len(stored)))
		plan.units = append(plan.units, unit{stored, len(cp.raw), c.dec})
	}
	return plan
}

// isUniformSub reports whether s, a raw sub-chunk in the record's layout
// (version, layer count, y, then per layer a header byte and, at 0 bits per
// index, the one palette entry), is one block state throughout: no layer
// (air: 3 bytes) or one layer of 0 bits per index.
func isUniformSub(s []byte) bool {
	return len(s) == 3 && s[1] == 0 || len(s) > 4 && len(s) <= 7 && s[1] == 1 && s[3] == 1
}

// morton interleaves the bits of x and z (x in the even bits), the order
// of the engine's index.
func morton(x, z int32) uint64 {
	var m uint64
	for i := range 32 {
		m |= uint64(uint32(x)>>i&1)<<(2*i) | uint64(uint32(z)>>i&1)<<(2*i+1)
	}
	return m
}

// dedupColumns returns the columns whose records differ from every
// earlier one, and the bytes it saves to store each of the others as an
// alias of the first, in one engine record per world (or per batch) that
// lists the aliases: per alias the uvarint distance of its Morton code
// from the previous alias's in the dimension and the uvarint number of the
// record it shares, the most shared first, compressed with LZ4. Each alias
// keeps its index.dat entry.
func dedupColumns(parts []columnParts) (uniq []columnParts, saved, list int64) {
	first := map[string]int{}
	uses := map[string]int{}
	for i, cp := range parts {
		uses[string(cp.rec)]++
		if _, ok := first[string(cp.rec)]; ok {
			saved += int64(len(cp.rec) + recordBytes - 28)
			continue
		}
		first[string(cp.rec)] = i
		uniq = append(uniq, cp)
	}
	if len(uniq) == len(parts) {
		return uniq, 0, 0
	}
	bodies := slices.Collect(maps.Keys(first))
	slices.SortFunc(bodies, func(a, b string) int { return cmp.Or(cmp.Compare(uses[b], uses[a]), cmp.Compare(first[a], first[b])) })
	number := map[string]int{}
	for i, body := range bodies {
		number[body] = i
	}
	type alias struct {
		key  blazedb.Key
		body int
	}
	var aliases []alias
	for i, cp := range parts {
		if first[string(cp.rec)] != i {
			aliases = append(aliases, alias{cp.key, number[string(cp.rec)]})
		}
	}
	slices.SortFunc(aliases, func(a, b alias) int {
		return cmp.Or(cmp.Compare(a.key.Dim, b.key.Dim), cmp.Compare(morton(a.key.X, a.key.Z), morton(b.key.X, b.key.Z)))
	})
	var entries []byte
	var prev uint64
	for i, a := range aliases {
		m := morton(a.key.X, a.key.Z)
		if i == 0 || aliases[i-1].key.Dim != a.key.Dim {
			entries = binary.AppendVarint(entries, int64(a.key.Dim))
			prev = 0
		}
		entries = binary.AppendUvarint(entries, m-prev)
		entries = binary.AppendUvarint(entries, uint64(a.body))
		prev = m
	}
	list = int64(recordBytes - 28 + frameBytes(len(entries), len(lz4Codec().enc(entries))))
	return uniq, saved - list, list
}

// indexSaving is what compressing index.dat with zstd (at its default
// level) would save of the Blaze world in dir; with aliases, also leaving
// out the entry of each column whose record equals an earlier column's:
// the index would keep the alias list (dedupColumns) instead, which is
// Morton-ordered and a few bytes an alias, where an entry is 28.
func indexSaving(b *testing.B, dir string, parts []columnParts, aliases bool) int64 {
	idx, err := os.ReadFile(filepath.Join(dir, "blaze", "index.dat"))
	if err != nil {
		b.Fatal(err)
	}
	if len(idx) < 12 || binary.LittleEndian.Uint32(idx[8:]) != 2 {
		// Version 3 (issue 41) is compressed and keeps aliased entries
		// as its bodies': the lever is the format now, and saves nothing
		// more.
		return 0
	}
	size := len(idx)
	// index.dat version 2 (blazedb/indexfile.go): a 56-byte header, whose bytes 40..48
	// count the chunk entries, then 28 bytes an entry: dim, x, z int32;
	// vsum uint32; offset uint64; size uint32.
	const head, entry = 56, 28
	if aliases && len(idx) >= head {
		c := int(binary.LittleEndian.Uint64(idx[40:]))
		alias := map[blazedb.Key]bool{}
		seen := map[string]bool{}
		for _, cp := range parts {
			alias[cp.key] = seen[string(cp.rec)]
			seen[string(cp.rec)] = true
		}
		kept := slices.Clone(idx[:head])
		for i := range c {
			e := idx[head+i*entry : head+(i+1)*entry]
			k := blazedb.Key{Dim: int32(binary.LittleEndian.Uint32(e)), X: int32(binary.LittleEndian.Uint32(e[4:])), Z: int32(binary.LittleEndian.Uint32(e[8:]))}
			if !alias[k] {
				kept = append(kept, e...)
			}
		}
		idx = append(kept, idx[head+c*entry:]...)
	}
	return int64(size - len(zstdCodec(zstd.SpeedDefault, nil).enc(idx)))
}

// benchBreakdown reports where the bytes of the Blaze world in dir are:
// its files, and in chunks.dat the engine's record headers and keys, the
// frames of sub-chunks of air and of the other sub-chunks, the other
// frames (biomes, entities), and the rest of each column record.
func benchBreakdown(b *testing.B, dir string, parts []columnParts) {
	m := map[string]float64{}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if st, err := d.Info(); err == nil && st.Size() > 0 {
				name := d.Name()
				if name != "chunks.dat" && name != "index.dat" && name != "level.dat" && name != "levelname.txt" {
					name = "other"
				}
				if name != "level.dat" && name != "levelname.txt" {
					m[name+"-bytes"] += float64(st.Size())
				}
			}
		}
		return nil
	})
	m["index.dat-zstd-bytes"] = m["index.dat-bytes"] - float64(indexSaving(b, dir, parts, false))
	for _, cp := range parts {
		m["record-headers-bytes"] += recordBytes - 28
		for _, s := range cp.subs {
			if isUniformSub(s) {
				m["uniform-frames-bytes"] += float64(frameBytes(len(s), len(s)))
			}
		}
		m["sub-frames-bytes"] += float64(cp.subFrames)
		m["other-frames-bytes"] += float64(cp.allFrames - cp.subFrames)
		m["record-rest-bytes"] += float64(len(cp.rec) - cp.allFrames)
	}
	m["sub-frames-bytes"] -= m["uniform-frames-bytes"]
	b.Run("breakdown", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(len(parts)), "columns")
		for k, v := range m {
			b.ReportMetric(v, k)
		}
	})
}

// benchLevers measures each lever over the records of the Blaze world in
// dir (stored with the default settings, compacted without packing), given the measured
// storage bytes of each contender and the measured cold load of that world
// per column (0 when it was not run).
func benchLevers(b *testing.B, w sizeWorld, dir string, sizes map[string]int64, coldLZ4 float64) {
	parts := readColumnParts(b, dir)
	today := sizes["blaze-unpacked"]
	benchBreakdown(b, dir, parts)
	uniq, aliasSaved, aliasList := dedupColumns(parts)
	idxSaved := indexSaving(b, dir, parts, true)
	idxLen := fileSize(b, filepath.Join(dir, "blaze", "index.dat"))

	type lever struct {
		name  string
		extra int64 // stored once per world: a dictionary
		plan  func() leverPlan
		// columns: identical column records stored once (dedupColumns), and
		// index.dat compressed: the plan's sizes count only the distinct
		// columns (size), its units every column (plan).
		columns bool
		size    func() leverPlan
	}
	levers := []lever{
		{name: "lz4", plan: func() leverPlan { return perSub(parts, lz4Codec(), false) }},
		{name: "zstd1", plan: func() leverPlan { return perSub(parts, zstdCodec(zstd.SpeedFastest, nil), false) }},
		{name: "zstd3", plan: func() leverPlan { return perSub(parts, zstdCodec(zstd.SpeedDefault, nil), false) }},
		{name: "lz4hc9", plan: func() leverPlan { return perSub(parts, lz4hcCodec(lz4.Level9), false) }},
		{name: "dedup-lz4", plan: func() leverPlan { return perSub(parts, lz4Codec(), true) }},
		{name: "dedup-lz4hc9", plan: func() leverPlan { return perSub(parts, lz4hcCodec(lz4.Level9), true) }},
	}
	// Dictionaries trained from the world's own sub-chunks: zstd's own
	// format (tables and content) and content alone, at a few sizes and
	// levels; each with its sub-chunks deduplicated too, and one for whole
	// columns.
	dicts := []struct {
		size  int
		level zstd.EncoderLevel
		raw   bool
	}{
		{16 << 10, zstd.SpeedFastest, false}, {16 << 10, zstd.SpeedDefault, false}, {64 << 10, zstd.SpeedDefault, false},
		{16 << 10, zstd.SpeedDefault, true}, {64 << 10, zstd.SpeedDefault, true},
	}
	for _, dc := range dicts {
		lvl := map[zstd.EncoderLevel]string{zstd.SpeedFastest: "1", zstd.SpeedDefault: "3"}[dc.level]
		kind := map[bool]string{false: "dict", true: "rawdict"}[dc.raw]
		start := time.Now()
		d, err := trainDict(parts, dc.size, dc.level, dc.raw)
		if err != nil {
			b.Logf("%s: no %d KiB dictionary: %v", w.name, dc.size>>10, err)
			continue
		}
		train := time.Since(start)
		name := fmt.Sprintf("zstd%s-%s%dk", lvl, kind, dc.size>>10)
		extra := int64(len(d) + recordBytes)
		mk := func(dedup bool) func() leverPlan {
			return func() leverPlan {
				p := perSub(parts, zstdDictCodec(dc.level, d, dc.raw), dedup)
				if p.metrics == nil {
					p.metrics = map[string]float64{}
				}
				p.metrics["train-ms"] = float64(train.Milliseconds())
				return p
			}
		}
		levers = append(levers, lever{name: name, extra: extra, plan: mk(false)})
		if dc.size == 16<<10 && dc.level == zstd.SpeedDefault {
			levers = append(levers, lever{name: "dedup-" + name, extra: extra, plan: mk(true)})
			levers = append(levers, lever{name: "column-" + name, extra: extra, plan: func() leverPlan {
				return wholeColumn(parts, zstdDictCodec(dc.level, d, dc.raw))
			}})
		}
	}
	levers = append(levers,
		lever{name: "bytes-column-lz4", plan: func() leverPlan { return unpackedColumn(parts, lz4Codec()) }},
		lever{name: "bytes-column-lz4hc9", plan: func() leverPlan { return unpackedColumn(parts, lz4hcCodec(lz4.Level9)) }},
		lever{name: "bytes-column-zstd3", plan: func() leverPlan { return unpackedColumn(parts, zstdCodec(zstd.SpeedDefault, nil)) }},
		lever{name: "column-lz4", plan: func() leverPlan { return wholeColumn(parts, lz4Codec()) }},
		lever{name: "column-lz4hc9", plan: func() leverPlan { return wholeColumn(parts, lz4hcCodec(lz4.Level9)) }},
		lever{name: "column-zstd3", plan: func() leverPlan { return wholeColumn(parts, zstdCodec(zstd.SpeedDefault, nil)) }},
		lever{name: "column-zstd19", plan: func() leverPlan { return wholeColumn(parts, zstdCodec(zstd.SpeedBestCompression, nil)) }},
	)

	// The combinations for maps of repeated columns: identical columns
	// stored once and index.dat compressed, with sub-chunks deduplicated.
	for _, c := range []struct {
		name  string
		codec func() codec
	}{
		{"lz4", lz4Codec},
		{"lz4hc9", func() codec { return lz4hcCodec(lz4.Level9) }},
		{"zstd3", func() codec { return zstdCodec(zstd.SpeedDefault, nil) }},
	} {
		levers = append(levers, lever{
			name:    "columns+index+dedup-" + c.name,
			plan:    func() leverPlan { return perSub(parts, c.codec(), true) },
			columns: true,
			size:    func() leverPlan { return perSub(uniq, c.codec(), true) },
		}, lever{
			name:    "columns+index+column-" + c.name,
			plan:    func() leverPlan { return wholeColumn(parts, c.codec()) },
			columns: true,
			size:    func() leverPlan { return wholeColumn(uniq, c.codec()) },
		})
	}

	var lz4Decode float64
	for _, lv := range levers {
		plan := lv.plan()
		size := today - plan.removed + plan.added + lv.extra
		if lv.columns {
			sp := lv.size()
			size = today - aliasSaved - idxSaved - sp.removed + sp.added + lv.extra
		}
		b.Run(lv.name, func(b *testing.B) {
			var buf []byte
			decodeAll := func() {
				for _, u := range plan.units {
					out, err := u.dec(buf[:0], u.stored, u.rawLen)
					if err != nil || len(out) != u.rawLen {
						b.Fatalf("decode: %v (%d of %d bytes)", err, len(out), u.rawLen)
					}
					buf = out
				}
			}
			// Once untimed: the decoders' tables and the buffer are warm,
			// as in a server that has loaded columns before.
			decodeAll()
			for b.Loop() {
				decodeAll()
			}
			perColumn := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(len(parts))
			if lv.name == "lz4" {
				lz4Decode = perColumn
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(size), "storage-bytes")
			b.ReportMetric(float64(size)/float64(sizes["mcdb"]), "ratio-mcdb")
			b.ReportMetric(perColumn, "decode-ns/column")
			if coldLZ4 > 0 && lz4Decode > 0 {
				b.ReportMetric((coldLZ4+perColumn-lz4Decode)/coldLZ4, "cold-ratio-lz4")
			}
			for k, v := range plan.metrics {
				b.ReportMetric(v, k)
			}
			if lv.columns {
				b.ReportMetric(float64(len(parts)-len(uniq)), "alias-columns")
				b.ReportMetric(float64(aliasList), "alias-list-bytes")
				b.ReportMetric(float64(idxLen-idxSaved), "index-bytes")
			}
		})
	}
}

// unpackIndices rewrites a raw sub-chunk (the record's layout) with every
// layer's index words of 1 to 8 bits per index as one byte per index, in
// the same order: byte-aligned indices that LZ4 can match, where bit-packed
// words hide most repeats from it. repackIndices reverses it. Neither
// checks its input: the harness only feeds them sub-chunks that decoded.
func unpackIndices(s []byte) []byte { return rewriteLayers(s, true) }

func repackIndices(s []byte) []byte { return rewriteLayers(s, false) }

func rewriteLayers(s []byte, unpack bool) []byte {
	if len(s) < 3 {
		return s
	}
	out := append([]byte(nil), s[:3]...)
	r := s[3:]
	for range int(s[1]) {
		hdr := r[0]
		bits := int(hdr >> 1)
		out = append(out, hdr)
		r = r[1:]
		if bits == 0 {
			_, k := binary.Uvarint(r)
			out = append(out, r[:k]...)
			r = r[k:]
			continue
		}
		per := 32 / bits
		words := (4096 + per - 1) / per
		switch {
		case bits > 8:
			out = append(out, r[:words*4]...)
			r = r[words*4:]
		case unpack:
			mask := uint32(1)<<bits - 1
			for i := range 4096 {
				w := binary.LittleEndian.Uint32(r[(i/per)*4:])
				out = append(out, byte(w>>((i%per)*bits)&mask))
			}
			r = r[words*4:]
		default:
			for wi := range words {
				var w uint32
				for j := range per {
					if i := wi*per + j; i < 4096 {
						w |= uint32(r[i]) << (j * bits)
					}
				}
				out = binary.LittleEndian.AppendUint32(out, w)
			}
			r = r[4096:]
		}
		n, k := binary.Uvarint(r)
		out = append(out, r[:k]...)
		r = r[k:]
		for range n {
			_, k := binary.Uvarint(r)
			out = append(out, r[:k]...)
			r = r[k:]
		}
	}
	return out
}

// unpackedColumn is wholeColumn with every sub-chunk's indices a byte each
// (unpackIndices) before compression; a load decompresses, then packs the
// words again, and both count as its decode.
func unpackedColumn(parts []columnParts, c codec) leverPlan {
	var plan leverPlan
	for _, cp := range parts {
		var raw []byte
		var lens []int
		subLen := 0
		for _, s := range cp.subs {
			subLen += len(s)
			u := unpackIndices(s)
			if !slices.Equal(repackIndices(u), s) {
				panic("unpackIndices does not round-trip")
			}
			raw = append(raw, u...)
			lens = append(lens, len(u))
		}
		raw = append(raw, cp.raw[subLen:]...) // biomes, entities
		stored := c.enc(raw)
		plan.removed += int64(cp.allFrames)
		plan.added += int64(frameBytes(len(raw), len(stored)))
		dec := c.dec
		plan.units = append(plan.units, unit{stored, len(raw), func(dst, stored []byte, rawLen int) ([]byte, error) {
			out, err := dec(dst, stored, rawLen)
			if err != nil {
				return out, err
			}
			at := 0
			for _, n := range lens {
				repackIndices(out[at : at+n])
				at += n
			}
			return out, nil
		}})
	}
	return plan
}

func fileSize(b *testing.B, path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}
