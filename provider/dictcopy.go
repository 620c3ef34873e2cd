package provider

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
	"github.com/blazeworld/blaze/provider/internal/column"
)

// The block dictionary is the one part of a world that no column can do
// without: each entry is written once, in the batch of the first column
// that uses it, so a damaged entry has no older version to go back to, and
// every column naming that state would fail to load. dictionary.dat, beside
// level.dat and outside the engine's log, keeps a second copy of every
// entry, so that no single fault loses an entry: damage to the log is
// mended from the copy, damage to the copy from the log. The copy is kept
// current while the world is open: a store that adds entries wakes a
// writer (copyWorker, or Maintain with Config.ExternalMaintenance), which
// gathers the entries added within dictCopyDelay, makes them durable in
// the log (an engine Sync) and only then replaces dictionary.dat
// (vfs.ReplaceFile) with every entry persisted before that Sync, at most
// once per dictCopyInterval: the store itself only signals, and the copy
// never holds an entry the log might still lose. It is written too when a
// world opens without one (worlds made before the copy existed get one),
// and when a world closes if it does not hold exactly the persisted
// entries; a read-write open has the writer read it once, off the open
// path, and write it again if a crash left it stale. A failed write is
// returned by the next Sync or Close.
// Opening a world takes an entry that does not read (damaged, or lost in a
// stretch of the log that recovery skipped) from the copy, and writes it
// back to the engine unless the world is read-only; the copy is used only
// when its lineage is this world's (below) and every entry present in both
// is the same bytes in both. When Close reads the copy (once, if the open
// did not), it writes it again if it differs in any byte from what it
// would write now, the lineage included: so a version 1 copy becomes a
// version 2 one, and a copy a compaction moved past usually takes the new
// generation; one that does not stays this world's within maxLineageGap.
//
//	+-------+------------------------------------------------------------+
//	| bytes | field                                                      |
//	+-------+------------------------------------------------------------+
//	|     3 | signature "BZD"                                            |
//	|     1 | version (2)                                                |
//	|     8 | lineage: the generation of the engine's chunks.dat when    |
//	|       |   the copy was written, uint64 LE (version 2 only)         |
//	|  uvar | n, number of entries                                       |
//	|     … | n entries, ids strictly ascending: uvar id; uvar length;   |
//	|       |   the value of the entry's dict/ record (NBT)              |
//	|     4 | CRC-32C (Castagnoli) of every byte before it, LE           |
//	+-------+------------------------------------------------------------+
//
// uvar is Go's unsigned varint; LE little-endian. An entry is an NBT
// compound of a block name, its properties and a version: far below
// maxDictEntryLen. Only version 2 is read: version 1 (without the lineage)
// was never released.
//
// The lineage tells this world's copy from another's when no entry can be
// compared: the engine's generation starts at a random 63-bit number and
// grows by one with each compaction, so this world's engine is at the
// copy's generation or a little past it, and another world's almost
// surely is not (sameLineage). Part of the on-disk format.
const (
	dictCopyName      = "dictionary.dat"
	dictCopySignature = "BZD"
	dictCopyVersion   = 2
	maxDictID         = 1<<31 - 1
	maxDictEntryLen   = 1 << 20
	// maxLineageGap is how many compactions past the copy's generation
	// the engine may be and still be the same world's: a compaction a
	// minute for eight thousand years.
	maxLineageGap = 1 << 32
)

// The copy writer's pace: it waits dictCopyDelay after a store added
// entries, so that a burst of new block states (new terrain generated) is
// written once, and writes at most once per dictCopyInterval, as each
// write costs an fsync of the log and two of the copy.
const (
	dictCopyDelay    = 100 * time.Millisecond
	dictCopyInterval = time.Second
)

// dictCopy is what dictionary.dat holds.
type dictCopy struct {
	entries    map[int32][]byte
	lineage    uint64
	hasLineage bool // false when there is no file
}

