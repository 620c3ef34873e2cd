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
// A server with its own handler calls pf.UpdatePlayer from HandleMove and
// pf.Teleport from HandleTeleport and HandleChangeWorld. A Handler serves
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

var _ player.Handler = Handler{}
