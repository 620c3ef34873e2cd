package segment

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

// Config holds the optional parameters of a segmented world. The zero
// value gives the defaults documented on each field. Open takes it by value
// and never modifies it, so one Config may be used from several goroutines
// at once.
type Config struct {
	// SegmentSize is the side of a region in chunks, fixed when the world
	// is made (default 32) and kept in it: zero opens a world with its own
	// size, and any other value must be that size (ErrInvalidOptions
	// otherwise), as with another size every chunk would be looked for in
	// the wrong region. At most 1,048,576.
	SegmentSize int
	// MaxOpen bounds the open segments: idle ones are closed to stay under
	// it (it is exceeded only while more segments are in use at once).
	// Default 64.
	MaxOpen int
	// IdleTimeout closes segments unused for this long. Default 1 minute.
	IdleTimeout time.Duration
	// Workers is the size of the background pool shared by all segments.
	// Default 2.
	Workers int
	// MaintainInterval is how often the pool visits every open segment.
	// Default 500ms, within DurabilityBalanced's one-second promise.
	MaintainInterval time.Duration
	// Durability and Compression of every segment (see blazedb).
	Durability  blazedb.Durability
	Compression blazedb.Compression
	// History of every segment (see blazedb.Options.History).
	History time.Duration
	// CacheBytes and ColumnCacheBytes are each segment's caches. Default 8
	// MiB each.
	CacheBytes, ColumnCacheBytes int64
	// Log receives errors. Default slog.Default().
	Log *slog.Logger
	// FS is the filesystem. Default the operating system's.
	FS vfs.FS
}

// defaultSegmentSize is the side of a new world's regions when
// Config.SegmentSize is zero.
const defaultSegmentSize = 32

// withDefaults fills in the defaults, except SegmentSize: zero there means
// the world's own (see layout).
func (c Config) withDefaults() Config {
	if c.MaxOpen == 0 {
		c.MaxOpen = 64
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = time.Minute
	}
	if c.Workers == 0 {
		c.Workers = 2
	}
	if c.MaintainInterval == 0 {
		c.MaintainInterval = 500 * time.Millisecond
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = 8 << 20
	}
	if c.ColumnCacheBytes == 0 {
		c.ColumnCacheBytes = 8 << 20
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.FS == nil {
		c.FS = vfs.Default
	}
	return c
}

// Provider is a world.Provider over segments. It is safe for concurrent use.
type Provider struct {
	conf Config
	dir  string
	meta *provider.DB

	mu     sync.Mutex
	idle   sync.Cond // on mu: a claimed segment's last user left
	segs   map[segKey]*seg
	reg    world.BlockRegistry
	closed bool
	bgErr  error
	eds    editions
	// pins counts the Pin calls not yet undone, by region and column
	// (prefetch.go). A region with pins is kept open.
	pins map[segKey]map[world.ChunkPos]int
	// pinning holds the first Pin of each column whose read is still under
	// way, so that a second Pin of it learns how the read went.
	pinning map[pinKey]*firstPin
	// closedCounts sums the cache counters of the regions closed since
	// Open (prefetch.go).
	closedCounts cacheCounts
	// shipWritten and shipDeleted are the regions closed after being
	// written to, and deleted, since ShipRegions last offered them
	// (ship.go).
	shipWritten, shipDeleted map[segKey]bool

	stop chan struct{}
	work chan *seg
	wg   sync.WaitGroup
}

var _ world.Provider = (*Provider)(nil)

type segKey struct{ dim, rx, rz int32 }

// seg is one region's database. users pins it open; gone is closed once it
// has been closed (and taken out of the map).
type seg struct {
	key     segKey
	ready   chan struct{} // closed once db (or err) is set
	db      *provider.DB
	err     error
	users   int
	lastUse time.Time
	closing bool
	gone    chan struct{}
}

// Open opens (or creates) the segmented world in dir.
func (c Config) Open(dir string) (*Provider, error) {
	c = c.withDefaults()
	if c.SegmentSize < 0 || c.SegmentSize > maxSegmentSize || c.MaxOpen < 1 || c.Workers < 1 {
		return nil, fmt.Errorf("segment: %w: MaxOpen and Workers must be positive, SegmentSize zero (the world's own) or 1 to %d", blazedb.ErrInvalidOptions, maxSegmentSize)
	}
	meta, err := provider.Config{Log: c.Log, Durability: c.Durability, FS: c.FS, ExternalMaintenance: true, SegmentRoot: true}.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("segment: open %s: %w", dir, err)
	}
	p := &Provider{conf: c, dir: dir, meta: meta, segs: map[segKey]*seg{}, pins: map[segKey]map[world.ChunkPos]int{}, pinning: map[pinKey]*firstPin{},
		shipWritten: map[segKey]bool{}, shipDeleted: map[segKey]bool{},
		stop: make(chan struct{}), work: make(chan *seg)}
	p.idle.L = &p.mu
	if err := p.finishDeletions(); err != nil {
		meta.Close()
		return nil, fmt.Errorf("segment: open %s: %w", dir, err)
	}
	if p.conf.SegmentSize, err = p.layout(meta, c.SegmentSize); err != nil {
		meta.Discard() // refused: not even level.dat is rewritten
		return nil, fmt.Errorf("segment: open %s: %w", dir, err)
	}
	for i := 0; i < c.Workers; i++ {
		p.wg.Add(1)
		go p.worker()
	}
	p.wg.Add(1)
	go p.scheduler()
	return p, nil
}

