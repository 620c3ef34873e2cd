package blazedb

import (
	"encoding/binary"
	"fmt"
	"sort"
	"time"
)

// The timeline maps wall-clock time to points (history.go). It lives in
// the log, in time marks: sync marks (record.go) whose value is longer.
//
// Time mark value (a sync mark of 8 bytes carries no time):
//
//	+--------+------+-------------------------------------------------+
//	| offset | size | field                                           |
//	+--------+------+-------------------------------------------------+
//	|      0 |    8 | synced, uint64 LE: as in a sync mark            |
//	|      8 |    8 | point: the sequence number of the next write    |
//	|     16 |    8 | wall-clock time, int64 LE Unix nanoseconds      |
//	|     24 |    8 | history floor, uint64 LE (history.go)           |
//	+--------+------+-------------------------------------------------+
//
// A time mark says that every write numbered below point was made at or
// before the time, and every later one after it. The first write made
// timeStep or more after the newest time mark carries one in front of its
// record, in the same write (as a sync mark is carried; one mark may be
// both), so the writes between two time marks were all made within
// timeStep of the first: SeqAt is exact to timeStep. Compaction writes the
// time marks its history still needs at the start of the new log and one
// for the moment it ends. Recovery reads them back as it scans; index.dat
// keeps those of the part it covers. The floor is the largest any time
// mark or index.dat gives: the log never holds less history than it says.
//
// Part of the on-disk format.
const (
	timeMarkValueLen = 32
	timeMarkSize     = recHeaderSize + timeMarkValueLen
	timeStep         = time.Second
)

// timePoint is one entry of the timeline: writes numbered below seq were
// made at or before at (Unix nanoseconds), later ones after it.
type timePoint struct {
	seq uint64
	at  int64
}

// appendTimeMark appends a time mark saying the first synced bytes of the
// log are durable, with p and floor.
func appendTimeMark(dst []byte, synced int64, p timePoint, floor uint64) []byte {
	v := make([]byte, 0, timeMarkValueLen)
	v = binary.LittleEndian.AppendUint64(v, uint64(synced))
	v = binary.LittleEndian.AppendUint64(v, p.seq)
	v = binary.LittleEndian.AppendUint64(v, uint64(p.at))
	v = binary.LittleEndian.AppendUint64(v, floor)
	return appendRecord(dst, &record{kind: kindMark, value: v, rawLen: timeMarkValueLen, vsum: crc(v)})
}

// timeMark returns the point and floor of a decoded sync mark, if it is a
// time mark.
func (r *record) timeMark() (p timePoint, floor uint64, ok bool) {
	if r.kind != kindMark || len(r.value) != timeMarkValueLen {
		return timePoint{}, 0, false
	}
	p = timePoint{seq: binary.LittleEndian.Uint64(r.value[8:]), at: int64(binary.LittleEndian.Uint64(r.value[16:]))}
	return p, binary.LittleEndian.Uint64(r.value[24:]), true
}

// addPoint appends p to the timeline, keeping it ordered: a point before
// the newest is dropped, and a clock that went back is held at the newest
// time.
func (h *history) addPoint(p timePoint) {
	if n := len(h.points); n > 0 {
		last := h.points[n-1]
		if p.seq < last.seq {
			return
		}
		p.at = max(p.at, last.at)
	}
	h.points = append(h.points, p)
}

// pointDue returns the point a write made now should carry in a time mark,
// if one is due (timeStep after the newest; a clock set back marks again
// once it passes the newest by timeStep).
func (h *history) pointDue(now int64) (timePoint, bool) {
	if n := len(h.points); n > 0 && now-h.points[n-1].at < int64(timeStep) {
		return timePoint{}, false
	}
	return timePoint{seq: h.next, at: now}, true
}

// trimPoints drops the points a history with floor f no longer needs: all
// before the newest one at or below f.
func trimPoints(ps []timePoint, f uint64) []timePoint {
	i := sort.Search(len(ps), func(i int) bool { return ps[i].seq > f })
	if i > 0 {
		i--
	}
	return append([]timePoint(nil), ps[i:]...)
}

// pointBytes is what the time marks of the history take in the log. They
// are counted here, not as sync marks (logFile.markBytes), as trimming the
// history makes them garbage.
func (h *history) pointBytes() int64 { return int64(len(h.points)) * timeMarkSize }

// pointAt returns the point of the state at time t, as far as the timeline
// knows it: ok is false for a time before it.
func (h *history) pointAt(t int64) (uint64, bool) {
	ps := h.points
	i := sort.Search(len(ps), func(i int) bool { return ps[i].at > t })
	if i == 0 {
		// Before the first write, or before anything the timeline knows.
		return 0, (len(ps) > 0 && ps[0].seq == 0) || (len(ps) == 0 && h.next == 0)
	}
	p := ps[i-1]
	var p1 uint64
	if i < len(ps) {
		p1 = ps[i].seq
	} else {
		p1 = h.next
	}
	// The writes from p.seq to p1 were made within timeStep of p.at.
	if t-p.at >= int64(timeStep) {
		return p1, true
	}
	return p.seq, true
}

// seqAt returns the point of the state at time t.
func (h *history) seqAt(t int64) (uint64, error) {
	r, ok := h.pointAt(t)
	if !ok {
		return 0, fmt.Errorf("%w: no record of the time %v", ErrHistory, time.Unix(0, t).UTC())
	}
	if !h.exact(r) {
		return 0, fmt.Errorf("%w: the time %v is older than the history kept", ErrHistory, time.Unix(0, t).UTC())
	}
	return r, nil
}

// SeqAt returns the point of the database's state at time t: every write
// made at or before t is below it and every later one at or above it, to
// within a second (writes made less than a second after the time may fall
// on either side). Writes are dated by the wall clock of the host that made
// them; a clock set back holds the dates at the latest seen. A time older
// than the history kept gives ErrHistory. A time after the last write gives
// the present point.
func (db *DB) SeqAt(t time.Time) (uint64, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.log == nil {
		return 0, ErrClosed
	}
	p, err := db.idx.hist.seqAt(t.UnixNano())
	if err != nil {
		return 0, fmt.Errorf("blazedb: sequence at %v: %w", t, err)
	}
	return p, nil
}
