package worldtest

import (
	"log/slog"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/blazedb/vfs"
)

// PutRecords writes records straight into the engine in dir (a world's
// blaze directory) on fs (nil: the operating system's), as a foreign
// writer, or damage that kept its checksum, would leave them: named
// records by name, columns by key. It is for tests of records that read
// intact and do not decode.
func PutRecords(t testing.TB, dir string, fs vfs.FS, named map[string][]byte, cols map[blazedb.Key][]byte) {
	t.Helper()
	eng, err := blazedb.Open(dir, blazedb.Options{FS: fs, Logger: slog.New(slog.DiscardHandler), Compression: blazedb.CompressionNone})
	if err != nil {
		t.Fatal(err)
	}
	var b blazedb.Batch
	for n, v := range named {
		b.PutNamed(n, v)
	}
	for k, v := range cols {
		b.Put(k, v)
	}
	if err := eng.Apply(&b); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
}