func floorDiv(a, b int32) int32 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func (p *Provider) keyFor(pos world.ChunkPos, dim world.Dimension) (segKey, error) {
	return keyIn(pos, dim, p.conf.SegmentSize)
}

// keyIn is the region that regions size chunks wide put pos in.
func keyIn(pos world.ChunkPos, dim world.Dimension, size int) (segKey, error) {
	id, ok := world.DimensionID(dim)
	if !ok {
		return segKey{}, fmt.Errorf("unknown dimension %v", dim)
	}
	n := int32(size)
	return segKey{dim: int32(id), rx: floorDiv(pos[0], n), rz: floorDiv(pos[1], n)}, nil
}

func (p *Provider) dimDir(dim int32) string { return dimDir(p.dir, dim) }

// dimDir is where the world in root keeps the regions of dimension dim.
func dimDir(root string, dim int32) string {
	return filepath.Join(root, "regions", strconv.Itoa(int(dim)))
}

func (p *Provider) segDir(k segKey) string { return filepath.Join(p.dimDir(k.dim), segName(k)) }

// segName is the name of region k's directory.
func segName(k segKey) string { return fmt.Sprintf("r.%d.%d", k.rx, k.rz) }

func (p *Provider) exists(k segKey) bool {
	_, err := p.conf.FS.List(p.segDir(k))
	return err == nil
}

