package tests

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/internal/demo"
	"github.com/df-mc/dragonfly/server"
	"github.com/df-mc/dragonfly/server/block"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl32"
	"github.com/google/uuid"
	"github.com/sandertv/gophertunnel/minecraft"
	"github.com/sandertv/gophertunnel/minecraft/protocol"
	"github.com/sandertv/gophertunnel/minecraft/protocol/login"
	"github.com/sandertv/gophertunnel/minecraft/protocol/packet"
)

// freeUDPAddr returns a free UDP port on loopback.
func freeUDPAddr(t *testing.T) string {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().String()
}

// startDemo starts the demo server on addr with the world in dir, serving
// players as cmd/demo-server does (demo.Running.Serve), with ops as its
// operators. stop closes the server and returns what Serve returned.
func startDemo(t *testing.T, dir, addr string, ops ...string) (r *demo.Running, stop func() error) {
	t.Helper()
	r, err := demo.Config{Addr: addr, Dir: dir, Durability: blazedb.DurabilitySafe, Offline: true, Operators: ops, Log: quiet}.New()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- r.Serve() }()
	return r, func() error {
		if err := r.Server.Close(); err != nil { // saves every chunk into Blaze
			return err
		}
		return <-served
	}
}

// bot is a Bedrock client on gophertunnel.
type bot struct {
	t    *testing.T
	conn *minecraft.Conn
	tick uint64
}

