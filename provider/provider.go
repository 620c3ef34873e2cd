package provider

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider/internal/rawchunk"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/dragonfly/server/world/mcdb/leveldat"
	"github.com/df-mc/goleveldb/leveldb"
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
	// copier keeps dictionary.dat current while the world is open.
	copier *copyKeeper
	// dictRestored lists the dictionary entries taken from dictionary.dat
	// at Open; never modified after.
	dictRestored []int32
	cols         *columnCache

	regMu sync.Mutex
	reg   world.BlockRegistry
	// regGen counts the registries set, each added once the dictionary
	// resolves with it: a load that reads it before decoding decodes with
	// that registry or a later one (quarantine).
	regGen atomic.Uint64

	setMu sync.Mutex // guards ldat, set and writing level.dat
	ldat  *leveldat.Data
	// settingsRec is what Open found of level.dat and its copy; never
	// modified after.
	settingsRec SettingsRecovery
	set         *world.Settings
	saveErr     error // a failed SaveSettings, returned by Close

	quarantine *quarantine // columns that failed to load: never overwritten while unreadable

	fill     *fillQueue  // columns for the snapshot worker
	store    *storeQueue // stores for the store worker (storequeue.go, storeworker.go); nil when stores write at once
	fillStop chan struct{}
	fillDone sync.WaitGroup
	lastLoad atomic.Int64 // when the last LoadColumn returned (nanoseconds since born)
	born     time.Time
	quiet    atomic.Int64 // the pause in loads (a time.Duration) the snapshot worker waits for; tests change it

	backupMu sync.Mutex // one Backup at a time

	views viewPins // the snapshots open Views read (history.go)

	// editMu is held across the first column write after Open, which
	// replaces the edition; edited is set once it has.
	editMu  sync.Mutex
	edited  atomic.Bool
	edition atomic.Pointer[Edition]

	ckpt checkpointGate // routes writes into a checkpoint's batch (checkpoint.go)
	// unreadPlayers holds the UUIDs of players whose stored data did not
	// read: never overwritten while the DB is open (playerdata.go).
	unreadPlayers sync.Map

	closed atomic.Bool
}

var _ world.Provider = (*DB)(nil)

// engineDir is where the engine's files live inside a world directory,
// beside level.dat.
const engineDir = "blaze"

// segmentRegions is where a segmented world (package segment) keeps its
// regions, beside its root world's files; segment's tests check that the
// two packages agree.
const segmentRegions = "regions"

// Open opens (or creates) the world in dir: dir/level.dat and the engine in
// dir/blaze. A directory holding a LevelDB world, or that is a LevelDB
// database folder itself (a world's db/), is refused with ErrLevelDBWorld:
// convert the world first.
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
	if !conf.Packing.valid() {
		return nil, fmt.Errorf("%w: packing %d", blazedb.ErrInvalidOptions, uint8(conf.Packing))
	}
	fs := conf.FS
	names, err := fs.List(dir)
	if errors.Is(err, vfs.ErrNotExist) && !conf.ReadOnly {
		err = vfs.MkdirAll(fs, dir)
	}
	if err != nil {
		return nil, err
	}
	if manifest, ok := levelDBFolder(names); ok {
		parent := filepath.Dir(filepath.Clean(dir))
		return nil, fmt.Errorf("%w: %s is the database folder of a LevelDB world (it holds CURRENT and %s); the world is its parent %s: convert that with `blaze convert %s NEW`", ErrLevelDBWorld, dir, manifest, parent, parent)
	}
	if slices.Contains(names, "db") && !slices.Contains(names, engineDir) {
		// Dragonfly's server.UserConfig makes an empty one when its
		// World.SaveData is left on (the default): say so, since convert
		// would be the wrong advice then.
		return nil, fmt.Errorf("%w: %s/db is LevelDB; convert it with `blaze convert`, or, if Dragonfly's UserConfig made it, set World.SaveData = false before UserConfig.Config", ErrLevelDBWorld, dir)
	}
	if slices.Contains(names, segmentRegions) && !conf.SegmentRoot {
		return nil, fmt.Errorf("%w: %s/%s holds its chunks; open it with segment.Config", ErrSegmentedWorld, dir, segmentRegions)
	}
	var sr settingsRead
	if conf.NoLevelDat {
		sr.data = &leveldat.Data{}
		sr.data.FillDefault()
	} else if sr, err = conf.readSettings(dir); err != nil {
		return nil, fmt.Errorf("read level.dat: %w", err)
	}
	ldat := sr.data
	eng, err := blazedb.Open(filepath.Join(dir, engineDir), conf.engineOptions())
	if err != nil {
		return nil, err
	}
	db := &DB{conf: conf, dir: dir, eng: eng, dict: newDictionary(), copier: newCopyKeeper(), ldat: ldat, settingsRec: sr.rec, quarantine: newQuarantine(), born: time.Now()}
	db.quiet.Store(int64(snapshotQuiet))
	if _, err := rawchunk.Get(); err != nil {
		// Every column still loads and stores, through Dragonfly's own
		// decoder and encoders, only slower: a Dragonfly upgrade changed
		// what the fast path relies on (docs/PROVIDER.md).
		conf.Log.Warn("blaze: fast chunk building is off, columns go through Dragonfly's decoder", "reason", err)
	}
	if conf.ColumnCacheBytes > 0 {
		db.cols = newColumnCache(conf.ColumnCacheBytes)
	}
	if err := db.loadDictionary(names); err != nil {
		eng.Close()
		return nil, err
	}
	ed, renewed, err := openEdition(eng, conf.ReadOnly)
	if err != nil {
		eng.Close()
		return nil, err
	}
	db.edition.Store(&ed)
	db.edited.Store(renewed)
	db.SetBlockRegistry(conf.Blocks)
	db.set = ldat.Settings()
	if sr.rewrite && !conf.ReadOnly && !conf.NoLevelDat {
		write := func() error { return writeLevelDat(fs, dir, ldat) }
		if sr.raw != nil {
			// Only the copy is missing or damaged: level.dat keeps its
			// bytes, fields Dragonfly does not know included.
			write = func() error { return writeLevelCopy(fs, dir, sr.raw) }
		}
		if err := write(); err != nil {
			eng.Close()
			return nil, fmt.Errorf("write level.dat: %w", err)
		}
	}
	db.fill, db.fillStop = newFillQueue(int(max(conf.ColumnCacheBytes/pendingCost, 1))), make(chan struct{})
	if !conf.ExternalMaintenance {
		db.fillDone.Add(1)
		go db.snapshotWorker()
		if !conf.ReadOnly && (conf.Durability == blazedb.DurabilityBalanced || conf.Durability == blazedb.DurabilityFast) {
			db.store = newStoreQueue(storeQueueBytes, storeQueueAge)
			db.fillDone.Add(1)
			go db.storeWorker()
		}
		if !conf.ReadOnly {
			db.fillDone.Add(1)
			go db.copyWorker()
		}
	}
	return db, nil
}