// acquire returns the open segment of k, pinned until release. Without
// create, a region that does not exist gives leveldb.ErrNotFound.
func (p *Provider) acquire(k segKey, create bool) (*seg, error) {
	checked := create // whether the region is known to exist or may be created
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, blazedb.ErrClosed
		}
		if s, ok := p.segs[k]; ok {
			if s.closing {
				p.mu.Unlock()
				<-s.gone // closed or deleted: look again
				if !create && !p.exists(k) {
					return nil, leveldb.ErrNotFound
				}
				continue
			}
			s.users++
			p.mu.Unlock()
			<-s.ready
			if s.err != nil {
				p.release(s)
				return nil, s.err
			}
			return s, nil
		}
		if !checked {
			// Not open: look on disk (outside the lock) before opening, so a
			// load never creates a region.
			p.mu.Unlock()
			if !p.exists(k) {
				return nil, leveldb.ErrNotFound
			}
			checked = true
			continue
		}
		victims := p.evictLocked(p.conf.MaxOpen - 1)
		s := &seg{key: k, ready: make(chan struct{}), users: 1, gone: make(chan struct{})}
		p.segs[k] = s
		reg := p.reg
		pins := p.pinnedIn(k) // a Pin after this finds s and pins in it itself
		p.mu.Unlock()
		p.closeAll(victims, true)
		s.db, s.err = provider.Config{
			Log: p.conf.Log, Blocks: reg, Durability: p.conf.Durability, Compression: p.conf.Compression,
			CacheBytes: p.conf.CacheBytes, ColumnCacheBytes: p.conf.ColumnCacheBytes, FS: p.conf.FS, History: p.conf.History,
			ExternalMaintenance: true, NoLevelDat: true, // the root world keeps the settings
		}.Open(p.segDir(k))
		if s.err == nil {
			p.eds.note(k, s.db) // before anyone stores; a new one if the open found damage
			p.applyPins(s, pins)
		}
		close(s.ready)
		if s.err != nil {
			p.mu.Lock()
			if p.segs[k] == s {
				delete(p.segs, k)
			}
			close(s.gone)
			p.mu.Unlock()
			return nil, s.err
		}
		return s, nil
	}
}

func (p *Provider) release(s *seg) {
	p.mu.Lock()
	s.users--
	s.lastUse = time.Now()
	p.leftLocked(s)
	p.mu.Unlock()
}

// leftLocked wakes exclusive when a claimed segment's last user has left.
// p.mu must be held.
func (p *Provider) leftLocked(s *seg) {
	if s.closing && s.users == 0 {
		p.idle.Broadcast()
	}
}

// unpin releases a segment the pool worked on: maintenance is not use, so
// it does not keep a segment from going idle.
func (p *Provider) unpin(s *seg) {
	p.mu.Lock()
	s.users--
	p.leftLocked(s)
	p.mu.Unlock()
}

// evictLocked marks idle segments to close, least recently used first,
// until at most keep are open; segments in use or holding pinned columns
// stay open. p.mu must be held; the caller closes them.
func (p *Provider) evictLocked(keep int) []*seg {
	var victims []*seg
	for len(p.segs)-len(victims) > keep {
		var oldest *seg
		for _, s := range p.segs {
			if s.users == 0 && !s.closing && len(p.pins[s.key]) == 0 && (oldest == nil || s.lastUse.Before(oldest.lastUse)) {
				oldest = s
			}
		}
		if oldest == nil {
			break // all in use: the bound is exceeded for now
		}
		oldest.closing = true
		victims = append(victims, oldest)
	}
	return victims
}

// closeAll closes segments marked closing, outside the lock, and takes
// them out of the map. With report, a failed close is reported (as a
// background error) before the segment is gone, so a Sync that waited for
// it finds the error; without, closeAll returns the failures.
func (p *Provider) closeAll(victims []*seg, report bool) error {
	var errs []error
	for _, s := range victims {
		<-s.ready
		if s.db != nil {
			if err := s.db.Close(); err != nil && report {
				p.report(fmt.Errorf("close region %v: %w", s.key, err))
			} else if err != nil {
				errs = append(errs, err)
			}
		}
		p.mu.Lock()
		if p.segs[s.key] == s {
			delete(p.segs, s.key)
			p.noteClosedLocked(s)
		}
		p.noteShipClosedLocked(s)
		close(s.gone)
		p.mu.Unlock()
	}
	return errors.Join(errs...)
}

// LoadColumn reads the column from its region; a region never written
// gives leveldb.ErrNotFound without being created.
func (p *Provider) LoadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error) {
	k, err := p.keyFor(pos, dim)
	if err != nil {
		return nil, err
	}
	s, err := p.acquire(k, false)
	if err != nil {
		return nil, fmt.Errorf("load column %v (%v): %w", pos, dim, err)
	}
	defer p.release(s)
	return s.db.LoadColumn(pos, dim)
}

