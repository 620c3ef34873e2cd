package demo

import (
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/blazeworld/blaze/provider"
	"github.com/df-mc/dragonfly/server"
)

// checkpoints saves the server in place of Dragonfly's autosave: every
// interval, provider.Checkpoint writes every world's changed chunks and
// every online player's data as one atomic batch, so that a crash never
// keeps a chest's new contents without the matching inventory (the crash
// dupe). Safe for concurrent use.
type checkpoints struct {
	srv   *server.Server
	every time.Duration
	log   *slog.Logger
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once // closes stop

	mu   sync.Mutex // one checkpoint at a time; guards errs
	errs []error
}

func startCheckpoints(srv *server.Server, every time.Duration, log *slog.Logger) *checkpoints {
	c := &checkpoints{srv: srv, every: every, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

func (c *checkpoints) run() {
	defer close(c.done)
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.checkpoint()
		}
	}
}

// checkpoint takes one checkpoint, logging and keeping a failure.
func (c *checkpoints) checkpoint() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	if err := provider.Checkpoint(c.srv); err != nil {
		c.log.Error("checkpoint: "+err.Error(), "took", time.Since(start))
		c.errs = append(c.errs, err)
		return err
	}
	c.log.Debug("checkpoint", "took", time.Since(start))
	return nil
}

// Stop stops the checkpoints, waiting for one in progress, and returns
// every error they met.
func (c *checkpoints) Stop() error {
	c.once.Do(func() { close(c.stop) })
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Join(c.errs...)
}

// Close shuts the server down: it stops the periodic checkpoints, takes a
// last one while every player is still online, then closes the server
// (which saves each player again as it leaves, and each world). Call it
// once, instead of Server.Close.
func (r *Running) Close() error {
	var err error
	if r.checkpoints != nil {
		r.checkpoints.Stop()
		err = r.checkpoints.checkpoint()
	}
	return errors.Join(err, r.Server.Close())
}

// CloseOnProgramEnd calls Close on SIGINT or SIGTERM.
func (r *Running) CloseOnProgramEnd() {
	c := make(chan os.Signal, 2)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-c
		if err := r.Close(); err != nil {
			r.log.Error("close server: " + err.Error())
		}
	}()
}
