package prefetch

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/google/uuid"
)

// emptyWorld returns a World of dim without background goroutines, over no
// provider, closed when the test ends.
func emptyWorld(t *testing.T, dim world.Dimension) *world.World {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := world.Config{Provider: world.NopProvider{}, Dim: dim, Synchronous: true, Log: quiet}.New()
	t.Cleanup(func() { w.Close() })
	return w
}

// Handler passes on what Dragonfly's player tells it: a player of a real
// World, teleported by Player.Teleport, has the view where it lands queued
// before it is there.
func TestHandlerPassesTeleportsOn(t *testing.T) {
	w := emptyWorld(t, world.Overworld)
	pf := unstarted(nil, Options{ViewRadius: 4}, 1000)
	conf := player.Config{Name: "tester", UUID: uuid.New(), Position: mgl64.Vec3{0.5, 64, 0.5}}
	to := mgl64.Vec3{1000.5, 64, 1000.5}
	<-w.Do(func(tx *world.Tx) {
		p := tx.AddEntity(world.EntitySpawnOpts{Position: conf.Position}.New(player.Type, conf)).(*player.Player)
		p.Handle(Handler{P: pf})
		p.Teleport(to)
	}).Done()
	pf.feedBacklog(time.Now().Add(time.Hour)) // the view's later chunks too
	got := map[world.ChunkPos]bool{}
	for len(pf.queue) > 0 {
		got[(<-pf.queue).pos] = true
	}
	want := viewAround(nil, chunkOf(to), 4)
	for _, c := range want {
		if !got[c] {
			t.Fatalf("%v, in view where the player landed, was not queued (%d queued of %d)", c, len(got), len(want))
		}
	}
}

// A player that changes worlds (a portal to the Nether) has the view where
// it is in the new world queued, in that world's dimension, in its first
// tick there, when Dragonfly tells the handler.
func TestHandlerPassesWorldChangesOn(t *testing.T) {
	ow, nether := emptyWorld(t, world.Overworld), emptyWorld(t, world.Nether)
	pf := unstarted(nil, Options{ViewRadius: 4}, 1000)
	conf := player.Config{Name: "tester", UUID: uuid.New(), Position: mgl64.Vec3{0.5, 64, 0.5}}
	var h *world.EntityHandle
	<-ow.Do(func(tx *world.Tx) {
		p := tx.AddEntity(world.EntitySpawnOpts{Position: conf.Position}.New(player.Type, conf)).(*player.Player)
		p.Handle(Handler{P: pf})
		p.Tick(tx, 1) // the world it is in, for the next tick's comparison
		h = tx.RemoveEntity(p)
	}).Done()
	for len(pf.queue) > 0 {
		<-pf.queue
	}
	<-nether.Do(func(tx *world.Tx) {
		tx.AddEntity(h).(*player.Player).Tick(tx, 2)
	}).Done()
	pf.feedBacklog(time.Now().Add(time.Hour)) // the view's later chunks too
	got := map[world.ChunkPos]bool{}
	for len(pf.queue) > 0 {
		j := <-pf.queue
		if j.dim != world.Nether {
			t.Fatalf("%v queued in %v, not the Nether", j.pos, j.dim)
		}
		got[j.pos] = true
	}
	for _, c := range viewAround(nil, chunkOf(conf.Position), 4) {
		if !got[c] {
			t.Fatalf("%v, in view in the Nether, was not queued (%d queued)", c, len(got))
		}
	}
}

// refuser is a server's own handler: it refuses moves and teleports
// beyond x=500, and counts the chats it handles.
type refuser struct {
	player.NopHandler
	chats *int
}

func (r refuser) HandleTeleport(ctx *player.Context, pos mgl64.Vec3) {
	if pos[0] > 500 {
		ctx.Cancel()
	}
}

func (r refuser) HandleMove(ctx *player.Context, pos mgl64.Vec3, _ cube.Rotation) {
	if pos[0] > 500 {
		ctx.Cancel()
	}
}

func (r refuser) HandleChat(ctx *player.Context, msg *string) { *r.chats++ }

// Wrap keeps the server's own handler and feeds the prefetcher after it: a
// move or teleport the server's handler cancels reaches the prefetcher not
// at all, one it lets through does, and the events Wrap does not feed
// still reach the server's handler.
func TestWrapFeedsWhatTheServersHandlerLetsThrough(t *testing.T) {
	w := emptyWorld(t, world.Overworld)
	pf := unstarted(nil, Options{ViewRadius: 4}, 1000)
	conf := player.Config{Name: "tester", UUID: uuid.New(), Position: mgl64.Vec3{0.5, 64, 0.5}}
	chats := 0
	refused, allowed := mgl64.Vec3{1000.5, 64, 0.5}, mgl64.Vec3{-1000.5, 64, 0.5}
	<-w.Do(func(tx *world.Tx) {
		p := tx.AddEntity(world.EntitySpawnOpts{Position: conf.Position}.New(player.Type, conf)).(*player.Player)
		p.Handle(Wrap(refuser{chats: &chats}, pf))
		p.Move(mgl64.Vec3{600, 0, 0}, 0, 0)
		if _, ok := pf.players[p.UUID()]; ok {
			t.Fatal("a move the server's handler cancelled reached the prefetcher")
		}
		p.Move(mgl64.Vec3{1, 0, 0}, 0, 0)
		if tr, ok := pf.players[p.UUID()]; !ok || tr.pos != p.Position() {
			t.Fatal("a move the server's handler let through did not reach the prefetcher")
		}
		for len(pf.queue) > 0 {
			<-pf.queue
		}
		before := p.Position()
		p.Teleport(refused)
		if p.Position() != before {
			t.Fatalf("the refused teleport moved the player to %v", p.Position())
		}
		pf.feedBacklog(time.Now().Add(time.Hour))
		if n := len(pf.queue); n != 0 {
			t.Fatalf("a teleport the server's handler cancelled queued %d chunks", n)
		}
		p.Teleport(allowed)
		p.Chat("hello")
	}).Done()
	if chats != 1 {
		t.Fatalf("the server's handler saw %d chats, want 1", chats)
	}
	pf.feedBacklog(time.Now().Add(time.Hour))
	got := map[world.ChunkPos]bool{}
	for len(pf.queue) > 0 {
		got[(<-pf.queue).pos] = true
	}
	for _, c := range viewAround(nil, chunkOf(allowed), 4) {
		if !got[c] {
			t.Fatalf("%v, in view where the player landed, was not queued (%d queued)", c, len(got))
		}
	}
	if Wrap(nil, pf) == nil {
		t.Fatal("Wrap(nil) gave no handler")
	}
}

