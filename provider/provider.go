package provider

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/dragonfly/server/world/mcdb/leveldat"
	"github.com/df-mc/goleveldb/leveldb"
	"github.com/google/uuid"
)

// DB is Blaze's world.Provider: set it as a Dragonfly server's
// WorldProvider. One DB serves all three dimensions. It is safe for
// concurrent use: the worlds of different dimensions call it at once, beside
// its background syncing and compaction.
//
// Ownership: LoadColumn returns a column the caller owns alone (never one
// that is cached or handed to anyone else); StoreColumn has taken its own
// snapshot of the column when it returns, so the caller may go on mutating it.
type DB struct {
	conf Config
	dir  string
	eng  *blazedb.DB
	dict *dictionary
	// dictRestored lists the dictionary entries taken from dictionary.dat
	// at Open; never modified after.
	dictRestored []int32
	cols         *columnCache

	regMu sync.Mutex
	reg   world.BlockRegistry

	setMu   sync.Mutex // guards ldat, set and writing level.dat
	ldat    *leveldat.Data
	set     *world.Settings
	saveErr error // a failed SaveSettings, returned by Close

	qMu        sync.Mutex
	quarantine map[blazedb.Key]error // columns that failed to load: never overwritten

	fill     *fillQueue // columns for the snapshot worker
	fillStop chan struct{}
	fillDone sync.WaitGroup
	lastLoad atomic.Int64 // when the last LoadColumn returned (nanoseconds since born)
	born     time.Time
	quiet    atomic.Int64 // the pause in loads (a time.Duration) the snapshot worker waits for; tests change it

	closed atomic.Bool
}

var _ world.Provider = (*DB)(nil)

// engineDir is where the engine's files live inside a world directory,
// beside level.dat.
const engineDir = "blaze"

// Open opens (or creates) the world in dir: dir/level.dat and the engine in
// dir/blaze. A directory holding a LevelDB world is refused with
// ErrLevelDBWorld: convert it first.
func (conf Config) Open(dir string) (*DB, error) {
	conf = conf.withDefaults()
	db, err := conf.open(dir)
	if err != nil {
		return nil, fmt.Errorf("provider: open %s: %w", dir, err)
	}
	return db, nil
}

