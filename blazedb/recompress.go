package blazedb

import (
	"fmt"
	"slices"
)

// Recompression (Options.Recompress, Options.Recoder) happens where
// compaction copies a put into the new log: the live records and the
// versions the history keeps. A record whose value must change is read
// whole and verified against its value checksum first, then stored again
// under the same key and sequence number, as a top-level put, with the
// checksum of the value it now holds. Compaction's damage handling is
// unchanged: a record that does not verify is never rewritten (a damaged
// live record and the older version carried with it are copied as they
// are, damage.go), and records appended while compaction runs are copied
// as they were written, to be brought over by the next compaction.

// A Recoder re-encodes the values compaction copies (Options.Recoder).
// It is called from the compaction's goroutine while reads and writes go
// on, so it must be safe for concurrent use with its owner, and must not
// call the DB.
type Recoder interface {
	// Recode returns the value to store in place of v, the raw value of
	// the chunk record k, or nil to keep v. What it returns must read, to
	// its owner, as the same value, and the same v must always give the
	// same result. It must not keep v or modify it.
	Recode(k Key, v []byte) []byte
}

// recompressor rewrites the records one compaction copies. It is used
// by the compaction's goroutine alone.
type recompressor struct {
	on     bool // Options.Recompress
	target codec
	recode Recoder
	// recoded are the keys whose raw value Recode changed: the cache may
	// hold their old values, and loses them when the new log is installed.
	recoded [][]byte
	n       int // records rewritten
}

func (db *DB) recompressor() *recompressor {
	return &recompressor{on: db.opts.Recompress, target: db.opts.Compression.codec(), recode: db.opts.Recoder}
}

// rewrite returns r, a verified put of k, as it is to be stored in the
// new log, and true; or false when r is copied as it is. A value that
// does not verify is copied as it is: damage is for check and repair to
// report, not for compaction to change.
func (rc *recompressor) rewrite(k rkey, r *record) (record, bool) {
	if rc == nil {
		return record{}, false
	}
	recode := rc.recode != nil && !k.named
	if !recode && (!rc.on || r.codec == rc.target) {
		return record{}, false
	}
	raw, err := r.rawValue()
	if err != nil {
		return record{}, false
	}
	vsum := r.vsum
	if recode {
		if v := rc.recode.Recode(k.chunk, raw); v != nil {
			raw, vsum = v, crc(v)
			rc.recoded = append(rc.recoded, slices.Clone(r.key))
		} else if !rc.on || r.codec == rc.target {
			return record{}, false
		}
	}
	c := r.codec
	if rc.on || vsum != r.vsum {
		c = rc.target
	}
	stored, used, err := compress(nil, c, raw)
	if err != nil {
		return record{}, false
	}
	if used == r.codec && vsum == r.vsum {
		return record{}, false // already as small as Compression makes it
	}
	rc.n++
	return record{seq: r.seq, kind: kindPut, codec: used, key: r.key, value: stored, rawLen: uint32(len(raw)), vsum: vsum}, true
}

// writeRewritten appends r, the rewritten live record of k, to w and
// records it in nix.
func writeRewritten(w *appender, nix *index, k rkey, r *record) error {
	off := w.pos()
	b := appendRecord(nil, r)
	if err := w.write(b); err != nil {
		return fmt.Errorf("write %s: %w", compactName, err)
	}
	nix.put(k, entry{off: off, size: uint32(len(b)), vsum: r.vsum})
	return nil
}