func join(t *testing.T, addr string) *bot {
	t.Helper()
	var conn *minecraft.Conn
	var err error
	for try := 0; try < 20; try++ { // the listener may need a moment
		conn, err = minecraft.Dialer{IdentityData: login.IdentityData{DisplayName: "BlazeBot"}}.DialTimeout("raknet", addr, 5*time.Second)
		if err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	if err := conn.DoSpawnTimeout(20 * time.Second); err != nil {
		t.Fatalf("spawn: %v", err)
	}
	return &bot{t: t, conn: conn}
}

// walk moves the player along +X, one block a tick, as the client reports
// its movement (server-authoritative movement takes PlayerAuthInput).
func (b *bot) walk(blocks int) {
	pos := b.conn.GameData().PlayerPosition
	for i := 0; i < blocks*5; i++ {
		pos[0] += 0.2
		b.tick++
		if err := b.conn.WritePacket(&packet.PlayerAuthInput{Position: pos, Tick: b.tick, Delta: mgl32.Vec3{0.2, 0, 0},
			MoveVector: mgl32.Vec2{0, 1}, InputMode: packet.InputModeMouse, PlayMode: packet.PlayModeNormal}); err != nil {
			b.t.Fatalf("walk: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// column requests every sub-chunk of the chunk at (cx, cz) in the
// overworld and returns its blocks, decoded from the sub-chunk payloads:
// [sub-chunk][layer][4096] runtime (network) ids; nil layers are air.
func (b *bot) column(cx, cz int32) [][][]uint32 {
	r := world.Overworld.Range()
	n := r.Height()>>4 + 1
	offsets := make([]protocol.SubChunkOffset, n)
	for i := range offsets {
		offsets[i] = protocol.SubChunkOffset{0, int8(r[0]>>4 + i), 0}
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if err := b.conn.WritePacket(&packet.SubChunkRequest{Position: protocol.SubChunkPos{cx, 0, cz}, Offsets: offsets}); err != nil {
			b.t.Fatalf("request sub-chunks: %v", err)
		}
		b.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			pk, err := b.conn.ReadPacket()
			if errors.Is(err, context.DeadlineExceeded) {
				break // no answer yet on a loaded machine: ask again
			}
			if err != nil {
				b.t.Fatalf("read: %v", err)
			}
			sc, ok := pk.(*packet.SubChunk)
			if !ok || sc.Position != (protocol.SubChunkPos{cx, 0, cz}) {
				continue
			}
			out := make([][][]uint32, n)
			complete := true
			for _, e := range sc.SubChunkEntries {
				i := int(e.Offset[1]) - r[0]>>4
				switch e.Result {
				case protocol.SubChunkResultSuccess:
					payload, _ := e.RawPayload.Value()
					out[i] = decodeSubChunk(b.t, payload)
				case protocol.SubChunkResultSuccessAllAir:
				default:
					complete = false // the chunk is not loaded for us yet
				}
			}
			if complete {
				return out
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Fatalf("chunk %d,%d never arrived", cx, cz)
	return nil
}

func (b *bot) close() { b.conn.Close() }

// decodeSubChunk decodes a network sub-chunk (version 9) into its layers.
func decodeSubChunk(t *testing.T, p []byte) [][]uint32 {
	if len(p) < 3 || p[0] != 9 {
		t.Fatalf("sub-chunk payload of %d bytes, version %v", len(p), p[:min(1, len(p))])
	}
	layers := int(p[1])
	p = p[3:]
	out := make([][]uint32, layers)
	for l := 0; l < layers; l++ {
		bits := int(p[0] >> 1)
		p = p[1:]
		words := 0
		if bits > 0 {
			words = 4096 / (32 / bits)
			if bits == 3 || bits == 5 || bits == 6 {
				words++
			}
		}
		idx := p[:words*4]
		p = p[words*4:]
		count := 1
		if bits > 0 {
			v, n := varint32(p)
			count, p = int(v), p[n:]
		}
		palette := make([]uint32, count)
		for i := range palette {
			v, n := varint32(p)
			palette[i], p = uint32(v), p[n:]
		}
		blocks := make([]uint32, 4096)
		for i := range blocks {
			if bits == 0 {
				blocks[i] = palette[0]
				continue
			}
			per := 32 / bits
			w := uint32(idx[i/per*4]) | uint32(idx[i/per*4+1])<<8 | uint32(idx[i/per*4+2])<<16 | uint32(idx[i/per*4+3])<<24
			blocks[i] = palette[(w>>(uint(i%per)*uint(bits)))&(1<<bits-1)]
		}
		out[l] = blocks
	}
	return out
}

func varint32(p []byte) (int32, int) {
	var ux uint32
	for i := 0; i < 5 && i < len(p); i++ {
		ux |= uint32(p[i]&0x7f) << (7 * i)
		if p[i] < 0x80 {
			x := int32(ux >> 1)
			if ux&1 != 0 {
				x = ^x
			}
			return x, i + 1
		}
	}
	return 0, len(p)
}

// blockAt reads a block (layer 0) from decoded sub-chunks.
func blockAt(col [][][]uint32, air uint32, pos cube.Pos) uint32 {
	r := world.Overworld.Range()
	sub := col[(pos[1]-r[0])>>4]
	if len(sub) == 0 {
		return air
	}
	x, y, z := pos[0]&15, pos[1]&15, pos[2]&15
	return sub[0][(x<<8)|(z<<4)|y]
}

// TestEndToEnd plays the demo server with a real Bedrock client: it joins,
// walks, receives chunks through sub-chunk requests, sees blocks placed and
// broken, and after the server restarts on the same Blaze world sees the
// changed blocks and every other block as before.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	dir := t.TempDir() + "/world"
	addr := freeUDPAddr(t)
	r, stop := startDemo(t, dir, addr)
	srv := r.Server

	// Server-side edits in the spawn chunk: place stone, break the surface.
	var placed, broken, kept cube.Pos
	<-srv.World().Do(func(tx *world.Tx) {
		top := tx.HighestBlock(7, 7)
		placed, broken, kept = cube.Pos{2, top + 1, 3}, cube.Pos{5, top, 5}, cube.Pos{7, top, 7}
		tx.SetBlock(placed, block.Stone{}, nil)
		tx.SetBlock(broken, block.Air{}, nil)
	}).Done()

	b := join(t, addr)
	hashes := b.conn.GameData().UseBlockNetworkIDHashes
	id := func(bl world.Block) uint32 {
		rid := world.BlockRuntimeID(bl)
		if hashes {
			h, _ := world.DefaultBlockRegistry.RuntimeIDToHash(rid)
			return h
		}
		return rid
	}
	air, stone := id(block.Air{}), id(block.Stone{})
	surface := func(col [][][]uint32) uint32 { return blockAt(col, air, kept) }

	start := b.conn.GameData().PlayerPosition
	b.walk(3)
	// The server applies movement on its own ticks: wait for it.
	var moved float32
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if moved = playerX(t, srv) - start[0]; moved >= 1 {
			break
		}
	}
	t.Logf("walked %.2f blocks", moved)
	if moved < 1 {
		t.Fatalf("the walk moved the player %.2f blocks", moved)
	}
	first := map[[2]int32][][][]uint32{}
	for _, c := range [][2]int32{{0, 0}, {1, 0}, {0, 1}, {-1, -1}} {
		first[c] = b.column(c[0], c[1])
	}
	col := first[[2]int32{0, 0}]
	if got := blockAt(col, air, placed); got != stone {
		t.Fatalf("placed block: %d, want stone %d", got, stone)
	}
	if got := blockAt(col, air, broken); got != air {
		t.Fatalf("broken block: %d, want air", got)
	}
	if surface(col) == air {
		t.Fatal("the surface is missing")
	}
	// The prefetcher followed the walk, as the demo wires it: the
	// player's moves reached it and it predicted the chunks ahead; when
	// the player quits it forgets them.
	if st := r.Prefetcher.Stats(); st.Players != 1 || st.Predicted == 0 {
		t.Fatalf("prefetcher after the walk: %+v, want 1 player followed and chunks predicted", st)
	}
	b.close()
	for deadline := time.Now().Add(10 * time.Second); r.Prefetcher.Stats().Players != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("prefetcher after the player quit: %+v, want no player followed", r.Prefetcher.Stats())
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// A new server on the same directory: a fresh provider reading Blaze.
	_, stop = startDemo(t, dir, addr)
	defer stop()
	b = join(t, addr)
	defer b.close()
	b.walk(2)
	// The test's own edits let random ticks change two blocks, before or
	// after the restart: breaking the surface block exposes the dirt under
	// it to light, and grass spreads onto it; placing stone covers the
	// grass under it, which turns to dirt. Only those may rightly differ.
	exposed, covered := broken.Side(cube.FaceDown), placed.Side(cube.FaceDown)
	for c, before := range first {
		after := b.column(c[0], c[1])
		var skip []cube.Pos
		if c == [2]int32{0, 0} {
			skip = append(skip, exposed, covered)
		}
		if err := sameBlocks(before, after, air, skip...); err != nil {
			t.Fatalf("chunk %v after restart: %v", c, err)
		}
	}
	// Had Blaze lost the chunk, the generator would have made it again:
	// the stone would be gone and the broken block back.
	again := b.column(0, 0)
	if got := blockAt(again, air, placed); got != stone {
		t.Fatalf("placed block after restart: %d, want stone", got)
	}
	if got := blockAt(again, air, broken); got != air {
		t.Fatalf("broken block after restart: %d, want air", got)
	}
}

// playerX returns the X position of the (only) player, seen by the server.
func playerX(t *testing.T, srv *server.Server) float32 {
	var x float32
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		found := false
		<-srv.World().Do(func(tx *world.Tx) {
			for p := range tx.Players() {
				x, found = float32(p.Position()[0]), true
			}
		}).Done()
		if found {
			return x
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no player in the world")
	return 0
}

// sameBlocks compares two decoded columns block by block in every layer,
// except at the positions in skip.
func sameBlocks(a, b [][][]uint32, air uint32, skip ...cube.Pos) error {
	r := world.Overworld.Range()
	skipped := func(s, i int) bool {
		for _, p := range skip {
			if (p[1]-r[0])>>4 == s && (p[0]&15)<<8|(p[2]&15)<<4|p[1]&15 == i {
				return true
			}
		}
		return false
	}
	for s := range a {
		layers := max(len(a[s]), len(b[s]))
		for l := 0; l < layers; l++ {
			for i := 0; i < 4096; i++ {
				if skipped(s, i) {
					continue
				}
				va, vb := air, air
				if l < len(a[s]) {
					va = a[s][l][i]
				}
				if l < len(b[s]) {
					vb = b[s][l][i]
				}
				if va != vb {
					return fmt.Errorf("sub-chunk %d layer %d index %d: %d before, %d after", s, l, i, va, vb)
				}
			}
		}
	}
	return nil
}

// id returns the network id the client knows bl by.
func (b *bot) id(bl world.Block) uint32 {
	rid := world.BlockRuntimeID(bl)
	if b.conn.GameData().UseBlockNetworkIDHashes {
		h, _ := world.DefaultBlockRegistry.RuntimeIDToHash(rid)
		return h
	}
	return rid
}

// command runs a command as a Bedrock client does: a CommandRequest with
// the player as its origin.
func (b *bot) command(line string) {
	if err := b.conn.WritePacket(&packet.CommandRequest{CommandLine: line,
		CommandOrigin: protocol.CommandOrigin{Origin: protocol.CommandOriginPlayer, UUID: uuid.New()}}); err != nil {
		b.t.Fatalf("command %s: %v", line, err)
	}
}

// await reads packets, each passed to seen, until a chat message
// containing want arrives, and fails on a command's error output or a
// message containing fail.
func (b *bot) await(want, fail string, seen func(packet.Packet)) {
	b.t.Helper()
	b.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	for {
		pk, err := b.conn.ReadPacket()
		if err != nil {
			b.t.Fatalf("waiting for %q: %v", want, err)
		}
		if seen != nil {
			seen(pk)
		}
		switch pk := pk.(type) {
		case *packet.CommandOutput:
			for _, m := range pk.OutputMessages {
				if !m.Success {
					b.t.Fatalf("waiting for %q: the command failed: %s %v", want, m.Message, m.Parameters)
				}
			}
		case *packet.Text:
			if strings.Contains(pk.Message, fail) {
				b.t.Fatalf("waiting for %q: %s", want, pk.Message)
			}
			if strings.Contains(pk.Message, want) {
				b.t.Logf("server: %s", pk.Message)
				return
			}
		}
	}
}

// playerPos returns the position of the (only) player, seen by the server.
func playerPos(t *testing.T, srv *server.Server) cube.Pos {
	var pos cube.Pos
	found := false
	for deadline := time.Now().Add(5 * time.Second); !found && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		<-srv.World().Do(func(tx *world.Tx) {
			for p := range tx.Players() {
				pos, found = cube.PosFromVec3(p.Position()), true
			}
		}).Done()
	}
	if !found {
		t.Fatal("no player in the world")
	}
	return pos
}

// TestEndToEndRollback plays issue 36's history with a real Bedrock
// client: an operator takes a snapshot with /snapshot, blocks around them
// change (and the client sees them change), /rollback puts the chunks
// around them back live, and the client sees the old blocks again without
// rejoining: the server sends the block updates (or the chunk again) to
// the client that is in the world.
func TestEndToEndRollback(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	dir := t.TempDir() + "/world"
	addr := freeUDPAddr(t)
	r, stop := startDemo(t, dir, addr, "BlazeBot")
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	srv := r.Server
	b := join(t, addr)
	defer b.close()
	air, glow := b.id(block.Air{}), b.id(block.Glowstone{})

	at := playerPos(t, srv)
	cx, cz := int32(at[0]>>4), int32(at[2]>>4)
	before := b.column(cx, cz)
	b.command("/snapshot s")
	b.await(`snapshot "s" taken`, "failed", nil)

	// Blocks change in the player's chunk: glowstone placed on the
	// surface and surface blocks broken.
	var changed []cube.Pos
	<-srv.World().Do(func(tx *world.Tx) {
		for i := 0; i < 3; i++ {
			x, z := int(cx)<<4+2+5*i, int(cz)<<4+3+4*i
			top := tx.HighestBlock(x, z)
			placed, broken := cube.Pos{x, top + 1, z}, cube.Pos{x + 1, tx.HighestBlock(x+1, z), z}
			tx.SetBlock(placed, block.Glowstone{}, nil)
			tx.SetBlock(broken, block.Air{}, nil)
			changed = append(changed, placed, broken)
		}
	}).Done()
	changedCol := b.column(cx, cz)
	for i, p := range changed {
		want := glow
		if i%2 == 1 {
			want = air
		}
		if got := blockAt(changedCol, air, p); got != want {
			t.Fatalf("changed block %v: the client sees %d, want %d", p, got, want)
		}
		if blockAt(before, air, p) == want {
			t.Fatalf("block %v was %d before the change too", p, want)
		}
	}

	// Rolled back, live: what the client is sent on the same connection.
	updates := map[cube.Pos]uint32{}
	resent := false
	b.command("/rollback s 2")
	b.await(`rollback to "s" done`, "failed", func(pk packet.Packet) {
		switch pk := pk.(type) {
		case *packet.UpdateBlock:
			if pk.Layer == 0 {
				updates[cube.Pos{int(pk.Position[0]), int(pk.Position[1]), int(pk.Position[2])}] = pk.NewBlockRuntimeID
			}
		case *packet.LevelChunk:
			resent = resent || pk.Position == (protocol.ChunkPos{cx, cz})
		}
	})
	for _, p := range changed {
		got, ok := updates[p]
		if !ok && !resent {
			t.Fatalf("block %v: the client was sent neither a block update nor the chunk again", p)
		}
		if ok && got != blockAt(before, air, p) {
			t.Fatalf("block %v: updated to %d, want %d as before the change", p, got, blockAt(before, air, p))
		}
	}
	t.Logf("the rollback sent %d block updates; chunk sent again: %v", len(updates), resent)
	// The chunk the client reads now, still connected, is as it was.
	if err := sameBlocks(before, b.column(cx, cz), air); err != nil {
		t.Fatalf("chunk %d,%d after the rollback: %v", cx, cz, err)
	}
}
