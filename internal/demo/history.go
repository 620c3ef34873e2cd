package demo

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/blazeworld/blaze/blazedb"
	"github.com/blazeworld/blaze/provider"
	"github.com/blazeworld/blaze/restore"
	"github.com/df-mc/dragonfly/server/block/cube"
	"github.com/df-mc/dragonfly/server/cmd"
	"github.com/df-mc/dragonfly/server/player"
	"github.com/df-mc/dragonfly/server/world"
)

// The operators' history commands (issue 36): /snapshot <name> saves
// every dimension and names the world's state (provider.DB.Snapshot), so
// that blaze rollback, or a View, can go back to it. /rollback <name>
// [radius] puts the chunks around the player back as a snapshot (or an
// RFC 3339 time) holds them, live, with package restore's budgeted job,
// after taking a snapshot that undoes it.
//
// Commands are registered with Dragonfly's process-wide command registry:
// the last server New builds is the one they act on.

// history is what the commands act on. Safe for concurrent use.
type history struct {
	db     *provider.DB
	worlds func() []*world.World // every dimension's, to save first
	ops    []string              // the players allowed, by name
	log    *slog.Logger

	mu   sync.Mutex
	busy bool // a rollback is running: one at a time
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

// Rollback radii, in chunks around the player's.
const (
	defaultRollbackRadius = 4
	maxRollbackRadius     = 16
)

// rollbackBudget is the longest a rollback takes from one of the World's
// ticks.
const rollbackBudget = 5 * time.Millisecond

// rollbackProgress is how often a rollback reports its progress.
const rollbackProgress = time.Second

// rollback puts area of w back as point (a snapshot's name or an RFC 3339
// time) holds it, live, and returns when it is done, with the snapshot
// taken first (named before-rollback-TIME) that undoes it. progress is
// called every rollbackProgress while the job runs. One rollback runs at
// a time. Not on a World's tick: it saves the worlds and waits for the
// job's slices, which run on the ticks.
func (h *history) rollback(w *world.World, point string, area restore.Area, progress func(restore.Stats)) (st restore.Stats, undo string, err error) {
	h.mu.Lock()
	if h.busy {
		h.mu.Unlock()
		return st, "", errors.New("another rollback is running")
	}
	h.busy = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.busy = false
		h.mu.Unlock()
	}()
	v, err := h.db.At(point) // a point that does not read takes no snapshot
	if err != nil {
		return st, "", err
	}
	defer func() { err = errors.Join(err, v.Close()) }()
	if undo, err = h.undoSnapshot(); err != nil {
		return st, "", err
	}
	job, err := restore.Config{TickBudget: rollbackBudget}.Start(w, v, area)
	if err != nil {
		return st, undo, err
	}
	t := time.NewTicker(rollbackProgress)
	defer t.Stop()
	for {
		select {
		case <-job.Done():
			return job.Stats(), undo, job.Err()
		case <-t.C:
			if progress != nil {
				progress(job.Stats())
			}
		}
	}
}

// undoSnapshot saves the worlds and takes the snapshot a rollback is
// undone to, named before-rollback-YYYYMMDDTHHMMSSZ (-2, -3… when taken
// twice in a second), as blaze rollback names its own.
func (h *history) undoSnapshot() (string, error) {
	base := "before-rollback-" + time.Now().UTC().Format("20060102T150405Z")
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		err := h.snapshot(name)
		if errors.Is(err, blazedb.ErrExists) && i < 100 {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, nil
	}
}

// rollbackArea is the square of radius chunks around pos in w.
func rollbackArea(w *world.World, pos cube.Pos, radius int) restore.Area {
	c := world.ChunkPos{int32(pos[0] >> 4), int32(pos[2] >> 4)}
	r := int32(radius)
	return restore.Area{Dim: w.Dimension(), Min: world.ChunkPos{c[0] - r, c[1] - r}, Max: world.ChunkPos{c[0] + r, c[1] + r}}
}

// rollbackCommand is /rollback <name> [radius].
type rollbackCommand struct {
	Name   string            `cmd:"name"`
	Radius cmd.Optional[int] `cmd:"radius"`
	h      *history
}

func (c rollbackCommand) Allow(src cmd.Source) bool { return c.h.allowed(src) }

func (c rollbackCommand) Run(src cmd.Source, o *cmd.Output, tx *world.Tx) {
	p, ok := src.(*player.Player)
	if !ok {
		o.Error("only an operator in the game can roll back")
		return
	}
	radius := c.Radius.LoadOr(defaultRollbackRadius)
	if radius < 0 || radius > maxRollbackRadius {
		o.Errorf("radius %d: want 0 to %d chunks", radius, maxRollbackRadius)
		return
	}
	area := rollbackArea(tx.World(), cube.PosFromVec3(p.Position()), radius)
	o.Printf("rolling %d×%d chunks around you back to %q…", 2*radius+1, 2*radius+1, c.Name)
	h, name, ph, w, by := c.h, c.Name, p.H(), tx.World(), p.Name()
	tell := func(msg string) {
		ph.Do(func(_ *world.Tx, e world.Entity) { e.(*player.Player).Message(msg) })
	}
	go func() {
		st, undo, err := h.rollback(w, name, area, func(st restore.Stats) {
			tell(fmt.Sprintf("rollback to %q: %d of %d columns compared, %d blocks set", name, st.ColumnsCompared, st.Columns, st.BlocksSet))
		})
		if err != nil {
			h.log.Error("rollback failed", "to", name, "area", area, "by", by, "err", err)
			msg := fmt.Sprintf("rollback to %q failed: %v", name, err)
			if undo != "" {
				msg += fmt.Sprintf("; /rollback %s undoes what it did", undo)
			}
			tell(msg)
			return
		}
		h.log.Info("rollback done", "to", name, "area", area, "by", by, "blocks", st.BlocksSet, "ticks", st.Ticks, "longest", st.MaxTick, "undo", undo)
		tell(fmt.Sprintf("rollback to %q done: %d blocks set in %d of %d columns, over %d ticks (at most %v a tick); /rollback %s %d from the same chunk undoes it",
			name, st.BlocksSet, st.ColumnsChanged, st.Columns, st.Ticks, st.MaxTick.Round(time.Microsecond), undo, radius))
	}()
}

// registerHistory registers the operators' commands for db's server.
func registerHistory(h *history) {
	cmd.Register(cmd.New("snapshot", "Save the world and name its state (operators)", nil, snapshotCommand{h: h}))
	cmd.Register(cmd.New("rollback", "Put the chunks around you back as a snapshot holds them, live (operators)", nil, rollbackCommand{h: h}))
}
