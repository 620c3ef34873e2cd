package tests

import (
	"os"
	"strings"
	"testing"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/convert"
	"github.com/blazeworld/blaze/internal/worldtest"
	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/df-mc/dragonfly/server/world/chunk"
)

// Issue 38 item 1: the README's steps to move an existing server, end to
// end. A real LevelDB world (../shared/testdata/worlds) is converted into
// "world" as blaze convert does; Dragonfly's usual setup
// (server.DefaultConfig) is pointed at it with the README's lines exactly
// (SaveData off, then provider.Config{...}.Open("world") as
// conf.WorldProvider); the server starts; a Bedrock client (gophertunnel)
// joins and receives the world's own blocks around its spawn, as the
// LevelDB world holds them, not generated terrain.
func TestReadmeMigrationEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	var src string
	for _, w := range worldtest.Worlds(t) {
		if strings.Contains(w, "example3") {
			src = w
		}
	}
	if src == "" {
		t.Skip("example3-1.19 is not among the test worlds")
	}
	old := worldtest.UnpackTemp(t, src)
	t.Chdir(t.TempDir()) // the README's relative "world", as a server's working directory

	// bin/blaze convert OLD world
	if r, err := convert.Convert(old, "world", convert.Options{}); err != nil || len(r.Failed) > 0 {
		t.Fatalf("convert: %v, %+v", err, r)
	}
	want := map[world.ChunkPos]*chunk.Column{}
	cols, err := worldtest.ReadAll(old, world.DefaultBlockRegistry)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		if c.Dim == world.Overworld {
			want[c.Pos] = c.Col
		}
	}

	// The README, as written; the test only takes a free port and turns
	// Xbox Live off (its keys are fetched from the network).
	uc := server.DefaultConfig()
	uc.Network.Address = freeUDPAddr(t)
	uc.Server.AuthEnabled = false
	uc.World.SaveData = false
	conf, err := uc.Config(quiet)
	if err != nil {
		t.Fatal(err)
	}
	db, err := provider.Config{Log: quiet, Durability: blazedb.DurabilityBalanced}.Open("world")
	if err != nil {
		t.Fatal(err)
	}
	conf.WorldProvider = db // conf is your server.Config; Dragonfly closes db when the server stops
	srv := conf.New()
	srv.Listen()
	accepted := make(chan struct{})
	go func() {
		for range srv.Accept() {
		}
		close(accepted)
	}()
	defer func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
		<-accepted
		if _, err := os.Stat("world/db"); err == nil {
			t.Error("a LevelDB database was made beside Blaze's world")
		}
	}()

	b := join(t, uc.Network.Address)
	defer b.close()
	hashes := b.conn.GameData().UseBlockNetworkIDHashes
	id := func(rid uint32) uint32 {
		if hashes {
			h, _ := world.DefaultBlockRegistry.RuntimeIDToHash(rid)
			return h
		}
		return rid
	}
	air := id(world.DefaultBlockRegistry.AirRuntimeID())
	spawn := b.conn.GameData().PlayerPosition
	sc := world.ChunkPos{int32(spawn[0]) >> 4, int32(spawn[2]) >> 4}
	r := world.Overworld.Range()
	seen := 0
	for pos, col := range want {
		if d := max(abs(pos[0]-sc[0]), abs(pos[1]-sc[1])); d > 2 {
			continue // beyond what a client is sent at once
		}
		got := b.column(pos[0], pos[1])
		same, solid, total := 0, 0, 0
		for x := range uint8(16) {
			for z := range uint8(16) {
				for y := r[0]; y <= r[1]; y++ {
					total++
					w := id(col.Chunk.Block(x, int16(y), z, 0))
					if w != air {
						solid++
					}
					if blockAt(got, air, [3]int{int(x), y, int(z)}) == w {
						same++
					}
				}
			}
		}
		// The World ticks the chunk before it is sent (liquids, grass):
		// a few blocks may rightly change, never the chunk.
		if solid == 0 || same < total-total/1000 {
			t.Fatalf("chunk %v: %d of %d blocks as the LevelDB world holds them (%d not air)", pos, same, total, solid)
		}
		seen++
	}
	if seen == 0 {
		t.Fatalf("no stored column within 2 chunks of the spawn chunk %v", sc)
	}
	t.Logf("%d chunks around the spawn chunk %v arrived as the LevelDB world holds them", seen, sc)
}

func abs(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}
