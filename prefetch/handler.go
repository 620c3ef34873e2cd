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
// HandleChangeWorld. With P alone, a Handler serves the players of the
// worlds whose provider is P's Source (one Blaze provider serves all three
// dimensions of a world). A server whose worlds have providers of their
// own, such as a lobby and its arenas, sets For instead, and each world's
// players feed that world's Prefetcher.
//
// A Handler holds nothing but P and For; it is safe for concurrent use if
// For is (P is), so one Handler may serve every player at once.
type Handler struct {
	player.NopHandler
	P *Prefetcher
	// For, when set, returns the Prefetcher of a world's players: the one
	// over that world's provider, or nil for a world that has none. P is
	// then unused. When a player changes worlds, the Prefetcher of the
	// world it left forgets it and that of the world it enters queues its
	// view there.
	For func(*world.World) *Prefetcher
}

// of returns the Prefetcher of w's players, or nil.
func (h Handler) of(w *world.World) *Prefetcher {
	if h.For != nil {
		return h.For(w)
	}
	return h.P
}

// HandleMove passes the new position on.
func (h Handler) HandleMove(ctx *player.Context, pos mgl64.Vec3, _ cube.Rotation) {
	p := ctx.Player()
	w := p.Tx().World()
	if pf := h.of(w); pf != nil {
		pf.UpdatePlayer(p.UUID(), pos, w.Dimension())
	}
}

// HandleTeleport queues the view where the player is about to appear.
func (h Handler) HandleTeleport(ctx *player.Context, pos mgl64.Vec3) {
	p := ctx.Player()
	w := p.Tx().World()
	if pf := h.of(w); pf != nil {
		pf.Teleport(p.UUID(), pos, w.Dimension())
	}
}

// HandleChangeWorld queues the view where the player is in its new world
// (a portal to another dimension), as a teleport's. Dragonfly calls it in
// the player's first tick there, as its session starts loading that view.
// With For, the Prefetcher of the world left, if another, forgets the
// player.
func (h Handler) HandleChangeWorld(p *player.Player, before, after *world.World) {
	from, to := h.of(before), h.of(after)
	if from != nil && from != to {
		from.RemovePlayer(p.UUID())
	}
	if to != nil {
		to.Teleport(p.UUID(), p.Position(), after.Dimension())
	}
}

// HandleQuit forgets the player. Only For needs to know its world.
func (h Handler) HandleQuit(p *player.Player) {
	pf := h.P
	if h.For != nil {
		pf = h.For(p.Tx().World())
	}
	if pf != nil {
		pf.RemovePlayer(p.UUID())
	}
}

// Wrap returns h, a server's own player handler, with the player's moves,
// teleports, world changes and quitting passed on to pf as Handler passes
// them, each after h has handled it. A move or teleport that h cancels is
// not passed on, so nothing is warmed for a place the player never goes:
//
//	for p := range srv.Accept() { p.Handle(prefetch.Wrap(myHandler{p}, pf)) }
//
// Every other event goes to h alone. A nil h handles nothing, as Handler.
// The result is safe for concurrent use if h is.
func Wrap(h player.Handler, pf *Prefetcher) player.Handler { return Handler{P: pf}.Wrap(h) }

// Wrap is the package's Wrap for any Handler, one with For included: it
// returns h with the events f passes on passed to f after h.
func (f Handler) Wrap(h player.Handler) player.Handler {
	if h == nil {
		h = player.NopHandler{}
	}
	return wrapped{Handler: h, feed: f}
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
