package convert

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blazeworld/blaze/internal/colcmp"
	"github.com/blazeworld/blaze/internal/progress"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
	"github.com/df-mc/goleveldb/leveldb/util"
	"github.com/google/uuid"
)

// A conversion from LevelDB reads the source database in one pass of one
// forward iterator, which lists the columns and the players, gathers each
// column's records into a run (ldbreader.go) and hands it to a worker, and
// sorts every other record into those Blaze carries (extras.go). The
// workers (one a core) decode a run, store the column in the destination
// and take its Sum, while the iterator goes on. Before it, a pass over the
// digp keys alone (a few bytes for each column with entities) reads what
// mcdb reads for a column's entities and what decides where its legacy
// entity record goes.

// readDigp reads the digp keys into cr.digp: what mcdb reads for the
// entities. It returns the columns whose digp key is theirs, which keep
// their entities there rather than in the legacy record.
func (cr *columnReader) readDigp() (map[place]bool, error) {
	cr.digp = map[string][]byte{}
	digpAt := map[place]bool{}
	it := cr.ldb.NewIterator(util.BytesPrefix([]byte(digpPrefix)), nil)
	defer it.Release()
	for it.Next() {
		cr.digp[string(it.Key())] = bytes.Clone(it.Value())
		if c := classify(it.Key()); c.chunk && c.tag == -1 {
			digpAt[c.pl] = true
		}
	}
	return digpAt, it.Error()
}

// levelDBPass is what the pass found and did. Its owner is the goroutine
// that called readLevelDB.
type levelDBPass struct {
	places  []place // the columns, in key order
	players []uuid.UUID
	cols    []passColumn // by index in places
	x       *extras
}

// passColumn is what became of one column.
type passColumn struct {
	err error      // it could not be read, or the destination refused it
	sum colcmp.Sum // of the column stored
	w   written
	// keep is the run's records carried besides the column.
	keep []provider.ExtraRecord
}

// listedPlace is the column a key lists, as the conversion always listed
// them: by a version key (9 or 13 bytes, ending in 0x2c or 0x76) of a
// dimension Dragonfly knows.
func listedPlace(k []byte) (place, bool) {
	if n := len(k); (n != 9 && n != 13) || (k[n-1] != tagVersion && k[n-1] != tagVersionOld) {
		return place{}, false
	}
	pl := place{Pos: world.ChunkPos{int32(binary.LittleEndian.Uint32(k)), int32(binary.LittleEndian.Uint32(k[4:]))}, Dim: world.Overworld}
	if len(k) == 13 {
		d, ok := world.DimensionByID(int(int32(binary.LittleEndian.Uint32(k[8:]))))
		if !ok {
			return place{}, false
		}
		pl.Dim = d
	}
	return pl, true
}

// playerKey is the player whose Bedrock data key k is, if it is one.
func playerKey(k []byte) (uuid.UUID, bool) {
	name := string(k)
	if !strings.HasPrefix(name, "player_") || strings.HasPrefix(name, "player_server_") {
		return uuid.UUID{}, false
	}
	id, err := uuid.Parse(strings.TrimPrefix(name, "player_"))
	return id, err == nil
}

// columnStorer is where the pass stores the columns: a world.Provider, or
// anything else that takes columns.
type columnStorer interface {
	StoreColumn(pos world.ChunkPos, dim world.Dimension, col *chunk.Column) error
}

// passResult is a worker's answer for one run.
type passResult struct {
	idx   int
	col   passColumn
	fatal error
}

