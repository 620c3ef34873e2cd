package blazedb

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// Get returns the value of a chunk key. The caller owns the returned slice.
// A missing key gives an error satisfying errors.Is(err, ErrNotFound);
// damaged bytes give one wrapping ErrCorrupt that names the offset.
func (db *DB) Get(k Key) ([]byte, error) {
	var kb [chunkKeyLen]byte
	v, err := db.get(rkey{chunk: k}, appendChunkKey(kb[:0], k))
	if err != nil {
		return nil, fmt.Errorf("blazedb: get %v: %w", k, err)
	}
	return v, nil
}

// GetNamed returns the value of a named record; see Get.
func (db *DB) GetNamed(name string) ([]byte, error) {
	v, err := db.get(rkey{named: true, name: name}, appendNamedKey(nil, name))
	if err != nil {
		return nil, fmt.Errorf("blazedb: get %q: %w", name, err)
	}
	return v, nil
}

// GetShared is Get without the copy, for callers that keep values they
// only read: the slice may be the cache's own and may be handed to other
// callers too. The engine never writes to a slice once it has returned it,
// so the caller may keep it for as long as it likes, but must never modify
// it.
func (db *DB) GetShared(k Key) ([]byte, error) {
	var kb [chunkKeyLen]byte
	v, err := db.lookup(rkey{chunk: k}, appendChunkKey(kb[:0], k))
	if err != nil {
		return nil, fmt.Errorf("blazedb: get %v: %w", k, err)
	}
	return v, nil
}

// GetAppend appends the value of a chunk key to dst and returns the
// result, which shares nothing with the engine: for a caller that reads a
// value once into a buffer of its own (the provider decoding a column),
// sparing the new slice Get allocates. A value in the cache is copied from
// it; one read from the file is not added to the cache. Errors are Get's.
func (db *DB) GetAppend(k Key, dst []byte) ([]byte, error) {
	var kb [chunkKeyLen]byte
	v, cached, err := db.find(rkey{chunk: k}, appendChunkKey(kb[:0], k), dst, false)
	if err != nil {
		return nil, fmt.Errorf("blazedb: get %v: %w", k, err)
	}
	if cached {
		return append(dst, v...), nil
	}
	return v, nil
}

// Stamp identifies the record a chunk key holds now, from memory alone: it
// changes whenever the key is written or deleted (and when compaction moves
// its record). Take it before reading a value to know later, without I/O,
// whether what was read is still current. ok is false for a missing key.
func (db *DB) Stamp(k Key) (stamp uint64, ok bool) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.log == nil {
		return 0, false
	}
	e, ok := db.idx.get(rkey{chunk: k})
	return db.log.gen<<48 ^ uint64(e.off), ok
}

// Has reports whether a chunk key has a value, from memory alone.
func (db *DB) Has(k Key) (bool, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.log == nil {
		return false, ErrClosed
	}
	_, ok := db.idx.get(rkey{chunk: k})
	return ok, nil
}

// Keys returns the chunk keys inside area in Morton (Z-order) order, so
// neighbours come together.
func (db *DB) Keys(area Area) ([]Key, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.log == nil {
		return nil, ErrClosed
	}
	return db.idx.area(nil, area), nil
}

// Names returns the names of all named records, sorted.
func (db *DB) Names() ([]string, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.log == nil {
		return nil, ErrClosed
	}
	var out []string
	for n := range db.idx.named {
		if !isReservedName(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (db *DB) get(k rkey, key []byte) ([]byte, error) {
	v, err := db.lookup(k, key)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), v...), nil
}

// lookup returns k's value, read-only: it may be the cache's own slice.
func (db *DB) lookup(k rkey, key []byte) ([]byte, error) {
	v, _, err := db.find(k, key, nil, true)
	return v, err
}

// find returns k's value, from the cache or read from the file and
// appended to dst; fill adds a value read from the file to the cache.
// cached reports that v may be the cache's own slice (a hit, or a value
// just added), which nobody may modify.
func (db *DB) find(k rkey, key, dst []byte, fill bool) (v []byte, cached bool, err error) {
	if db.closed.Load() {
		return nil, false, ErrClosed
	}
	db.stats.reads.Add(1)
	if v, ok := db.cache.get(key); ok {
		return v, true, nil
	}
	v, e, l, err := db.read(k, key, dst)
	if err != nil {
		return nil, false, err
	}
	if fill {
		db.cache.addIfCurrent(key, v, func() bool { return db.current(k, e, l) })
		return v, true, nil
	}
	return v, false, nil
}

// read reads k's value from the file, appended to dst, and returns with it
// the index entry and the log it was read from, for current. The caller
// has counted the read.
func (db *DB) read(k rkey, key, dst []byte) ([]byte, entry, *logFile, error) {
	db.mu.RLock()
	l := db.log
	if l == nil {
		db.mu.RUnlock()
		return nil, entry{}, nil, ErrClosed
	}
	e, ok := db.idx.get(k)
	if ok {
		l.refs.Add(1)
	}
	db.mu.RUnlock()
	if !ok {
		db.stats.notFound.Add(1)
		return nil, entry{}, nil, ErrNotFound
	}
	v, err := readEntry(l, e, key, dst, false)
	l.refs.Done()
	if err != nil {
		return nil, entry{}, nil, err
	}
	return v, e, l, nil
}

// current reports whether the record that read found for k, at e in l, is
// still k's (for caching what it read).
func (db *DB) current(k rkey, e entry, l *logFile) bool {
	db.mu.RLock()
	defer db.mu.RUnlock()
	cur, ok := db.idx.get(k)
	return ok && cur == e && db.log == l
}

var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// readEntry reads, verifies and decompresses the put record e of key,
// appending its value to dst (nil: a new slice). With all, a value stored
// raw is summed too (see entryValue).
func readEntry(l *logFile, e entry, key, dst []byte, all bool) ([]byte, error) {
	v, err := readEntryAt(l, e, key, dst, all)
	if err == nil || !errors.Is(err, ErrCorrupt) {
		return v, err
	}
	if second, ok := l.alt[e.off]; ok {
		// A body whose first copy does not verify: its second (alias.go).
		e.off = second
		if v, err2 := readEntryAt(l, e, key, dst, all); err2 == nil {
			return v, nil
		}
	}
	return nil, err
}

// readEntryAt is readEntry without a body's second copy.
func readEntryAt(l *logFile, e entry, key, dst []byte, all bool) ([]byte, error) {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	if cap(*bp) < int(e.size) {
		*bp = make([]byte, e.size)
	}
	buf := (*bp)[:e.size]
	if err := readAt(l, buf, e.off); err != nil {
		return nil, err
	}
	return entryValue(buf, e, key, dst, all)
}

// readAt fills buf from the log at off; bytes past the end of the file are
// damage.
func readAt(l *logFile, buf []byte, off int64) error {
	n, err := l.f.ReadAt(buf, off)
	if n < len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			return corruptf(logName, off, "%d bytes of records run past the end of the file", len(buf))
		}
		return fmt.Errorf("read %s at %d: %w", logName, off, err)
	}
	return nil
}

