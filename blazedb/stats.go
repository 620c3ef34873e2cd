package blazedb

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a DB's figures: a plain value, taken anew by each
// call, safe to copy and to use from any goroutine.
type Stats struct {
	Keys         int    // live keys, chunk and named
	ChunkKeys    int    // live chunk keys
	NamedKeys    int    // live named keys
	Generation   uint64 // generation of chunks.dat (+1 per compaction)
	LogBytes     int64  // size of chunks.dat
	LiveBytes    int64  // bytes of records that hold live values
	GarbageBytes int64  // bytes compaction would reclaim
	// HistoryBytes are the bytes of older versions and time marks that
	// compaction keeps for reads at past points (history.go);
	// HistoryVersions counts the versions the history index holds, present
	// ones of changed keys included.
	HistoryBytes    int64
	HistoryVersions int
	// DamagedKeys counts live keys whose record is damaged and that
	// compaction carries as it is (damage.go), until they are written,
	// deleted or repaired. Known from the first compaction that meets
	// them; Check finds every one at any time.
	DamagedKeys int

	Appends     int64 // writes handed to the operating system
	AppendBytes int64
	Elided      int64 // puts of an unchanged value and deletes of missing keys: nothing appended
	Reads       int64 // Get, GetNamed and View calls
	NotFound    int64 // reads of missing keys, answered from the index without I/O

	CacheHits, CacheMisses, CacheEvictions int64
	CacheBytes                             int64 // charged against Options.CacheBytes
	CacheEntries                           int

	Fsyncs        int64
	FsyncTime     time.Duration // total time spent in fsync of chunks.dat
	Compactions   int64
	CompactTime   time.Duration // total time spent compacting
	CompactCopied int64         // bytes written by compactions
	Checkpoints   int64         // index.dat rewritten while open (checkpoint.go)
}

type counters struct {
	appends, appendBytes, elided, reads, notFound atomic.Int64
	fsyncs, fsyncNanos                            atomic.Int64
	compactions, compactNanos, compactCopied      atomic.Int64
	checkpoints                                   atomic.Int64
}

// Stats returns current figures. It is cheap enough to call every tick.
func (db *DB) Stats() Stats {
	s := Stats{
		Appends:       db.stats.appends.Load(),
		AppendBytes:   db.stats.appendBytes.Load(),
		Elided:        db.stats.elided.Load(),
		Reads:         db.stats.reads.Load(),
		NotFound:      db.stats.notFound.Load(),
		Fsyncs:        db.stats.fsyncs.Load(),
		FsyncTime:     time.Duration(db.stats.fsyncNanos.Load()),
		Compactions:   db.stats.compactions.Load(),
		CompactTime:   time.Duration(db.stats.compactNanos.Load()),
		CompactCopied: db.stats.compactCopied.Load(),
		Checkpoints:   db.stats.checkpoints.Load(),
	}
	if c := db.cache; c != nil {
		s.CacheHits, s.CacheMisses, s.CacheEvictions = c.hits.Load(), c.misses.Load(), c.evictions.Load()
		s.CacheBytes, s.CacheEntries = c.usage()
	}
	db.mu.RLock()
	if db.log != nil {
		s.Keys = db.idx.count
		s.NamedKeys = len(db.idx.named)
		s.ChunkKeys = s.Keys - s.NamedKeys
		s.LiveBytes = db.idx.live
		s.Generation = db.log.gen
		s.LogBytes = db.log.written.Load()
		if h := db.idx.hist; h != nil {
			s.HistoryBytes, s.HistoryVersions = h.bytes+h.pointBytes(), h.count
		}
		s.GarbageBytes = db.log.garbage(s.LiveBytes + s.HistoryBytes)
		s.DamagedKeys = len(standingDamage(db.carried.Load(), db.idx, db.log.gen))
	}
	db.mu.RUnlock()
	return s
}