// StoreColumn writes the column into its region, creating it if needed.
func (p *Provider) StoreColumn(pos world.ChunkPos, dim world.Dimension, col *chunk.Column) error {
	k, err := p.keyFor(pos, dim)
	if err != nil {
		return err
	}
	s, err := p.acquire(k, true)
	if err != nil {
		return fmt.Errorf("store column %v (%v): %w", pos, dim, err)
	}
	defer p.release(s)
	err = s.db.StoreColumn(pos, dim, col)
	p.eds.note(k, s.db)
	return err
}

// SetBlockRegistry sets the registry of every segment, open or to come.
func (p *Provider) SetBlockRegistry(br world.BlockRegistry) {
	p.meta.SetBlockRegistry(br)
	p.mu.Lock()
	p.reg = br
	open, _ := p.pinOpenLocked()
	p.mu.Unlock()
	p.eachPinned(open, func(_ segKey, db *provider.DB) { db.SetBlockRegistry(br) })
}

// pinOpenLocked pins the open segments, so that none closes until
// eachPinned has visited it, and returns them with those being closed.
// p.mu must be held.
func (p *Provider) pinOpenLocked() (open, closing []*seg) {
	for _, s := range p.segs {
		if s.closing {
			closing = append(closing, s)
		} else {
			s.users++
			open = append(open, s)
		}
	}
	return open, closing
}

// eachPinned calls f with the key and database of each segment
// pinOpenLocked returned, once it is open (one whose open failed is
// skipped), and unpins it.
func (p *Provider) eachPinned(open []*seg, f func(segKey, *provider.DB)) {
	for _, s := range open {
		<-s.ready
		if s.db != nil {
			f(s.key, s.db)
		}
		p.unpin(s)
	}
}

// Settings, SaveSettings and player spawns live in the root world.
func (p *Provider) Settings() *world.Settings      { return p.meta.Settings() }
func (p *Provider) SaveSettings(s *world.Settings) { p.meta.SaveSettings(s) }
func (p *Provider) LoadPlayerSpawnPosition(id uuid.UUID) (cube.Pos, bool, error) {
	return p.meta.LoadPlayerSpawnPosition(id)
}
func (p *Provider) SavePlayerSpawnPosition(id uuid.UUID, pos cube.Pos) error {
	return p.meta.SavePlayerSpawnPosition(id, pos)
}

// OpenSegments reports how many segments are open.
func (p *Provider) OpenSegments() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.segs)
}

// Sync makes every store and player spawn that returned before it durable,
// whatever the durability mode: it syncs the root world and every open
// region, and waits for the regions being closed, as a close makes a
// region durable (one closed before is durable already). It returns every
// failure among them, and background errors not yet reported.
func (p *Provider) Sync() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return fmt.Errorf("segment: sync: %w", blazedb.ErrClosed)
	}
	open, closing := p.pinOpenLocked() // none closes under the sync
	p.mu.Unlock()
	var errs []error
	p.eachPinned(open, func(k segKey, db *provider.DB) {
		if err := db.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("region %v: %w", k, err))
		}
	})
	for _, s := range closing {
		<-s.gone // a close that failed is reported by now: see closeAll
	}
	if err := p.meta.Sync(); err != nil {
		errs = append(errs, fmt.Errorf("root world: %w", err))
	}
	if err := errors.Join(append(errs, p.takeBackgroundErr())...); err != nil {
		return fmt.Errorf("segment: sync: %w", err)
	}
	return nil
}

// Close stops the pool, closes every segment and the root world, and
// returns every error met, including background ones. It is idempotent.
func (p *Provider) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	var all []*seg
	for _, s := range p.segs {
		if !s.closing {
			s.closing = true
			all = append(all, s)
		}
	}
	p.mu.Unlock()
	err := p.closeAll(all, false)
	return errors.Join(err, p.meta.Close(), p.takeBackgroundErr())
}
