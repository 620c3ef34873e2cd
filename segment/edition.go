package segment

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/goleveldb/leveldb"
)

// A segmented world's edition names the columns of all its regions, as a
// provider.Edition names one world's, so that an overlay over a segmented
// template (package overlay) can tell that its map changed. It is derived,
// never stored: a digest of the key and provider.Edition of every region.
// A region's edition changes, crash-safely, with its columns (package
// provider), and deleting a region takes it out of the digest, so the
// digest changes whenever a column does, after a crash too.

// editions tracks the edition of each region. Safe for concurrent use.
type editions struct {
	mu sync.Mutex
	// of holds what is known of each region's edition. Stores, opens and
	// deletions note theirs in it from the start; read is set once every
	// region on disk was read.
	of   map[segKey]regionEdition
	read bool
	// scan is held by the one readEditions reading the regions, so that
	// first calls racing each other open every region once, not once
	// each. Only Edition takes it: stores and loads never wait for it.
	scan sync.Mutex
}

// regionEdition is a region's edition, or that it was deleted.
type regionEdition struct {
	ed   provider.Edition
	gone bool
}

// note records the edition region k's db has now. It reads it under the
// lock, so that of two notes racing for one region, the later one never
// records the older edition.
func (e *editions) note(k segKey, db *provider.DB) {
	e.mu.Lock()
	e.setLocked(k, regionEdition{ed: db.Edition()})
	e.mu.Unlock()
}

// deleted records that region k is gone.
func (e *editions) deleted(k segKey) {
	e.mu.Lock()
	e.setLocked(k, regionEdition{gone: true})
	e.mu.Unlock()
}

func (e *editions) setLocked(k segKey, r regionEdition) {
	if e.of == nil {
		e.of = map[segKey]regionEdition{}
	}
	e.of[k] = r
}

// Edition returns the edition of the segmented world's columns: a digest of
// the provider.Edition of every region, which changes whenever a column is
// stored that differs from the stored one or a region is deleted, and is
// zero when no region has an edition (a world without regions, or one that
// only builds older than editions wrote). Read it while nothing writes: a
// column stored meanwhile may or may not be in it. The first call opens
// every region to read its edition, and calls made meanwhile wait for it;
// the provider then keeps them up to date, so later calls read nothing. If
// a region cannot be opened, the error is returned by the next call that
// reports background errors (Close, DeleteSegmentFor, CompactSegment), and
// Edition returns a new random edition, which an overlay takes for a
// changed map. Safe for concurrent use.
func (p *Provider) Edition() provider.Edition {
	if err := p.readEditions(); err != nil {
		p.report(fmt.Errorf("read the edition of every region: %w", err))
		var ed provider.Edition
		for ed.IsZero() {
			rand.Read(ed[:]) // never fails (crypto/rand)
		}
		return ed
	}
	p.eds.mu.Lock()
	defer p.eds.mu.Unlock()
	keys := make([]segKey, 0, len(p.eds.of))
	named := false
	for k, r := range p.eds.of {
		if !r.gone {
			keys = append(keys, k)
			named = named || !r.ed.IsZero()
		}
	}
	if !named {
		return provider.Edition{}
	}
	slices.SortFunc(keys, func(a, b segKey) int {
		return cmp.Or(cmp.Compare(a.dim, b.dim), cmp.Compare(a.rx, b.rx), cmp.Compare(a.rz, b.rz))
	})
	h := sha256.New()
	var b [12]byte
	for _, k := range keys {
		binary.LittleEndian.PutUint32(b[0:], uint32(k.dim))
		binary.LittleEndian.PutUint32(b[4:], uint32(k.rx))
		binary.LittleEndian.PutUint32(b[8:], uint32(k.rz))
		h.Write(b[:])
		ed := p.eds.of[k].ed
		h.Write(ed[:])
	}
	return provider.Edition(h.Sum(nil)[:len(provider.Edition{})])
}

// editionsRead reports whether every region's edition was read.
func (p *Provider) editionsRead() bool {
	p.eds.mu.Lock()
	defer p.eds.mu.Unlock()
	return p.eds.read
}

// readEditions reads the edition of every region on disk once; calls
// racing it wait for it instead of reading them too. What stores and opens
// noted meanwhile is as new as what it reads, or newer, and is kept. A scan
// that fails leaves read unset, and the next call tries again.
func (p *Provider) readEditions() error {
	if p.editionsRead() {
		return nil
	}
	p.eds.scan.Lock()
	defer p.eds.scan.Unlock()
	if p.editionsRead() { // read by the call this one waited for
		return nil
	}
	found := map[segKey]provider.Edition{}
	for dim := range int32(3) {
		keys, err := p.onDisk(dim)
		if err != nil {
			return err
		}
		for _, k := range keys {
			s, err := p.acquire(k, false)
			if errors.Is(err, leveldb.ErrNotFound) {
				continue // deleted since the listing
			}
			if err != nil {
				return fmt.Errorf("region %v: %w", k, err)
			}
			found[k] = s.db.Edition()
			p.release(s)
		}
	}
	p.eds.mu.Lock()
	defer p.eds.mu.Unlock()
	if p.eds.of == nil {
		p.eds.of = map[segKey]regionEdition{}
	}
	for k, ed := range found {
		if _, ok := p.eds.of[k]; !ok {
			p.eds.of[k] = regionEdition{ed: ed}
		}
	}
	p.eds.read = true
	return nil
}
