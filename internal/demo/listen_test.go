package demo

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/world"
)

// Issue 35 item 12: a listener that cannot be created (an address that
// does not parse, one already taken) is an error from New, where Dragonfly
// would log it and Server.Listen then dereference a nil listener; the
// world is closed cleanly, so that it opens again at once with what it
// held, and so does a server on it.
func TestBadAddressFailsCleanly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	db, err := provider.Config{Log: quiet}.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	col := worldtest.Synthetic(1, world.Overworld, world.DefaultBlockRegistry)
	if err := db.StoreColumn(world.ChunkPos{2, 3}, world.Overworld, col); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	taken, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, addr := range []string{"not an address", "127.0.0.1:99999", taken.LocalAddr().String()} {
		r, err := Config{Addr: addr, Dir: dir, Offline: true, Log: quiet}.New()
		if err == nil {
			closeUnserved(r)
			t.Fatalf("-addr %q: the server was built without a listener", addr)
		}
		if !strings.Contains(err.Error(), "cannot listen on "+addr) {
			t.Fatalf("-addr %q: %v", addr, err)
		}
		db, err := provider.Config{Log: quiet}.Open(dir)
		if err != nil {
			t.Fatalf("-addr %q: the world does not open after: %v", addr, err)
		}
		got, err := db.LoadColumn(world.ChunkPos{2, 3}, world.Overworld)
		if err == nil {
			err = worldtest.Compare(col, got)
		}
		db.Close()
		if err != nil {
			t.Fatalf("-addr %q: the world's column after: %v", addr, err)
		}
		r, err = Config{Addr: "127.0.0.1:0", Dir: dir, Offline: true, Log: quiet}.New()
		if err != nil {
			t.Fatalf("-addr %q: a server on the world after: %v", addr, err)
		}
		closeUnserved(r)
	}
}
