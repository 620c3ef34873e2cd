package prefetch

import (
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/world"
	"github.com/go-gl/mathgl/mgl64"
)

// Handler feeds a player's moves to a Prefetcher. Wiring it is one line:
//
//	for p := range srv.Accept() { p.Handle(prefetch.Handler{P: pf}) }
//
// A server with a handler of its own wraps it instead (Wrap), or calls
// pf.UpdatePlayer from HandleMove and pf.Teleport from HandleTeleport and
// HandleChangeWorld. A Handler serves
// the players of the worlds whose provider is the Prefetcher's Source
// (one Blaze provider serves all three dimensions of a world).
// A Handler holds nothing but P, which is safe for concurrent use, so one
// Handler may serve every player at once.
type Handler struct {
	player.NopHandler
	P *Prefetcher
}

// HandleMove passes the new position on.
func (h Handler) HandleMove(ctx *player.Context, pos mgl64.Vec3, _ cube.Rotation) {
	p := ctx.Player()
	h.P.UpdatePlayer(p.UUID(), pos, p.Tx().World().Dimension())
}

// HandleTeleport queues the view where the player is about to appear.
func (h Handler) HandleTeleport(ctx *player.Context, pos mgl64.Vec3) {
	p := ctx.Player()
	h.P.Teleport(p.UUID(), pos, p.Tx().World().Dimension())
}

// HandleChangeWorld queues the view where the player is in its new world
// (a portal to another dimension), as a teleport's. Dragonfly calls it in
// the player's first tick there, as its session starts loading that view.
func (h Handler) HandleChangeWorld(p *player.Player, _, after *world.World) {
	h.P.Teleport(p.UUID(), p.Position(), after.Dimension())
}

// HandleQuit forgets the player.
func (h Handler) HandleQuit(p *player.Player) { h.P.RemovePlayer(p.UUID()) }

// Wrap returns h, a server's own player handler, with the player's moves,
// teleports, world changes and quitting passed on to pf as Handler passes
// them, each after h has handled it. A move or teleport that h cancels is
// not passed on, so nothing is warmed for a place the player never goes:
//
//	for p := range srv.Accept() { p.Handle(prefetch.Wrap(myHandler{p}, pf)) }
//
// Every other event goes to h alone. A nil h handles nothing, as Handler.
// The result is safe for concurrent use if h is.
func Wrap(h player.Handler, pf *Prefetcher) player.Handler {
	if h == nil {
		h = player.NopHandler{}
	}
	return wrapped{Handler: h, feed: Handler{P: pf}}
}

// wrapped is Wrap's handler: the embedded handler's methods, with feed's
// after those of its four.
type wrapped struct {
	player.Handler
	feed Handler
}

func (w wrapped) HandleMove(ctx *player.Context, pos mgl64.Vec3, rot cube.Rotation) {
	if w.Handler.HandleMove(ctx, pos, rot); !ctx.Cancelled() {
		w.feed.HandleMove(ctx, pos, rot)
	}
}

func (w wrapped) HandleTeleport(ctx *player.Context, pos mgl64.Vec3) {
	if w.Handler.HandleTeleport(ctx, pos); !ctx.Cancelled() {
		w.feed.HandleTeleport(ctx, pos)
	}
}

func (w wrapped) HandleChangeWorld(p *player.Player, before, after *world.World) {
	w.Handler.HandleChangeWorld(p, before, after)
	w.feed.HandleChangeWorld(p, before, after)
}

func (w wrapped) HandleQuit(p *player.Player) {
	w.Handler.HandleQuit(p)
	w.feed.HandleQuit(p)
}

var (
	_ player.Handler = Handler{}
	_ player.Handler = wrapped{}
)