// With For, each world's players feed that world's prefetcher: a lobby's
// and an arena's, each over its own provider. A player's moves reach only
// the prefetcher of the world it is in; changing worlds, it is forgotten
// by the one it left and has its view queued by the one it enters; a world
// without a prefetcher (nil) is passed over, a teleport queues its view in
// the prefetcher of the world it happens in, and quitting is forgotten
// where the player was. Wrap routes the same way.
func TestHandlerForRoutesEachWorldToItsPrefetcher(t *testing.T) {
	lobby, arena, limbo := emptyWorld(t, world.Overworld), emptyWorld(t, world.Overworld), emptyWorld(t, world.Overworld)
	for wrap := range 2 {
		pfLobby, pfArena := unstarted(nil, Options{ViewRadius: 4}, 1000), unstarted(nil, Options{ViewRadius: 4}, 1000)
		feed := Handler{For: func(w *world.World) *Prefetcher {
			switch w {
			case lobby:
				return pfLobby
			case arena:
				return pfArena
			}
			return nil
		}}
		var h player.Handler = feed
		if wrap == 1 {
			h = feed.Wrap(refuser{chats: new(int)})
		}
		conf := player.Config{Name: "tester", UUID: uuid.New(), Position: mgl64.Vec3{0.5, 64, 0.5}}
		var id uuid.UUID // the player's: Dragonfly gives it its own
		tracked := func(pf *Prefetcher) bool { _, ok := pf.players[id]; return ok }
		var e *world.EntityHandle
		<-lobby.Do(func(tx *world.Tx) {
			p := tx.AddEntity(world.EntitySpawnOpts{Position: conf.Position}.New(player.Type, conf)).(*player.Player)
			p.Handle(h)
			id = p.UUID()
			p.Tick(tx, 1)
			p.Move(mgl64.Vec3{1, 0, 0}, 0, 0)
			e = tx.RemoveEntity(p)
		}).Done()
		if !tracked(pfLobby) || tracked(pfArena) {
			t.Fatalf("a move in the lobby: lobby tracks the player %v, arena %v", tracked(pfLobby), tracked(pfArena))
		}
		for len(pfArena.queue) > 0 {
			<-pfArena.queue
		}
		<-arena.Do(func(tx *world.Tx) {
			p := tx.AddEntity(e).(*player.Player)
			p.Tick(tx, 2) // tells the handler of the change of world
			p.Move(mgl64.Vec3{1, 0, 0}, 0, 0)
			e = tx.RemoveEntity(p)
		}).Done()
		if tracked(pfLobby) || !tracked(pfArena) {
			t.Fatalf("in the arena: lobby tracks the player %v, arena %v", tracked(pfLobby), tracked(pfArena))
		}
		pfArena.feedBacklog(time.Now().Add(time.Hour))
		if n, want := len(pfArena.queue), len(viewAround(nil, chunkOf(conf.Position), 4)); n < want {
			t.Fatalf("entering the arena queued %d chunks of its view of %d", n, want)
		}
		for len(pfArena.queue) > 0 {
			<-pfArena.queue
		}
		far := mgl64.Vec3{-1000.5, 64, 0.5} // a teleport the wrapped handler lets through
		<-arena.Do(func(tx *world.Tx) {
			p := tx.AddEntity(e).(*player.Player)
			p.Teleport(far)
			e = tx.RemoveEntity(p)
		}).Done()
		if len(pfLobby.queue) != 0 || len(pfArena.queue) == 0 || (<-pfArena.queue).pos != chunkOf(far) {
			t.Fatal("a teleport in the arena did not queue its view, nearest first, in the arena's prefetcher alone")
		}
		<-limbo.Do(func(tx *world.Tx) {
			p := tx.AddEntity(e).(*player.Player)
			p.Tick(tx, 3)
			p.Move(mgl64.Vec3{1, 0, 0}, 0, 0)
			e = tx.RemoveEntity(p)
		}).Done()
		if tracked(pfLobby) || tracked(pfArena) {
			t.Fatalf("in a world without a prefetcher: lobby tracks the player %v, arena %v", tracked(pfLobby), tracked(pfArena))
		}
		<-arena.Do(func(tx *world.Tx) {
			p := tx.AddEntity(e).(*player.Player)
			p.Tick(tx, 4)
			if !tracked(pfArena) {
				t.Fatal("back in the arena, its prefetcher does not track the player")
			}
			p.Close()
		}).Done()
		if tracked(pfArena) {
			t.Fatal("the arena's prefetcher still tracks a player that quit there")
		}
	}
}
