package blazedb

import (
	"math/rand/v2"
	"testing"

	"github.com/blazeworld/blaze/blazedb/vfs/vfstest"
)

// An Open after a process crash syncs what the process left, and marks
// that sync as every fsync is marked: after a power cut before any other
// write, a byte decayed in those records is decay (that record lost), not
// a torn tail that cuts every record after it.
func TestRecoverySyncIsMarked(t *testing.T) {
	mem := vfstest.NewMem()
	db := open(t, mem, "/db", Options{Durability: DurabilityFast})
	const n = 50
	for i := range n {
		if err := db.Put(Key{X: int32(i)}, value(i, 200)); err != nil {
			t.Fatal(err)
		}
	}
	db.Discard() // a process crash: the writes are in the OS's cache, unsynced
	again := open(t, mem, "/db", Options{Durability: DurabilityFast})
	again.Discard()                                       // crashed again before any write
	cut := mem.CrashClone(rand.New(rand.NewPCG(5, 6)), 0) // then the power: only synced bytes stay
	b, err := cut.ReadFile("/db/" + logName)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40 // a byte of a record in the middle decays
	cut.WriteFile("/db/"+logName, b)
	last := open(t, cut, "/db", Options{})
	defer last.Close()
	kept := 0
	for i := range n {
		if _, err := last.Get(Key{X: int32(i)}); err == nil {
			kept++
		}
	}
	if kept < n-1 {
		t.Fatalf("%d of %d keys after decay in records Open had synced; want all but the decayed one", kept, n)
	}
}
