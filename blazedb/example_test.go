package blazedb_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/blazeworld/blaze/blazedb"
)

// Open a database, write a chunk key and a named key, read them back, and
// close it. The zero Options give the defaults: DurabilityBalanced (an
// fsync within a second), LZ4, online compaction and six hours of history.
func Example() {
	dir, err := os.MkdirTemp("", "blazedb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := blazedb.Open(dir, blazedb.Options{})
	if err != nil {
		log.Fatal(err)
	}
	k := blazedb.Key{Dim: 0, X: 3, Z: -7}
	if err := db.Put(k, []byte("a column's bytes")); err != nil {
		log.Fatal(err)
	}
	if err := db.PutNamed("player/steve", []byte("spawn 0 64 0")); err != nil {
		log.Fatal(err)
	}
	v, err := db.Get(k)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%v: %s\n", k, v)

	_, err = db.Get(blazedb.Key{X: 100, Z: 100})
	fmt.Println("missing key is ErrNotFound:", errors.Is(err, blazedb.ErrNotFound))

	// Close makes everything written durable; the next Open finds it.
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	db, err = blazedb.Open(dir, blazedb.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	named, err := db.GetNamed("player/steve")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("after reopening: %s\n", named)
	// Output:
	// (3, -7, dim 0): a column's bytes
	// missing key is ErrNotFound: true
	// after reopening: spawn 0 64 0
}

// A Batch writes chunk and named keys atomically: after a crash, all of
// them or none.
func ExampleDB_Apply() {
	dir, err := os.MkdirTemp("", "blazedb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := blazedb.Open(dir, blazedb.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	var b blazedb.Batch
	b.Put(blazedb.Key{X: 0, Z: 0}, []byte("column uses entry 7"))
	b.PutNamed("dictionary/7", []byte("minecraft:stone"))
	if err := db.Apply(&b); err != nil {
		log.Fatal(err)
	}
	names, err := db.Names()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Len(), "writes applied; named keys:", names)
	// Output:
	// 2 writes applied; named keys: [dictionary/7]
}

// A snapshot names the present state; reads at its point see that state
// after later writes, across restarts and compactions, until it is deleted.
func ExampleDB_CreateSnapshot() {
	dir, err := os.MkdirTemp("", "blazedb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := blazedb.Open(dir, blazedb.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	k := blazedb.Key{X: 1, Z: 2}
	if err := db.Put(k, []byte("before the match")); err != nil {
		log.Fatal(err)
	}
	snap, err := db.CreateSnapshot("before-match")
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Put(k, []byte("after the match")); err != nil {
		log.Fatal(err)
	}
	now, err := db.Get(k)
	if err != nil {
		log.Fatal(err)
	}
	then, err := db.GetAt(k, snap.Seq)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("now: %s\nat %s: %s\n", now, snap.Name, then)
	// Output:
	// now: after the match
	// at before-match: before the match
}
