package replica

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/blazeworld/blaze/provider"
)

// The objects of a replica, under its prefix (s3://BUCKET/PREFIX/...). Every
// object but the manifest is written once and never replaced; the numbers in
// names are 16 lowercase hexadecimal digits, so names sort as the numbers do.
//
//	+-----------------------------------+--------------------------------------------+
//	| name                              | contents                                   |
//	+-----------------------------------+--------------------------------------------+
//	| manifest                          | the manifest (JSON, below): the owner and  |
//	|                                   | its epoch; replaced only by conditional    |
//	|                                   | writes (If-None-Match: *, If-Match: ETag)  |
//	| log/EPOCH/GEN/START-END-TIME      | bytes START..END of chunks.dat of          |
//	|                                   | generation GEN, as shipped by the writer   |
//	|                                   | of EPOCH; START 0 is a whole copy (the     |
//	|                                   | first object of each generation and of     |
//	|                                   | each epoch). TIME (unix nanoseconds, the   |
//	|                                   | writer's clock) is when END was durable    |
//	| file/NAME/EPOCH-TIME              | the whole of the world's file NAME         |
//	|                                   | (level.dat, levelname.txt, dictionary.dat, |
//	|                                   | the engine's index.dat) as read at TIME,   |
//	|                                   | when it changed                            |
//	| regions/DIM/r.X.Z/log/...         | a segmented world's region (its directory  |
//	| regions/DIM/r.X.Z/file/...        | in the world): its log and files as above; |
//	|                                   | the root's (the layout record included)    |
//	|                                   | are the world's, above                     |
//	| regions/DIM/r.X.Z/deleted/        | the region was deleted at TIME: a restore  |
//	|   EPOCH-TIME (empty)              | takes its objects of TIME on only          |
//	| pruned/TIME (empty), the root's   | a prune to TIME (Prune, Config.Retention)  |
//	| or a region's                     | is deleting objects only a restore before  |
//	|                                   | TIME reads, written before the first is:   |
//	|                                   | Restore and Points refuse every time       |
//	|                                   | before the newest such mark of any part;   |
//	|                                   | a prune deletes its prefix's earlier marks |
//	+-----------------------------------+--------------------------------------------+
//
// The log's records carry the engine's checksums, which a restore verifies
// by opening the rebuilt world and checking it; an object's length must be
// END-START. A log object carries the user metadata blaze-log-sha256
// (logDigestMeta): the SHA-256 of bytes 0 to END of its log, by which a
// writer started later resumes the log rather than copying it whole
// (resume.go); its appended objects then follow, in its own epoch, the
// whole copy of an earlier one, and a restore joins the objects of a
// generation from its newest whole copy's epoch on, the latest epoch's
// first, never stepping back to an earlier epoch (chainFrom).
// A world file object carries blaze-file-sha256 (fileDigestMeta), the
// SHA-256 of its bytes, so that a later writer does not upload the file
// again while it is unchanged.
//
// The manifest, a JSON object:
//
//	+-----------+---------------------------------------------------------+
//	| field     | meaning                                                 |
//	+-----------+---------------------------------------------------------+
//	| signature | "blaze-replica"                                         |
//	| version   | 1                                                       |
//	| epoch     | the current writer's epoch: +1 at each Start            |
//	| owner     | who holds it (Config.Owner: host and world by default)  |
//	| renewed   | when the owner last renewed it (RFC 3339, its clock)    |
//	| lease     | how long after renewed it holds (nanoseconds)           |
//	| epochs    | every epoch: {epoch, owner, began}; a restore takes an  |
//	|           | epoch's objects only from before the next one began     |
//	+-----------+---------------------------------------------------------+
//
// Part of the on-disk (in-bucket) format: a reader refuses another
// signature or a version it does not know.
const (
	manifestName      = "manifest"
	manifestSignature = "blaze-replica"
	manifestVersion   = 1
	logDir            = "log/"
	fileDir           = "file/"
	regionsDir        = "regions/"
	deletedDir        = "deleted/"
	prunedDir         = "pruned/"
)