func (conf Config) open(dir string) (*DB, error) {
	if _, _, err := blazedb.Compress(nil, conf.Compression, nil); err != nil {
		return nil, err
	}
	fs := conf.FS
	if !conf.ReadOnly {
		if err := fs.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	names, err := fs.List(dir)
	if err != nil {
		return nil, err
	}
	if slices.Contains(names, "db") && !slices.Contains(names, engineDir) {
		return nil, fmt.Errorf("%w: %s/db is LevelDB; convert it with `blaze convert`", ErrLevelDBWorld, dir)
	}
	var ldat *leveldat.Data
	if conf.NoLevelDat {
		ldat = &leveldat.Data{}
		ldat.FillDefault()
	} else if ldat, err = readLevelDat(fs, dir); err != nil {
		return nil, fmt.Errorf("read level.dat: %w", err)
	}
	eng, err := blazedb.Open(filepath.Join(dir, engineDir), conf.engineOptions())
	if err != nil {
		return nil, err
	}
	db := &DB{conf: conf, dir: dir, eng: eng, dict: newDictionary(), ldat: ldat, quarantine: map[blazedb.Key]error{}, born: time.Now()}
	db.quiet.Store(int64(snapshotQuiet))
	if conf.ColumnCacheBytes > 0 {
		db.cols = newColumnCache(conf.ColumnCacheBytes)
	}
	if err := db.loadDictionary(names); err != nil {
		eng.Close()
		return nil, err
	}
	db.SetBlockRegistry(conf.Blocks)
	db.set = ldat.Settings()
	if !slices.Contains(names, levelDatName) && !conf.ReadOnly && !conf.NoLevelDat {
		if err := writeLevelDat(fs, dir, ldat); err != nil {
			eng.Close()
			return nil, fmt.Errorf("write level.dat: %w", err)
		}
	}
	db.fill, db.fillStop = newFillQueue(int(max(conf.ColumnCacheBytes/pendingCost, 1))), make(chan struct{})
	if !conf.ExternalMaintenance {
		db.fillDone.Add(1)
		go db.snapshotWorker()
	}
	return db, nil
}

// loadDictionary reads the block dictionary, taking what the engine does
// not hold intact from dictionary.dat (dictcopy.go) and, unless read-only,
// writing it back to the engine. It writes dictionary.dat when there is
// none, or when it was read and is not current; Close checks the rest.
// names lists the world's directory.
func (db *DB) loadDictionary(names []string) error {
	fs := db.conf.FS
	readCopy := func() (map[int32][]byte, error) {
		cp, err := readDictCopy(fs, db.dir)
		if err != nil {
			db.conf.Log.Error("the copy of the block dictionary does not read", "file", filepath.Join(db.dir, dictCopyName), "err", err)
		}
		return cp, err
	}
	restored, err := db.dict.load(db.eng, readCopy, len(db.eng.Recovery().Corrupt) > 0)
	if err != nil {
		return err
	}
	if len(restored) > 0 {
		db.dictRestored = restored
		db.conf.Log.Error("block dictionary entries did not read from the engine; taken from its copy", "file", filepath.Join(db.dir, dictCopyName), "ids", restored)
		if !db.conf.ReadOnly {
			var b blazedb.Batch
			for _, id := range restored {
				b.PutNamed(dictPrefix+strconv.FormatUint(uint64(id), 16), db.dict.entries[id].raw)
			}
			if err := db.eng.Apply(&b); err != nil {
				return fmt.Errorf("write back dictionary entries: %w", err)
			}
			if err := db.eng.Sync(); err != nil {
				return fmt.Errorf("write back dictionary entries: %w", err)
			}
		}
	}
	if !slices.Contains(names, dictCopyName) {
		db.dict.copied = copyStale
	}
	if db.conf.ReadOnly || db.dict.copied == copyUnread || !db.dict.needsCopy(fs, db.dir) {
		return nil
	}
	return db.dict.writeCopy(fs, db.dir)
}

// DictionaryRestored returns the ids of the block dictionary entries that
// did not read from the engine when the world opened (damaged, or lost with
// a stretch of the log that recovery skipped) and were taken from
// dictionary.dat: written back to the engine, unless the world was opened
// read-only. Empty when the dictionary read whole.
func (db *DB) DictionaryRestored() []int32 { return slices.Clone(db.dictRestored) }

// DictionaryCopyCurrent reports whether dictionary.dat holds exactly the
// block dictionary's persisted entries (or there are none). A copy that is
// not current is written again when the world next closes after a
// read-write open; for tools that check a world.
func (db *DB) DictionaryCopyCurrent() bool { return !db.dict.needsCopy(db.conf.FS, db.dir) }

// Repair mends damaged records in the world in dir, which must not be
// open (see blazedb.Repair). First the block dictionary: entries that do
// not read are written back from dictionary.dat, as opening the world
// does. Then the engine: a column whose newest record is damaged goes back
// to its newest intact version, or is deleted when none is left, and the
// world generates it again when it is next loaded. Column records name
// block states by dictionary ids, which are never reused, so an older
// record still reads. A dictionary entry that neither the engine nor
// dictionary.dat holds intact is deleted: the columns using it then fail
// to load with ErrUnknownState. level.dat is not touched.
func (conf Config) Repair(dir string) (*RepairReport, error) {
	conf = conf.withDefaults()
	rep := &RepairReport{}
	var err error
	if conf.Exists(dir) {
		// Opening restores the dictionary. When it cannot (an entry
		// neither copy holds), the engine's repair deletes the entry.
		c := Config{Log: conf.Log, FS: conf.FS, Durability: conf.Durability, NoLevelDat: true,
			ExternalMaintenance: true, ColumnCacheBytes: -1, CacheBytes: -1}
		if db, oerr := c.withDefaults().open(dir); oerr == nil {
			rep.Dictionary = db.DictionaryRestored()
			if err = db.Close(); err != nil {
				return rep, fmt.Errorf("provider: repair %s: %w", dir, err)
			}
		} else if !errors.Is(oerr, blazedb.ErrCorrupt) {
			return rep, fmt.Errorf("provider: repair %s: %w", dir, oerr)
		}
	}
	rep.RepairReport, err = blazedb.Repair(filepath.Join(dir, engineDir), conf.engineOptions())
	if err != nil {
		return rep, fmt.Errorf("provider: repair %s: %w", dir, err)
	}
	return rep, nil
}

// Exists reports whether dir holds a Blaze world (its engine's log): for
// tools that must refuse a directory where Open would make a new world.
// A segmented world's root holds one too (its settings and players).
func (conf Config) Exists(dir string) bool {
	conf = conf.withDefaults()
	return blazedb.Exists(filepath.Join(dir, engineDir), conf.engineOptions())
}

// RepairReport says what Repair did: the engine's report, and the block
// dictionary entries written back from dictionary.dat.
type RepairReport struct {
	*blazedb.RepairReport
	Dictionary []int32
}

// Place is where a column is stored.
type Place struct {
	Pos world.ChunkPos
	Dim world.Dimension
}

// Columns returns where every stored column is, dimension by dimension
// (overworld, nether, end), each in Morton order, so that neighbours come
// together: for tools that visit a whole world (check, convert). Safe for
// concurrent use; a column stored meanwhile may be left out.
func (db *DB) Columns() ([]Place, error) {
	var out []Place
	for id := range 3 {
		dim, _ := world.DimensionByID(id)
		keys, err := db.eng.Keys(blazedb.Area{Dim: int32(id), MinX: math.MinInt32, MinZ: math.MinInt32, MaxX: math.MaxInt32, MaxZ: math.MaxInt32})
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			out = append(out, Place{Pos: world.ChunkPos{k.X, k.Z}, Dim: dim})
		}
	}
	return out, nil
}