// entryValue verifies rec, the bytes of the put record e of key, and
// appends its decompressed value to dst (nil: a new slice). A read (all
// false) does not sum a value stored raw again: the record's checksum,
// verified first, covers the same bytes and the value checksum written
// with them, so only a writer's mistake could tell the two apart. Check and
// Repair, which look for every kind of damage, pass all.
func entryValue(rec []byte, e entry, key, dst []byte, all bool) ([]byte, error) {
	r, _, err := decodeRecord(rec, rec[16]&0x80 == 0)
	if err != nil {
		return nil, corruptf(logName, e.off, "%v", err)
	}
	switch {
	case r.kind != kindPut && r.kind != kindBatchPut && r.kind != kindBody:
		return nil, corruptf(logName, e.off, "index points at a record of kind %#x", r.kind)
	case r.kind != kindBody && !bytes.Equal(r.key, key):
		return nil, corruptf(logName, e.off, "index points at a record of another key")
	case r.vsum != e.vsum:
		return nil, corruptf(logName, e.off, "record value checksum %08x, index has %08x", r.vsum, e.vsum)
	}
	v, err := r.appendValue(dst, all)
	if err != nil {
		return nil, corruptf(logName, e.off, "%v", err)
	}
	return v, nil
}

// Records that ReadNamed reads together: one read covers records at most
// readGap bytes apart, up to readSpan bytes in all.
const (
	readGap  = 4 << 10
	readSpan = 1 << 20
)

// ReadNamed calls fn with the name and value of every named key that
// starts with prefix, in the order of their records in the file, reading
// records that lie close together with one read instead of one each (a
// provider's block dictionary is hundreds of small records, read when it
// opens). Each value is the caller's own. It stops at the first error,
// fn's included; damage gives one wrapping ErrCorrupt, as Get's does.
// Safe for concurrent use; a key written meanwhile may be seen with either
// value, or not at all if it is new.
func (db *DB) ReadNamed(prefix string, fn func(name string, value []byte) error) error {
	if db.closed.Load() {
		return ErrClosed
	}
	type item struct {
		name string
		e    entry
	}
	db.mu.RLock()
	l := db.log
	if l == nil {
		db.mu.RUnlock()
		return ErrClosed
	}
	var items []item
	for n, e := range db.idx.named {
		if strings.HasPrefix(n, prefix) && !isReservedName(n) {
			items = append(items, item{n, e})
		}
	}
	l.refs.Add(1)
	db.mu.RUnlock()
	defer l.refs.Done()
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.e.off, b.e.off) })

	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	var key []byte
	for i := 0; i < len(items); {
		start := items[i].e.off
		end := start + int64(items[i].e.size)
		j := i + 1
		for ; j < len(items); j++ {
			e := items[j].e
			if e.off-end > readGap || e.off+int64(e.size)-start > readSpan {
				break
			}
			end = max(end, e.off+int64(e.size))
		}
		if cap(*bp) < int(end-start) {
			*bp = make([]byte, end-start)
		}
		buf := (*bp)[:end-start]
		if err := readAt(l, buf, start); err != nil {
			return fmt.Errorf("blazedb: read named %q: %w", prefix, err)
		}
		for _, it := range items[i:j] {
			db.stats.reads.Add(1)
			key = appendNamedKey(key[:0], it.name)
			rec := buf[it.e.off-start : it.e.off-start+int64(it.e.size)]
			v, err := entryValue(rec, it.e, key, nil, false)
			if err != nil {
				return fmt.Errorf("blazedb: get %q: %w", it.name, err)
			}
			if err := fn(it.name, v); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}