// shippedFiles are the world's files shipped whole beside its log, from
// the world's directory; a missing one is not shipped. index.dat, the
// engine's checkpoint of its index (in provider.EngineDir), written at
// compactions, closes and every blazedb.Options.IndexCheckpointBytes
// appended, lets a restored world open without scanning its whole log:
// it covers only durable bytes, is read before the log's length in each
// shipment, and so never covers more than the log shipped with it; one
// for another generation is ignored by the engine, which then scans.
var shippedFiles = []string{"level.dat", "levelname.txt", "dictionary.dat", "index.dat"}

// filePath is where the shipped file name lives in a world's directory.
func filePath(name string) string {
	if name == "index.dat" {
		return filepath.Join(provider.EngineDir, name)
	}
	return name
}

// logObject names one object of the log.
type logObject struct {
	epoch, gen uint64
	start, end int64
	time       time.Time
}

func hex16(v uint64) string { return fmt.Sprintf("%016x", v) }

func parseHex16(s string) (uint64, bool) {
	if len(s) != 16 {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 16, 64)
	return v, err == nil && hex16(v) == s
}

// name is o's object name under the prefix.
func (o logObject) name() string {
	return logDir + hex16(o.epoch) + "/" + hex16(o.gen) + "/" + hex16(uint64(o.start)) + "-" + hex16(uint64(o.end)) + "-" + hex16(uint64(o.time.UnixNano()))
}

// parseLogObject parses a name relative to the prefix; ok is false for any
// name not of the form name gives.
func parseLogObject(name string) (o logObject, ok bool) {
	rest, ok := strings.CutPrefix(name, logDir)
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 3 {
		return logObject{}, false
	}
	nums := strings.Split(parts[2], "-")
	if len(nums) != 3 {
		return logObject{}, false
	}
	var v [5]uint64
	for i, s := range append(parts[:2:2], nums...) {
		if v[i], ok = parseHex16(s); !ok {
			return logObject{}, false
		}
	}
	o = logObject{epoch: v[0], gen: v[1], start: int64(v[2]), end: int64(v[3]), time: time.Unix(0, int64(v[4])).UTC()}
	if o.start < 0 || o.end <= o.start || v[4] > 1<<63-1 {
		return logObject{}, false
	}
	return o, true
}

// fileObject names one shipped copy of a world's file.
type fileObject struct {
	file  string
	epoch uint64
	time  time.Time
}

func (o fileObject) name() string {
	return fileDir + o.file + "/" + hex16(o.epoch) + "-" + hex16(uint64(o.time.UnixNano()))
}

func parseFileObject(name string) (o fileObject, ok bool) {
	rest, ok := strings.CutPrefix(name, fileDir)
	file, tail := path.Split(rest)
	file = strings.TrimSuffix(file, "/")
	nums := strings.Split(tail, "-")
	if !ok || file == "" || strings.Contains(file, "/") || len(nums) != 2 {
		return fileObject{}, false
	}
	e, ok1 := parseHex16(nums[0])
	t, ok2 := parseHex16(nums[1])
	if !ok1 || !ok2 || t > 1<<63-1 {
		return fileObject{}, false
	}
	return fileObject{file: file, epoch: e, time: time.Unix(0, int64(t)).UTC()}, true
}

// deletionObject names the mark of a region's deletion, under the
// region's prefix.
type deletionObject struct {
	epoch uint64
	time  time.Time
}

func (o deletionObject) name() string {
	return deletedDir + hex16(o.epoch) + "-" + hex16(uint64(o.time.UnixNano()))
}

func parseDeletionObject(name string) (o deletionObject, ok bool) {
	rest, ok := strings.CutPrefix(name, deletedDir)
	nums := strings.Split(rest, "-")
	if !ok || len(nums) != 2 {
		return deletionObject{}, false
	}
	e, ok1 := parseHex16(nums[0])
	t, ok2 := parseHex16(nums[1])
	if !ok1 || !ok2 || t > 1<<63-1 {
		return deletionObject{}, false
	}
	return deletionObject{epoch: e, time: time.Unix(0, int64(t)).UTC()}, true
}

// prunedObject names the mark a prune to horizon leaves under the prefix
// it prunes (the root's or a region's) before it deletes anything.
func prunedObject(horizon time.Time) string {
	return prunedDir + hex16(uint64(horizon.UnixNano()))
}

func parsePrunedObject(name string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(name, prunedDir)
	t, ok2 := parseHex16(rest)
	if !ok || !ok2 || t > 1<<63-1 {
		return time.Time{}, false
	}
	return time.Unix(0, int64(t)).UTC(), true
}