// Engine returns the storage engine under the provider, for tools (the
// converter, prefetching, statistics). Writing to it directly bypasses the
// column codec.
func (db *DB) Engine() *blazedb.DB { return db.eng }

// SetBlockRegistry sets the registry columns are encoded and decoded with.
// Every World calls it when created; calls with the registry already in use
// change nothing. A new registry resolves the block dictionary again, so a
// world saved by another Dragonfly version loads with the right blocks.
func (db *DB) SetBlockRegistry(br world.BlockRegistry) {
	if br == nil {
		br = world.DefaultBlockRegistry
	}
	db.regMu.Lock()
	defer db.regMu.Unlock()
	if db.reg == br {
		return
	}
	br.Finalize()
	db.reg = br
	db.dict.setRegistry(br)
	if db.cols != nil {
		db.cols = newColumnCache(db.conf.ColumnCacheBytes) // decoded with the old ids
	}
	db.qMu.Lock()
	clear(db.quarantine)
	db.qMu.Unlock()
}

func key(pos world.ChunkPos, dim world.Dimension) (blazedb.Key, error) {
	id, ok := world.DimensionID(dim)
	if !ok {
		return blazedb.Key{}, fmt.Errorf("unknown dimension %v", dim)
	}
	return blazedb.Key{Dim: int32(id), X: pos[0], Z: pos[1]}, nil
}

// LoadColumn reads the column at pos in dim. A missing column gives an
// error satisfying errors.Is(err, leveldb.ErrNotFound); a damaged one an
// error wrapping blazedb.ErrCorrupt (naming the offset) or ErrColumnCorrupt;
// one holding a block state the registry does not know ErrUnknownState. The
// caller owns the returned column.
func (db *DB) LoadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error) {
	col, err := db.loadColumn(pos, dim)
	db.lastLoad.Store(int64(time.Since(db.born)))
	if err != nil {
		return nil, fmt.Errorf("load column %v (%v): %w", pos, dim, err)
	}
	return col, nil
}

func (db *DB) loadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error) {
	k, err := key(pos, dim)
	if err != nil {
		return nil, err
	}
	if db.closed.Load() {
		return nil, blazedb.ErrClosed
	}
	cols, _ := db.columns()
	if s, ready, ok := cols.take(k); ok {
		if ready != nil {
			return ready, nil
		}
		col, err := s.column()
		if err == nil {
			return col, nil
		}
		// Cannot happen (the provider wrote those biomes); the engine's copy
		// is the authority, so read that.
		db.conf.Log.Error("cached column unusable; reading it again", "X", pos[0], "Z", pos[1], "dimension", fmt.Sprint(dim), "err", err)
		cols.remove(k)
	}
	// The record is read into a pooled buffer: the decoded column shares
	// nothing with it, and the snapshot worker reads it again for itself.
	rp := recBufs.Get().(*[]byte)
	rec, err := db.eng.GetAppend(k, (*rp)[:0])
	var col *chunk.Column
	if err == nil {
		col, err = db.dict.decodeColumn(rec, dim.Range())
		if cap(rec) <= maxPooledRecord {
			*rp = rec
		}
	}
	recBufs.Put(rp)
	switch {
	case errors.Is(err, blazedb.ErrNotFound):
		return nil, leveldb.ErrNotFound
	case errors.Is(err, ErrUnknownState):
		db.qMu.Lock()
		db.quarantine[k] = err
		db.qMu.Unlock()
		db.conf.Log.Error("column holds a block state this registry does not know; it will not be overwritten", "X", pos[0], "Z", pos[1], "dimension", fmt.Sprint(dim), "err", err)
		return nil, err
	case err != nil:
		return nil, err
	}
	if cols != nil {
		// The caller owns col: the cache's own snapshot is decoded again on
		// the snapshot worker, off the world's tick.
		db.fill.push(fillJob{k: k, rng: dim.Range(), cols: cols})
	}
	return col, nil
}

