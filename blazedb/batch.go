package blazedb

import "fmt"

// Batch collects puts and deletes of chunk and named keys that DB.Apply
// writes atomically: after a crash, all of them or none are present. Values
// are copied when added, so the caller may reuse its buffers at once. When a
// batch names a key more than once, the last operation wins. A Batch is not
// safe for concurrent use.
type Batch struct {
	// Sync makes Apply return only once the batch is durable, whatever the
	// durability mode, as if the DB were in DurabilitySafeBatch (concurrent
	// synced writers share fsyncs). For a write that later writes depend on:
	// a power loss may keep a later unsynced record and lose an earlier one,
	// and recovery then skips the lost one as damage.
	Sync bool

	ops []op
	err error
}

// op is one put or delete.
type op struct {
	k   rkey
	key []byte // encoded key
	del bool
	val []byte
	// shared: the caller never modifies val again, so the cache may keep
	// it instead of a copy.
	shared bool
}

// Put adds a put of a chunk key.
func (b *Batch) Put(k Key, v []byte) { b.put(k, append([]byte(nil), v...), false) }

// PutShared is Put of a value its caller never modifies again: the batch
// keeps v itself instead of a copy, and so does the engine's cache once the
// batch is applied (as DB.PutShared), where a caller that keeps the value
// too (the provider's column cache does) would otherwise have it copied
// twice and held twice.
func (b *Batch) PutShared(k Key, v []byte) { b.put(k, v, true) }

// put adds a put of a chunk key of value v, which the batch keeps.
func (b *Batch) put(k Key, v []byte, shared bool) {
	if len(v) > maxValueLen {
		b.fail(fmt.Errorf("%w: value of %d bytes for %v (limit %d)", ErrTooLarge, len(v), k, maxValueLen))
		return
	}
	b.ops = append(b.ops, op{k: rkey{chunk: k}, key: appendChunkKey(nil, k), val: v, shared: shared})
}

// Delete adds a delete of a chunk key.
func (b *Batch) Delete(k Key) {
	b.ops = append(b.ops, op{k: rkey{chunk: k}, key: appendChunkKey(nil, k), del: true})
}

// PutNamed adds a put of a named record.
func (b *Batch) PutNamed(name string, v []byte) {
	if err := checkName(name); err != nil {
		b.fail(err)
		return
	}
	if len(v) > maxValueLen {
		b.fail(fmt.Errorf("%w: value of %d bytes for %q", ErrTooLarge, len(v), name))
		return
	}
	b.ops = append(b.ops, op{k: rkey{named: true, name: name}, key: appendNamedKey(nil, name), val: append([]byte(nil), v...)})
}

// DeleteNamed adds a delete of a named record.
func (b *Batch) DeleteNamed(name string) {
	if err := checkName(name); err != nil {
		b.fail(err)
		return
	}
	b.ops = append(b.ops, op{k: rkey{named: true, name: name}, key: appendNamedKey(nil, name), del: true})
}

func (b *Batch) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// Len reports the number of operations added.
func (b *Batch) Len() int { return len(b.ops) }

// Reset empties the batch for reuse, Sync included.
func (b *Batch) Reset() {
	b.ops = b.ops[:0]
	b.err = nil
	b.Sync = false
}

// Apply writes the batch atomically and waits as the durability mode (or
// b.Sync) requires. An invalid operation added to the batch fails the
// whole batch and nothing is written.
func (db *DB) Apply(b *Batch) error {
	if b.err != nil {
		return fmt.Errorf("blazedb: apply batch: %w", b.err)
	}
	if len(b.ops) == 0 {
		return nil
	}
	if err := db.write(dedupe(b.ops), b.Sync); err != nil {
		return fmt.Errorf("blazedb: apply batch of %d: %w", len(b.ops), err)
	}
	return nil
}

// dedupe keeps the last operation on each key, in order.
func dedupe(ops []op) []op {
	if len(ops) < 2 {
		return ops
	}
	last := make(map[string]int, len(ops))
	for i, o := range ops {
		last[string(o.key)] = i
	}
	if len(last) == len(ops) {
		return ops
	}
	out := make([]op, 0, len(last))
	for i, o := range ops {
		if last[string(o.key)] == i {
			out = append(out, o)
		}
	}
	return out
}