// levelDBFolder reports whether a directory holding names is a LevelDB
// database itself (a world's db/ folder), and names its manifest: LevelDB
// keeps a CURRENT file naming the live MANIFEST-NNNNNN. Blaze's own
// directories never hold a MANIFEST (an arena's overlay holds a CURRENT of
// its own), so the pair is LevelDB's alone.
func levelDBFolder(names []string) (manifest string, ok bool) {
	if !slices.Contains(names, "CURRENT") {
		return "", false
	}
	for _, n := range names {
		if strings.HasPrefix(n, "MANIFEST-") {
			return n, true
		}
	}
	return "", false
}

// Exists reports whether dir holds a Blaze world (its engine's log): for
// tools that must refuse a directory where Open would make a new world.
// A segmented world's root holds one too (its settings and players).
func (conf Config) Exists(dir string) bool {
	conf = conf.withDefaults()
	return blazedb.Exists(filepath.Join(dir, engineDir), conf.engineOptions())
}

// Place is where a column is stored: a plain value, safe to copy and to use
// from any goroutine.
type Place struct {
	Pos world.ChunkPos
	Dim world.Dimension
}

// Columns returns where every stored column is, dimension by dimension
// (overworld, nether, end), each in Morton order, so that neighbours come
// together: for tools that visit a whole world (check, convert). Safe for
// concurrent use; a column stored meanwhile may be left out.
func (db *DB) Columns() ([]Place, error) {
	if err := db.flushStores(); err != nil {
		return nil, err
	}
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
	same := db.reg == br
	db.regMu.Unlock()
	if !same {
		// Queued columns hold runtime ids of the registry in use.
		db.store.wait()
	}
	db.regMu.Lock()
	defer db.regMu.Unlock()
	if db.reg == br {
		return
	}
	br.Finalize()
	db.reg = br
	db.dict.setRegistry(br)
	db.regGen.Add(1)
	if db.cols != nil {
		db.cols = newColumnCache(db.conf.ColumnCacheBytes) // decoded with the old ids
	}
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
// error wrapping blazedb.ErrCorrupt and a CorruptionError naming the
// column (and ErrColumnCorrupt when the record reads and does not decode);
// one holding a block state the registry does not know ErrUnknownState. The
// caller owns the returned column.
func (db *DB) LoadColumn(pos world.ChunkPos, dim world.Dimension) (*chunk.Column, error) {
	col, err := db.loadColumn(pos, dim)
	db.lastLoad.Store(int64(time.Since(db.born)))
	if err != nil {
		return nil, fmt.Errorf("load column %v (%v): %w", pos, dim, columnCorruption(pos, dim, err))
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
	if s := db.store.find(k); s != nil {
		if cols != nil {
			cols.hits.Add(1) // served from memory
		}
		return s.column() // read your writes: a store not yet written
	}
	if s, ready, ok := cols.take(k); ok {
		if ready != nil {
			return ready, nil
		}
		col, err := s.column()
		if err == nil {
			cols.built(s)
			return col, nil
		}
		// Cannot happen (the provider wrote those biomes); the engine's copy
		// is the authority, so read that.
		db.conf.Log.Error("cached column unusable; reading it again", "X", pos[0], "Z", pos[1], "dimension", fmt.Sprint(dim), "err", err)
		cols.remove(k)
	}
	// The record is read into a pooled buffer: the decoded column shares
	// nothing with it, and the snapshot worker reads it again for itself.
	gen := db.regGen.Load() // before the decode: see quarantine
	rp := recBufs.Get().(*[]byte)
	rec, err := db.eng.GetAppend(k, (*rp)[:0])
	var col *chunk.Column
	if err == nil {
		col, err = db.dict.codec.DecodeColumn(rec, dim.Range())
		if cap(rec) <= maxPooledRecord {
			*rp = rec
		}
	}
	recBufs.Put(rp)
	switch {
	case errors.Is(err, blazedb.ErrNotFound):
		return nil, leveldb.ErrNotFound
	case errors.Is(err, ErrUnknownState):
		db.quarantine.add(k, err, gen)
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

// Sync makes every store and player spawn that returned before it durable,
// whatever the durability mode (blazedb.DB.Sync), except those made while
// a Checkpoint runs, which join its batch and are durable when it returns. It also returns the
// engine's background errors not yet reported, and a failed write of
// dictionary.dat.
func (db *DB) Sync() error {
	return errors.Join(db.flushStores(), db.eng.Sync(), db.copier.takeErr())
}

// Maintain does the provider's and the engine's background work in the
// caller's goroutine, for a DB opened with Config.ExternalMaintenance: it
// caches recently loaded columns, writes dictionary.dat when stores added
// block dictionary entries, then runs blazedb.DB.Maintain.
func (db *DB) Maintain() error {
	for job, ok := db.fill.pop(); ok; job, ok = db.fill.pop() {
		db.snapshot(job)
	}
	if !db.conf.ReadOnly && db.conf.ExternalMaintenance && !db.closed.Load() {
		select {
		case <-db.copier.kick:
			db.refreshDictCopy()
		default:
		}
	}
	return errors.Join(db.copier.takeErr(), db.eng.Maintain())
}

// Settings returns the world settings read from level.dat. Every call
// returns the same pointer, which all dimensions share.
func (db *DB) Settings() *world.Settings { return db.set }

// SaveSettings writes s to level.dat, replacing the file atomically. A
// failure is logged and returned by Close. It reads s under s's own lock:
// Dragonfly calls it without that lock while the other dimensions' ticks
// change the same Settings under it.
func (db *DB) SaveSettings(s *world.Settings) {
	db.ckpt.settingsSaved()
	db.setMu.Lock()
	defer db.setMu.Unlock()
	s.Lock()
	db.ldat.PutSettings(s)
	s.Unlock()
	if db.conf.ReadOnly || db.conf.NoLevelDat {
		return
	}
	if err := writeLevelDat(db.conf.FS, db.dir, db.ldat); err != nil {
		db.conf.Log.Error("save settings: "+err.Error(), "dir", db.dir)
		db.saveErr = errors.Join(db.saveErr, fmt.Errorf("save settings: %w", err))
	}
	// For Views of the past (settingslog.go).
	if err := db.logSettings(db.ldat); err != nil {
		db.conf.Log.Error("save settings in the log: "+err.Error(), "dir", db.dir)
		db.saveErr = errors.Join(db.saveErr, fmt.Errorf("save settings in the log: %w", err))
	}
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
	var errs []error
	if db.store != nil {
		if persist {
			errs = append(errs, db.store.drain())
		}
		db.store.close()
	}
	close(db.fillStop)
	db.fillDone.Wait()
	if db.store != nil && persist {
		// Stores that came in beside Close.
		for batch := db.store.take(); len(batch) > 0; batch = db.store.take() {
			db.store.done(batch, db.writeStores(batch))
		}
		errs = append(errs, db.store.takeErr())
	}
	if err := db.copier.takeErr(); err != nil {
		errs = append(errs, err)
	}
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
	gen := db.eng.Stats().Generation // a compaction ending in Close moves it on, as sameLineage allows
	err := closeEngine()
	if err != nil {
		errs = append(errs, err)
	}
	// A report of damaged records compaction carries is no failed close.
	if (err == nil || blazedb.IsDamageReport(err)) && persist && !db.conf.ReadOnly && db.dict.needsCopy(db.conf.FS, db.dir, gen) {
		db.copier.mu.Lock() // a Maintain of the owner's may still be writing it
		defer db.copier.mu.Unlock()
		// After the engine's close has made the new entries durable: the
		// copy never holds an entry the log might still lose.
		if err := db.dict.writeCopy(db.conf.FS, db.dir, gen); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("provider: close %s: %w", db.dir, err)
	}
	return nil
}