// sameLineage reports whether an engine at generation gen can be the one
// the copy was written beside.
func (c dictCopy) sameLineage(gen uint64) bool {
	return !c.hasLineage || (gen >= c.lineage && gen-c.lineage < maxLineageGap)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendDictCopy appends the file holding entries (id to the value of its
// record), written beside an engine at generation lineage, to b.
func appendDictCopy(b []byte, lineage uint64, entries map[int32][]byte) []byte {
	start := len(b)
	b = append(b, dictCopySignature...)
	b = append(b, dictCopyVersion)
	b = binary.LittleEndian.AppendUint64(b, lineage)
	b = binary.AppendUvarint(b, uint64(len(entries)))
	ids := make([]int32, 0, len(entries))
	for id := range entries {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id))
		b = binary.AppendUvarint(b, uint64(len(entries[id])))
		b = append(b, entries[id]...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// parseDictCopy reads the file b. The values returned are slices of b.
// Damage gives an error wrapping ErrColumnCorrupt, never a panic.
func parseDictCopy(b []byte) (dictCopy, error) {
	bad := func(format string, args ...any) (dictCopy, error) {
		return dictCopy{}, corruption(dictCopyName, "", fmt.Errorf("%w: %s: %s", ErrColumnCorrupt, dictCopyName, fmt.Sprintf(format, args...)))
	}
	if len(b) < len(dictCopySignature)+1+1+4 {
		return bad("%d bytes is too short", len(b))
	}
	body := b[:len(b)-4]
	if sum, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(b[len(body):]); sum != want {
		return bad("checksum %08x, want %08x", sum, want)
	}
	if string(body[:3]) != dictCopySignature {
		return bad("no signature")
	}
	var c dictCopy
	r := column.NewCursor(body[4:])
	if v := body[3]; v != dictCopyVersion {
		return bad("version %d, this build reads %d", v, dictCopyVersion)
	}
	lb := r.Bytes(8)
	if r.Err() != nil {
		return bad("no lineage: %v", r.Err())
	}
	c.lineage, c.hasLineage = binary.LittleEndian.Uint64(lb), true
	n := r.Count(r.Left())
	out := make(map[int32][]byte, n)
	last := int64(-1)
	for range n {
		id := r.Uvarint()
		v := r.Bytes(r.Count(maxDictEntryLen))
		if r.Err() != nil {
			break
		}
		if id > maxDictID || int64(id) <= last {
			return bad("entry id %d after %d", id, last)
		}
		last = int64(id)
		out[int32(id)] = v
	}
	if r.Err() != nil {
		return bad("%v", r.Err())
	}
	if r.Left() != 0 {
		return bad("%d bytes after the entries", r.Left())
	}
	c.entries = out
	return c, nil
}

// readDictCopy reads dir/dictionary.dat: no entries and no error if there
// is none.
func readDictCopy(fs vfs.FS, dir string) (dictCopy, error) {
	b, err := vfs.ReadFile(fs, filepath.Join(dir, dictCopyName))
	if errors.Is(err, vfs.ErrNotExist) {
		return dictCopy{}, nil
	}
	if err != nil {
		return dictCopy{}, err
	}
	return parseDictCopy(b)
}

// loadDictionary reads the block dictionary, taking what the engine does
// not hold intact from dictionary.dat (dictcopy.go) and, unless read-only,
// writing it back to the engine. It writes dictionary.dat when there is
// none, or when it was read and is not current; Close checks the rest.
// names lists the world's directory.
func (db *DB) loadDictionary(names []string) error {
	fs := db.conf.FS
	gen := db.eng.Stats().Generation
	readCopy := func() (map[int32][]byte, error) {
		cp, err := readDictCopy(fs, db.dir)
		if err != nil {
			db.conf.Log.Error("the copy of the block dictionary does not read", "file", filepath.Join(db.dir, dictCopyName), "err", err)
			return nil, err
		}
		if !cp.sameLineage(gen) {
			err := corruption(dictCopyName, "", fmt.Errorf("%w: %s is not this world's: written beside generation %d of chunks.dat, which is at %d", ErrColumnCorrupt, dictCopyName, cp.lineage, gen))
			db.conf.Log.Error("the copy of the block dictionary is another world's; it is not used", "file", filepath.Join(db.dir, dictCopyName), "err", err)
			return nil, err
		}
		return cp.entries, nil
	}
	// Entries missing after a torn tail was cut are looked for in the copy
	// too: the copy holds only entries the log had made durable, which no
	// crash may take, so one the engine lacks was lost to damage that
	// looked like a crash's unsynced writes.
	rec := db.eng.Recovery()
	restored, err := db.dict.load(db.eng, readCopy, len(rec.Corrupt) > 0 || rec.TornBytes > 0 || rec.LostBytes > 0 || db.conf.dictLost)
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
			// A report of damaged records compaction carries is no
			// failed sync: the entries are durable.
			if err := db.eng.Sync(); err != nil && !blazedb.IsDamageReport(err) {
				return fmt.Errorf("write back dictionary entries: %w", err)
			}
		}
	}
	if !slices.Contains(names, dictCopyName) {
		db.dict.copied = copyStale
	}
	if db.conf.ReadOnly {
		return nil
	}
	if db.dict.copied == copyUnread {
		// A crash may have left it stale: the writer reads it once, off
		// the open path, and writes it again if so.
		db.copier.added()
		return nil
	}
	if !db.dict.needsCopy(fs, db.dir, gen) {
		return nil
	}
	return db.dict.writeCopy(fs, db.dir, gen)
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
func (db *DB) DictionaryCopyCurrent() bool {
	return !db.dict.needsCopy(db.conf.FS, db.dir, db.eng.Stats().Generation)
}

// copyKeeper keeps dictionary.dat current while a world is open. It is
// safe for concurrent use.
type copyKeeper struct {
	kick chan struct{} // holds a token when entries were added since the last write
	mu   sync.Mutex    // one write of the copy at a time
	err  error         // a failed write not yet reported; guarded by mu
}

func newCopyKeeper() *copyKeeper { return &copyKeeper{kick: make(chan struct{}, 1)} }

// added says that entries were persisted: the copy is to be written. It
// never blocks.
func (k *copyKeeper) added() {
	select {
	case k.kick <- struct{}{}:
	default:
	}
}

// takeErr returns, once, the error of a failed write.
func (k *copyKeeper) takeErr() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	err := k.err
	k.err = nil
	return err
}

// copyWorker writes dictionary.dat when stores have added entries, until
// fillStop is closed.
func (db *DB) copyWorker() {
	defer db.fillDone.Done()
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-db.fillStop:
			return false
		case <-t.C:
			return true
		}
	}
	for {
		select {
		case <-db.fillStop:
			return
		case <-db.copier.kick:
		}
		if !wait(dictCopyDelay) {
			return
		}
		db.refreshDictCopy()
		if !wait(dictCopyInterval) {
			return
		}
	}
}

// refreshDictCopy writes dictionary.dat if it does not hold exactly the
// persisted entries, after making them durable in the log. Its error is
// kept for the next Sync or Close, and logged.
func (db *DB) refreshDictCopy() {
	k := db.copier
	k.mu.Lock()
	defer k.mu.Unlock()
	fs := db.conf.FS
	if !db.dict.needsCopy(fs, db.dir, db.eng.Stats().Generation) {
		return
	}
	db.dict.mu.Lock()
	entries := db.dict.persistedEntries()
	db.dict.mu.Unlock()
	// Every entry taken was applied before this Sync, which makes it
	// durable; one added meanwhile waits for the next write.
	err := db.eng.Sync()
	if blazedb.IsDamageReport(err) {
		// Damaged records that compaction carries, reported by every
		// Sync: the entries taken are durable all the same.
		err = nil
	}
	if err == nil {
		err = db.dict.writeCopyOf(fs, db.dir, db.eng.Stats().Generation, entries)
	}
	if err != nil {
		db.conf.Log.Error("keep the copy of the block dictionary current", "file", filepath.Join(db.dir, dictCopyName), "err", err)
		k.err = errors.Join(k.err, err)
	}
}