// recBufs holds the buffers cold loads read records into; maxPooledRecord
// bounds what is kept (a damaged record may declare anything the engine
// allows).
var recBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

const maxPooledRecord = 1 << 20

// columns returns the column cache and the registry it was built for.
func (db *DB) columns() (*columnCache, chunk.BlockRegistry) {
	db.regMu.Lock()
	defer db.regMu.Unlock()
	return db.cols, db.reg
}

// Maintain does the provider's and the engine's background work in the
// caller's goroutine, for a DB opened with Config.ExternalMaintenance: it
// caches recently loaded columns, then runs blazedb.DB.Maintain.
func (db *DB) Maintain() error {
	for job, ok := db.fill.pop(); ok; job, ok = db.fill.pop() {
		db.snapshot(job)
	}
	return db.eng.Maintain()
}

// StoreColumn stores col at pos in dim. Storing a column identical to the
// stored one appends nothing. The column is encoded, and what the cache
// keeps of it copied, before StoreColumn returns; the caller may mutate it
// afterwards.
func (db *DB) StoreColumn(pos world.ChunkPos, dim world.Dimension, col *chunk.Column) error {
	if err := db.storeColumn(pos, dim, col); err != nil {
		return fmt.Errorf("store column %v (%v): %w", pos, dim, err)
	}
	return nil
}

func (db *DB) storeColumn(pos world.ChunkPos, dim world.Dimension, col *chunk.Column) error {
	k, err := key(pos, dim)
	if err != nil {
		return err
	}
	if db.conf.ReadOnly {
		return blazedb.ErrReadOnly
	}
	if db.closed.Load() {
		return blazedb.ErrClosed
	}
	db.qMu.Lock()
	qerr := db.quarantine[k]
	db.qMu.Unlock()
	if qerr != nil {
		return fmt.Errorf("refusing to overwrite a column that failed to load: %w", qerr)
	}
	cols, br := db.columns()
	prev, _ := cols.peek(k)
	enc, err := db.dict.encodeColumn(col, prev, db.conf.Compression)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	if prev != nil && len(enc.fresh) == 0 && bytes.Equal(prev.rec, enc.rec) {
		return nil // unchanged: nothing to write
	}
	cols.remove(k)
	if len(enc.fresh) == 0 {
		err = db.eng.PutShared(k, enc.rec) // enc.rec is never written again
	} else {
		// New block states go in the same atomic batch as the first column
		// that uses them.
		var b blazedb.Batch
		db.dict.mu.Lock()
		ids, uerr := db.dict.unpersisted(&b, enc.fresh)
		db.dict.mu.Unlock()
		if uerr != nil {
			return uerr
		}
		b.Put(k, enc.rec)
		if err = db.eng.Apply(&b); err == nil {
			db.dict.markPersisted(ids)
		}
	}
	if err != nil {
		return err
	}
	snap := &snapshot{key: k, rng: col.Chunk.Range(), br: br, rec: enc.rec, lay: enc.lay, subs: enc.subs, biomes: enc.biomes,
		tick: col.Tick, scheduled: slices.Clone(col.ScheduledBlocks)}
	if enc.sameNBT {
		// Snapshots are never modified: the new one shares prev's copies.
		snap.blockEntities, snap.entities = prev.blockEntities, prev.entities
	} else {
		snap.blockEntities, snap.entities = cloneBlockEntities(col.BlockEntities), cloneEntities(col.Entities)
	}
	cols.put(snap)
	return nil
}

