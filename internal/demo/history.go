package demo

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server/cmd"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/world"
)

// The operators' history commands (issue 36): /snapshot <name> saves
// every dimension and names the world's state (provider.DB.Snapshot), so
// that blaze rollback, or a View, can go back to it. /rollback <name>
// [radius], a live restore around the player, needs package restore.
//
// Commands are registered with Dragonfly's process-wide command registry:
// the last server New builds is the one they act on.

// history is what the commands act on. Safe for concurrent use.
type history struct {
	db     *provider.DB
	worlds func() []*world.World // every dimension's, to save first
	ops    []string              // the players allowed, by name
	log    *slog.Logger
}

// allowed reports whether src may run an operator command.
func (h *history) allowed(src cmd.Source) bool {
	p, ok := src.(*player.Player)
	return ok && slices.Contains(h.ops, p.Name())
}

// snapshot saves what every World holds in memory, then takes the
// snapshot: it holds every change made before the command. Not on a
// World's tick: saving waits for the ticks.
func (h *history) snapshot(name string) error {
	for _, w := range h.worlds() {
		w.Save()
	}
	return h.db.Snapshot(name)
}

// snapshotCommand is /snapshot <name>.
type snapshotCommand struct {
	Name string `cmd:"name"`
	h    *history
}

func (c snapshotCommand) Allow(src cmd.Source) bool { return c.h.allowed(src) }

func (c snapshotCommand) Run(src cmd.Source, o *cmd.Output, _ *world.Tx) {
	p, ok := src.(*player.Player)
	if !ok {
		o.Error("only an operator in the game can take a snapshot")
		return
	}
	o.Printf("taking snapshot %q…", c.Name)
	h, name, ph := c.h, c.Name, p.H()
	go func() {
		err := h.snapshot(name)
		msg := fmt.Sprintf("snapshot %q taken", name)
		if err != nil {
			h.log.Error("snapshot failed", "name", name, "err", err)
			msg = fmt.Sprintf("snapshot %q failed: %v", name, err)
		} else {
			h.log.Info("snapshot taken", "name", name, "by", p.Name())
		}
		ph.Do(func(_ *world.Tx, e world.Entity) { e.(*player.Player).Message(msg) })
	}()
}

// registerHistory registers the operators' commands for db's server.
func registerHistory(h *history) {
	cmd.Register(cmd.New("snapshot", "Save the world and name its state (operators)", nil, snapshotCommand{h: h}))
}
