package demo

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/blazeworld/blaze/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsServer serves Prometheus' /metrics over HTTP on its own listener
// (Config.Metrics): Blaze's figures (package metrics), read at each scrape,
// and the Go runtime's and the process's; and beside them a page with a
// map of the world (mappage.go). Its stop is safe to call from any
// goroutine, more than once.
type metricsServer struct {
	srv  *http.Server
	addr net.Addr
	done chan error // the result of Serve, once

	stopOnce sync.Once
	stopErr  error
}

// withMetrics builds the server as New does, with /metrics served on addr.
// The address is taken first, so that one that cannot be had fails before
// the world is opened.
func (c Config) withMetrics() (*Running, error) {
	ln, err := net.Listen("tcp", c.Metrics)
	if err != nil {
		return nil, fmt.Errorf("cannot serve metrics on %s: %w", c.Metrics, err)
	}
	inner := c
	inner.Metrics = ""
	r, err := inner.New()
	if err != nil {
		ln.Close()
		return nil, err
	}
	src := metrics.Sources{Engine: r.World.Engine(), Columns: r.World}
	if r.Prefetcher != nil {
		src.Prefetcher = r.Prefetcher
	}
	r.metrics = serveMetrics(ln, src, &mapPage{world: r.World, arena: r.Arena}, c.logger())
	return r, nil
}

// logger is c.Log, or the default when it is unset.
func (c Config) logger() *slog.Logger {
	if c.Log == nil {
		return slog.Default()
	}
	return c.Log
}

func serveMetrics(ln net.Listener, src metrics.Sources, page *mapPage, log *slog.Logger) *metricsServer {
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(src), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/map.png", page.image)
	mux.HandleFunc("/", page.page)
	m := &metricsServer{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		addr: ln.Addr(),
		done: make(chan error, 1),
	}
	go func() { m.done <- m.srv.Serve(ln) }()
	log.Info("serving metrics", "url", "http://"+ln.Addr().String()+"/metrics", "map", "http://"+ln.Addr().String()+"/")
	return m
}

// stop closes the listener and every connection, and waits for the server
// to end. It returns why the server ended, if not because it was stopped.
func (m *metricsServer) stop() error {
	m.stopOnce.Do(func() {
		closeErr := m.srv.Close()
		if err := <-m.done; !errors.Is(err, http.ErrServerClosed) {
			m.stopErr = fmt.Errorf("metrics server: %w", err)
		}
		if closeErr != nil {
			m.stopErr = errors.Join(m.stopErr, closeErr)
		}
	})
	return m.stopErr
}

// MetricsAddr is the address /metrics is served on (Config.Metrics, with
// the port chosen when it was 0), or nil without Config.Metrics.
func (r *Running) MetricsAddr() net.Addr {
	if r.metrics == nil {
		return nil
	}
	return r.metrics.addr
}

// StopMetrics stops serving /metrics, which Serve does when the server
// closes; a caller that never serves calls it itself. It is idempotent.
func (r *Running) StopMetrics() error {
	if r.metrics == nil {
		return nil
	}
	return r.metrics.stop()
}