// Prefetch reads the column at pos into the column cache, decoded, so the
// next LoadColumn of it is hot. It also keeps a second, ready copy that the
// first LoadColumn hands out as it is (it is a deep copy no one else has
// seen), so that load costs no decode and no clone: the work is done here,
// off the World's tick. A column already cached gets only the ready copy.
// A store of the column discards that copy; the cache charges it to its
// budget until it is taken. It reports whether it did any work: a missing
// column, or a cached one with a ready copy, costs nothing. Safe to call
// from any goroutine beside the World's own calls; meant for columns the
// World does not hold (a copy of one it holds is wasted until it next
// loads it).
func (db *DB) Prefetch(pos world.ChunkPos, dim world.Dimension) (bool, error) {
	k, err := key(pos, dim)
	if err != nil {
		return false, err
	}
	cols, _ := db.columns()
	if cols == nil {
		return false, nil
	}
	if s, ok := cols.peek(k); ok {
		// Cached: give it a ready copy unless it has one.
		if cols.hasReady(s) {
			return false, nil
		}
		ready, err := s.column()
		if err != nil {
			return false, fmt.Errorf("prefetch column %v (%v): %w", pos, dim, err)
		}
		if !cols.giveReady(s, ready) {
			return false, nil // stored or evicted meanwhile, or given one
		}
		cols.readyMade.Add(1)
		return true, nil
	}
	job := fillJob{k: k, rng: dim.Range(), cols: cols}
	err = db.readRecord(&job)
	if errors.Is(err, blazedb.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("prefetch column %v (%v): %w", pos, dim, err)
	}
	if s := db.decodeSnapshot(job); s != nil {
		if ready, err := s.column(); err == nil {
			s.ready, s.readyCost = ready, int64(s.lay.rawSize)
			cols.readyMade.Add(1)
		}
		db.install(job, s)
	}
	return true, nil
}

// Pin keeps the column at pos in the cache (loading it if needed) until
// as many Unpin calls; pinned columns are never evicted and may hold the
// cache over its budget.
func (db *DB) Pin(pos world.ChunkPos, dim world.Dimension) error {
	k, err := key(pos, dim)
	if err != nil {
		return err
	}
	cols, _ := db.columns()
	cols.pin(k, 1)
	_, err = db.Prefetch(pos, dim)
	return err
}

// Unpin undoes one Pin.
func (db *DB) Unpin(pos world.ChunkPos, dim world.Dimension) {
	if k, err := key(pos, dim); err == nil {
		cols, _ := db.columns()
		cols.pin(k, -1)
	}
}

// CacheStats reports hot and cold LoadColumn calls: those served from the
// column cache and those that read the engine.
func (db *DB) CacheStats() (hits, misses int64) {
	cols, _ := db.columns()
	if cols == nil {
		return 0, 0
	}
	return cols.hits.Load(), cols.misses.Load()
}

// ReadyStats reports how many ready copies Prefetch made and how many a
// LoadColumn handed out; the rest were wasted (the column was stored,
// evicted, or never loaded).
func (db *DB) ReadyStats() (made, taken int64) {
	cols, _ := db.columns()
	if cols == nil {
		return 0, 0
	}
	return cols.readyMade.Load(), cols.readyTaken.Load()
}

// Settings returns the world settings read from level.dat. Every call
// returns the same pointer, which all dimensions share.
func (db *DB) Settings() *world.Settings { return db.set }

// SaveSettings writes s to level.dat, replacing the file atomically. A
// failure is logged and returned by Close.
func (db *DB) SaveSettings(s *world.Settings) {
	db.setMu.Lock()
	defer db.setMu.Unlock()
	db.ldat.PutSettings(s)
	if db.conf.ReadOnly || db.conf.NoLevelDat {
		return
	}
	if err := writeLevelDat(db.conf.FS, db.dir, db.ldat); err != nil {
		db.conf.Log.Error("save settings: "+err.Error(), "dir", db.dir)
		db.saveErr = errors.Join(db.saveErr, fmt.Errorf("save settings: %w", err))
	}
}

// Player spawn records live in the engine beside the chunks, with the same
// durability:
//
//	name  "player/" + UUID
//	value version byte (1), then x, y, z as int32 LE (13 bytes)
//
// Part of the on-disk format.
const (
	playerPrefix  = "player/"
	playerVersion = 1
)