// readLevelDB reads every record of cr's database once, storing each
// column into to (on workers goroutines, a column at a time each) and
// counting it on bar.
// An error stops it: the source could not be read, or the destination
// failed (not a column it refused as invalid, which is that column's
// error).
func readLevelDB(cr *columnReader, to columnStorer, summer *colcmp.Summer, workers int, bar *progress.Bar) (*levelDBPass, error) {
	digpAt, err := cr.readDigp()
	if err != nil {
		return nil, err
	}

	p := &levelDBPass{x: &extras{columns: map[place][]provider.ExtraRecord{}}}
	var stop atomic.Bool
	jobs := make(chan *run, 2*workers)
	results := make(chan passResult, 2*workers)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for r := range jobs {
				if stop.Load() {
					continue
				}
				results <- convertRun(cr, to, summer, r, digpAt[r.pl])
			}
		})
	}
	// The results, on a goroutine of their own: the bar is drawn there
	// alone.
	var got []passResult
	var fatal error
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for res := range results {
			if res.fatal != nil {
				stop.Store(true)
				if fatal == nil {
					fatal = res.fatal
				}
				continue
			}
			got = append(got, res)
			bar.Add()
		}
	}()

	listed := map[place]int{}
	dispatched := map[place]bool{}
	pending := map[place][]provider.ExtraRecord{}
	actors := map[int64]provider.ExtraRecord{}
	var cur *run
	flush := func() {
		if cur == nil {
			return
		}
		if idx, ok := listed[cur.pl]; ok {
			if dispatched[cur.pl] {
				err = fmt.Errorf("source database: the records of column %v (%v) are not together in key order", cur.pl.Pos, cur.pl.Dim)
			} else {
				dispatched[cur.pl] = true
				cur.idx = idx
				jobs <- cur
			}
		} else {
			// Not a column: its records are carried as they are.
			pending[cur.pl] = append(pending[cur.pl], cur.recs...)
		}
		cur = nil
	}
	it := cr.ldb.NewIterator(nil, nil)
	for it.Next() && err == nil && !stop.Load() {
		k := it.Key()
		if id, ok := playerKey(k); ok {
			p.players = append(p.players, id)
		}
		if pl, ok := listedPlace(k); ok {
			if _, seen := listed[pl]; !seen {
				listed[pl] = len(p.places)
				p.places = append(p.places, pl)
			}
		}
		key, val := bytes.Clone(k), bytes.Clone(it.Value())
		if pl, tag, sub, ok := mcdbKey(k); ok {
			if cur != nil && cur.pl != pl {
				flush()
			}
			if cur == nil {
				cur = &run{pl: pl}
			}
			cur.add(tag, sub, val)
		}
		rec := provider.ExtraRecord{Key: key, Value: val}
		switch c := classify(key); {
		case c.actor:
			actors[c.id] = rec
		case !c.chunk:
			p.x.world = append(p.x.world, rec)
		case cur != nil && c.pl == cur.pl:
			cur.recs = append(cur.recs, rec)
		default:
			pending[c.pl] = append(pending[c.pl], rec)
		}
	}
	if err == nil {
		err = it.Error()
	}
	it.Release()
	if err == nil {
		flush()
	}
	// A column listed by a key mcdb does not read for it (an overworld
	// version key written with dimension id 0): mcdb finds no version.
	for _, pl := range p.places {
		if err == nil && !dispatched[pl] {
			dispatched[pl] = true
			jobs <- &run{pl: pl, idx: listed[pl]}
		}
	}
	close(jobs)
	wg.Wait()
	close(results)
	<-collected
	if err != nil {
		return nil, err
	}
	if fatal != nil {
		return nil, fatal
	}
	p.cols = make([]passColumn, len(p.places))
	for _, res := range got {
		p.cols[res.idx] = res.col
	}
	p.carry(pending, actors, digpAt)
	return p, nil
}

// convertRun decodes r, stores the column and picks the run's records
// carried besides it.
func convertRun(cr *columnReader, to columnStorer, summer *colcmp.Summer, r *run, digp bool) passResult {
	res := passResult{idx: r.idx}
	col, err := cr.column(r)
	if err == nil {
		err = to.StoreColumn(r.pl.Pos, r.pl.Dim, col)
		if err != nil && !errors.Is(err, provider.ErrInvalidColumn) {
			res.fatal = fmt.Errorf("write: %w", err) // the destination is failing: stop
			return res
		}
	}
	res.col.err = err
	read := err == nil
	if read {
		res.col.sum, res.col.w = summer.Sum(col), writtenOf(col)
	}
	for _, rec := range r.recs {
		if kept, ok := carriedRecord(classify(rec.Key), rec, res.col.w, read, digp); ok {
			res.col.keep = append(res.col.keep, kept)
		}
	}
	return res
}

// carry sorts the records carried besides the columns into p.x: those of
// the runs, those of a column's position met outside its run (its digp
// key, say) and the entities under actorprefix keys no column read.
func (p *levelDBPass) carry(pending map[place][]provider.ExtraRecord, actors map[int64]provider.ExtraRecord, digpAt map[place]bool) {
	type fate struct {
		w    written
		read bool
	}
	fates := map[place]fate{}
	for i, pl := range p.places {
		c := p.cols[i]
		fates[pl] = fate{c.w, c.err == nil}
		if len(c.keep) > 0 {
			p.x.columns[pl] = append(p.x.columns[pl], c.keep...)
		}
	}
	ids := map[int64]bool{} // the entities the columns read
	for pl, recs := range pending {
		f := fates[pl]
		for _, rec := range recs {
			c := classify(rec.Key)
			kept, ok := carriedRecord(c, rec, f.w, f.read, digpAt[pl])
			if ok {
				p.x.columns[pl] = append(p.x.columns[pl], kept)
			} else if c.tag == -1 {
				for i := 0; i+8 <= len(rec.Value); i += 8 {
					ids[int64(binary.LittleEndian.Uint64(rec.Value[i:]))] = true
				}
			}
		}
	}
	for pl, recs := range p.x.columns {
		slices.SortFunc(recs, func(a, b provider.ExtraRecord) int { return bytes.Compare(a.Key, b.Key) })
		p.x.columns[pl] = recs
	}
	for id, r := range actors {
		if !ids[id] {
			p.x.world = append(p.x.world, r)
		}
	}
}
