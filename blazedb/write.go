package blazedb

import (
	"bytes"
	"fmt"
	"time"
)

// Put sets the value of a chunk key. The caller may reuse v as soon as Put
// returns. Putting the value a key already has appends nothing. Put returns
// once the write is as durable as Options.Durability promises.
func (db *DB) Put(k Key, v []byte) error { return db.put(k, v, false) }

// PutShared is Put for a value its caller will never modify again: the
// engine may keep v itself (in its cache) instead of a copy, as a caller
// that keeps the value too (the provider's column cache does) would
// otherwise hold it twice.
func (db *DB) PutShared(k Key, v []byte) error { return db.put(k, v, true) }

func (db *DB) put(k Key, v []byte, shared bool) error {
	if len(v) > maxValueLen {
		return fmt.Errorf("blazedb: put %v: %w: value of %d bytes (limit %d)", k, ErrTooLarge, len(v), maxValueLen)
	}
	if err := db.write([]op{{k: rkey{chunk: k}, key: appendChunkKey(nil, k), val: v, shared: shared}}, false); err != nil {
		return fmt.Errorf("blazedb: put %v: %w", k, err)
	}
	return nil
}

// Delete removes a chunk key. Deleting a missing key appends nothing.
func (db *DB) Delete(k Key) error {
	if err := db.write([]op{{k: rkey{chunk: k}, key: appendChunkKey(nil, k), del: true}}, false); err != nil {
		return fmt.Errorf("blazedb: delete %v: %w", k, err)
	}
	return nil
}

// PutNamed sets the value of a named record (1 to MaxNameLen bytes of
// name), for small data such as player spawns. See Put.
func (db *DB) PutNamed(name string, v []byte) error {
	if err := checkName(name); err != nil {
		return fmt.Errorf("blazedb: put %q: %w", name, err)
	}
	if len(v) > maxValueLen {
		return fmt.Errorf("blazedb: put %q: %w: value of %d bytes", name, ErrTooLarge, len(v))
	}
	if err := db.write([]op{{k: rkey{named: true, name: name}, key: appendNamedKey(nil, name), val: v}}, false); err != nil {
		return fmt.Errorf("blazedb: put %q: %w", name, err)
	}
	return nil
}

// DeleteNamed removes a named record.
func (db *DB) DeleteNamed(name string) error {
	if err := checkName(name); err != nil {
		return fmt.Errorf("blazedb: delete %q: %w", name, err)
	}
	if err := db.write([]op{{k: rkey{named: true, name: name}, key: appendNamedKey(nil, name), del: true}}, false); err != nil {
		return fmt.Errorf("blazedb: delete %q: %w", name, err)
	}
	return nil
}

// pending is an op on its way to the log.
type pending struct {
	op
	vsum   uint32
	codec  codec
	stored []byte // the value as stored (compressed or raw)
	elide  bool   // the key already holds this value...
	expect entry  // ...in this record
}