// LoadPlayerSpawnPosition returns the spawn saved for id, if any.
func (db *DB) LoadPlayerSpawnPosition(id uuid.UUID) (cube.Pos, bool, error) {
	v, err := db.eng.GetNamed(playerPrefix + id.String())
	if errors.Is(err, blazedb.ErrNotFound) {
		return cube.Pos{}, false, nil
	}
	if err != nil {
		return cube.Pos{}, false, fmt.Errorf("load spawn of player %v: %w", id, err)
	}
	if len(v) != 13 || v[0] != playerVersion {
		return cube.Pos{}, true, fmt.Errorf("load spawn of player %v: %w: record of %d bytes", id, ErrColumnCorrupt, len(v))
	}
	return cube.Pos{
		int(int32(binary.LittleEndian.Uint32(v[1:]))),
		int(int32(binary.LittleEndian.Uint32(v[5:]))),
		int(int32(binary.LittleEndian.Uint32(v[9:]))),
	}, true, nil
}

// PlayerSpawn is a stored player spawn, as PlayerSpawns reads it.
type PlayerSpawn struct {
	Name string    // the id as stored: a UUID, unless the record is bad
	ID   uuid.UUID // Name parsed
	Pos  cube.Pos
	// Err is why it could not be read: a name that is no UUID, or damage
	// (wrapping ErrColumnCorrupt or blazedb.ErrCorrupt).
	Err error
}

// PlayerSpawns reads every stored player spawn, for tools that visit a
// whole world (check, convert): each one it cannot read comes with the
// reason rather than stopping it. Safe for concurrent use; a spawn saved
// meanwhile may be left out.
func (db *DB) PlayerSpawns() ([]PlayerSpawn, error) {
	names, err := db.eng.Names()
	if err != nil {
		return nil, err
	}
	var out []PlayerSpawn
	for _, n := range names {
		s, ok := strings.CutPrefix(n, playerPrefix)
		if !ok {
			continue
		}
		p := PlayerSpawn{Name: s}
		var err error
		if p.ID, err = uuid.Parse(s); err != nil || p.ID.String() != s {
			// Blaze writes the canonical form only; another would not be
			// found by its UUID.
			p.Err = fmt.Errorf("%w: player record %q is not named by a UUID", ErrColumnCorrupt, n)
		} else if p.Pos, ok, p.Err = db.LoadPlayerSpawnPosition(p.ID); !ok && p.Err == nil {
			continue // removed meanwhile
		}
		out = append(out, p)
	}
	return out, nil
}

// SavePlayerSpawnPosition saves the spawn of player id.
func (db *DB) SavePlayerSpawnPosition(id uuid.UUID, pos cube.Pos) error {
	v := []byte{playerVersion}
	for _, c := range pos {
		v = binary.LittleEndian.AppendUint32(v, uint32(int32(c)))
	}
	if err := db.eng.PutNamed(playerPrefix+id.String(), v); err != nil {
		return fmt.Errorf("save spawn of player %v: %w", id, err)
	}
	return nil
}

// Close writes level.dat, then syncs and closes the engine. It returns every
// error met, including a failed SaveSettings. It is idempotent.
func (db *DB) Close() error { return db.close(true) }

// Discard closes the world without making anything durable (see
// blazedb.DB.Discard): for a world about to be deleted.
func (db *DB) Discard() error { return db.close(false) }

func (db *DB) close(persist bool) error {
	if !db.closed.CompareAndSwap(false, true) {
		return nil
	}
	close(db.fillStop)
	db.fillDone.Wait()
	var errs []error
	db.setMu.Lock()
	if db.saveErr != nil {
		errs = append(errs, db.saveErr)
	}
	if !db.conf.ReadOnly && !db.conf.NoLevelDat && persist {
		db.ldat.LastPlayed = time.Now().Unix()
		if err := writeLevelDat(db.conf.FS, db.dir, db.ldat); err != nil {
			errs = append(errs, fmt.Errorf("write level.dat: %w", err))
		}
	}
	db.setMu.Unlock()
	closeEngine := db.eng.Close
	if !persist {
		closeEngine = db.eng.Discard
	}
	if err := closeEngine(); err != nil {
		errs = append(errs, err)
	} else if persist && !db.conf.ReadOnly && db.dict.needsCopy(db.conf.FS, db.dir) {
		// After the engine's close has made the new entries durable: the
		// copy never holds an entry the log might still lose.
		if err := db.dict.writeCopy(db.conf.FS, db.dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("provider: close %s: %w", db.dir, err)
	}
	return nil
}
