package blazedb

import "iter"

// chainMap holds the history's chains, chunk keys and named keys apart: a
// chunk key hashes as 12 bytes, where a key holding a string would hash
// its every field, on every write.
type chainMap struct {
	chunk map[Key][]version
	named map[string][]version
}

func newChainMap(n int) chainMap {
	return chainMap{chunk: make(map[Key][]version, n), named: map[string][]version{}}
}

func (m chainMap) get(k rkey) ([]version, bool) {
	if k.named {
		c, ok := m.named[k.name]
		return c, ok
	}
	c, ok := m.chunk[k.chunk]
	return c, ok
}

func (m chainMap) set(k rkey, c []version) {
	if k.named {
		m.named[k.name] = c
	} else {
		m.chunk[k.chunk] = c
	}
}

func (m chainMap) len() int { return len(m.chunk) + len(m.named) }

// all yields every chain, in no order.
func (m chainMap) all() iter.Seq2[rkey, []version] {
	return func(yield func(rkey, []version) bool) {
		for k, c := range m.chunk {
			if !yield(rkey{chunk: k}, c) {
				return
			}
		}
		for n, c := range m.named {
			if !yield(rkey{named: true, name: n}, c) {
				return
			}
		}
	}
}

// keys yields every chain's key, in no order.
func (m chainMap) keys() iter.Seq[rkey] {
	return func(yield func(rkey) bool) {
		for k := range m.all() {
			if !yield(k) {
				return
			}
		}
	}
}

// clone copies the maps; the chains are shared, capped so that an append
// to either copies.
func (m chainMap) clone() chainMap {
	c := chainMap{chunk: make(map[Key][]version, len(m.chunk)), named: make(map[string][]version, len(m.named))}
	for k, v := range m.chunk {
		c.chunk[k] = v[:len(v):len(v)]
	}
	for k, v := range m.named {
		c.named[k] = v[:len(v):len(v)]
	}
	return c
}