// write appends ops as one record (a batch when there are several), applies
// them to the index and cache, and waits for durability: as the mode
// requires, or, with sync, until the record is durable whatever the mode.
// Compression and the comparison for elision happen before the write lock
// is taken.
func (db *DB) write(ops []op, sync bool) error {
	if err := db.checkWritable(); err != nil {
		return err
	}
	ps := make([]pending, len(ops))
	// A put of the value its key already holds is elided, in a batch too:
	// the record holding it comes earlier in the log, and recovery keeps a
	// prefix of the log's writes, so it survives whenever the batch does.
	for i, o := range ops {
		p := &ps[i]
		p.op = o
		if o.del {
			continue
		}
		p.vsum = crc(o.val)
		db.mu.RLock()
		e, ok := db.idx.get(o.k)
		db.mu.RUnlock()
		if ok && e.vsum == p.vsum {
			if cur, err := db.lookup(o.k, o.key); err == nil && bytes.Equal(cur, o.val) {
				p.elide, p.expect = true, e
				continue
			}
		}
		if err := p.encode(db.opts.Compression.codec()); err != nil {
			return err
		}
	}

	db.writeMu.Lock()
	l := db.log
	if l == nil || db.closed.Load() {
		db.writeMu.Unlock()
		return ErrClosed
	}
	if err := db.poisoned(); err != nil {
		db.writeMu.Unlock()
		return err
	}
	// Re-check elision now that no other writer can run.
	live := ps[:0:0]
	db.mu.RLock()
	for i := range ps {
		p := &ps[i]
		cur, ok := db.idx.get(p.k)
		switch {
		case p.del && !ok:
			continue
		case p.elide && ok && cur == p.expect:
			continue
		}
		live = append(live, *p)
	}
	db.mu.RUnlock()
	elided := int64(len(ps) - len(live))
	if len(live) == 0 {
		end := l.written.Load()
		l.refs.Add(1)
		db.writeMu.Unlock()
		db.stats.elided.Add(elided)
		err := db.waitDurable(l, end, sync)
		l.refs.Done()
		return err
	}
	for i := range live {
		if p := &live[i]; p.elide {
			// It changed between the comparison and now: write it after all.
			if err := p.encode(db.opts.Compression.codec()); err != nil {
				db.writeMu.Unlock()
				return err
			}
		}
	}

	total := 0
	for _, p := range live {
		total += recHeaderSize + len(p.key) + len(p.stored)
	}
	if len(live) > 1 && total > maxBodyLen {
		db.writeMu.Unlock()
		return fmt.Errorf("%w: batch of %d bytes (limit %d)", ErrTooLarge, total, maxBodyLen)
	}
	// A sync mark goes first when an fsync has completed since the last
	// one: recovery learns from it that everything before it was durable.
	var mark []byte
	off := l.written.Load()
	markTo := l.marked
	// A time mark when one is due (timeline.go), which is a sync mark too.
	point, timeDue := db.idx.hist.pointDue(time.Now().UnixNano())
	point.seq = db.seq
	switch markTo = l.durable(); {
	case timeDue:
		mark = appendTimeMark(make([]byte, 0, timeMarkSize+recHeaderSize+total), markTo, point, db.idx.hist.floor)
	case markTo > l.marked:
		mark = appendMark(make([]byte, 0, markSize+recHeaderSize+total), markTo)
	}
	buf, offs := db.frame(mark, live)
	if _, err := l.f.WriteAt(buf, off); err != nil {
		// Cut what may have reached the file, so the next record starts at a
		// known place. If even that fails, the file's state is unknown.
		if terr := l.f.Truncate(off); terr != nil {
			db.poison(fmt.Errorf("cut failed write at %d: %w (after %v)", off, terr, err))
		}
		db.writeMu.Unlock()
		return fmt.Errorf("write %s at %d: %w", logName, off, err)
	}
	end := off + int64(len(buf))
	l.written.Store(end)
	if mark != nil {
		l.marked = markCovers(markTo, off)
		if !timeDue { // a time mark counts with the history (timeline.go)
			l.markBytes.Add(markSize)
		}
	}
	l.dirtyAt.CompareAndSwap(0, time.Now().UnixNano())
	db.seq += uint64(len(live))
	db.mu.Lock()
	for i, p := range live {
		seq := db.seq - uint64(len(live)) + uint64(i)
		if p.del {
			db.idx.delAt(p.k, seq, uint32(recHeaderSize+len(p.key)))
		} else {
			db.idx.putAt(p.k, entry{off: off + offs[i], size: uint32(recHeaderSize + len(p.key) + len(p.stored)), vsum: p.vsum}, seq)
		}
	}
	if timeDue {
		db.idx.hist.addPoint(point)
	}
	db.mu.Unlock()
	for _, p := range live {
		if p.del {
			db.cache.remove(p.key)
		} else if p.shared {
			db.cache.set(p.key, p.val)
		} else {
			db.cache.set(p.key, append([]byte(nil), p.val...))
		}
	}
	l.refs.Add(1)
	db.writeMu.Unlock()

	db.stats.appends.Add(1)
	db.stats.appendBytes.Add(int64(len(buf)))
	db.stats.elided.Add(elided)
	err := db.waitDurable(l, end, sync)
	l.refs.Done()
	if err == nil {
		db.maybeCompact(l)
		db.maybeCheckpoint(l)
	}
	return err
}

func (p *pending) encode(c codec) error {
	if c == codecNone {
		p.stored, p.codec = p.val, codecNone // only read while it is framed
		return nil
	}
	stored, used, err := compress(nil, c, p.val)
	if err != nil {
		return err
	}
	p.stored, p.codec = stored, used
	return nil
}

// frame appends to dst the bytes to append for live, numbering them from
// db.seq, and returns them with the offset of each op's record within them.
// db.writeMu must be held.
func (db *DB) frame(dst []byte, live []pending) ([]byte, []int64) {
	offs := make([]int64, len(live))
	base := int64(len(dst))
	rec := func(dst []byte, p *pending, seq uint64, inBatch bool) []byte {
		r := record{seq: seq, key: p.key}
		if p.del {
			r.kind = kindDelete
		} else {
			r.kind, r.codec, r.value, r.rawLen, r.vsum = kindPut, p.codec, p.stored, uint32(len(p.val)), p.vsum
		}
		if inBatch {
			r.kind |= 0x80
		}
		return appendRecord(dst, &r)
	}
	// Room for everything at once; a batch's records go straight after
	// room for its header, which is written once they are: no body is
	// built apart and copied.
	size := 0
	for _, p := range live {
		size += recHeaderSize + len(p.key) + len(p.stored)
	}
	if len(live) > 1 {
		size += recHeaderSize
	}
	if cap(dst)-len(dst) < size {
		dst = append(make([]byte, 0, len(dst)+size), dst...)
	}
	if len(live) == 1 {
		offs[0] = base
		return rec(dst, &live[0], db.seq, false), offs
	}
	start := len(dst)
	dst = dst[:start+recHeaderSize]
	for i := range live {
		offs[i] = int64(len(dst))
		dst = rec(dst, &live[i], db.seq+uint64(i), true)
	}
	sealRecord(dst[start:], &record{seq: db.seq, kind: kindBatch, rawLen: uint32(len(dst) - start - recHeaderSize)})
	return dst, offs
}
