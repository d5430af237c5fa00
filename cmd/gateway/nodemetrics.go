package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/metrics"
	"github.com/nats-io/nats.go"
)

// nodeMetrics is the metrics server of an edge or a worker: /metrics,
// /healthz (the process is up) and /readyz (200 while the node is
// connected to NATS, is not draining and, on an edge, every channel is
// connected; else 503 with a line saying what is not).
type nodeMetrics struct {
	addr string
	srv  *http.Server
	wg   sync.WaitGroup
}

// serveNodeMetrics serves m on ln (nil: nothing is served, and stop does
// nothing). note is a line /readyz always says first ("" none): that
// agents run unsandboxed; notReady returns what keeps the node from being
// ready.
func serveNodeMetrics(ln net.Listener, m *metrics.Metrics, note string, notReady func() []string, log *slog.Logger) *nodeMetrics {
	n := &nodeMetrics{}
	if ln == nil {
		return n
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if note != "" {
			note += "\n"
		}
		if why := notReady(); len(why) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, note+strings.Join(why, "\n")+"\n")
			return
		}
		io.WriteString(w, note+"ok\n")
	})
	n.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	n.addr = ln.Addr().String()
	n.wg.Go(func() {
		if err := n.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("the metrics server stopped", "err", err)
		}
	})
	return n
}

// url is where the metrics are, or "".
func (n *nodeMetrics) url() string {
	if n.addr == "" {
		return ""
	}
	return "http://" + n.addr + "/metrics"
}

// stop ends the server.
func (n *nodeMetrics) stop() {
	if n.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = n.srv.Shutdown(ctx)
	n.wg.Wait()
}

// notReadyNode says what keeps a node from being ready: its NATS
// connection, a drain, channels not connected (an edge's adapters).
func notReadyNode(nc *nats.Conn, draining bool, adapters map[string]channels.Adapter) []string {
	var why []string
	if !nc.IsConnected() {
		why = append(why, fmt.Sprintf("nats: not connected (%s)", strings.ToLower(nc.Status().String())))
	}
	if draining {
		why = append(why, "draining: the node is stopping")
	}
	for _, p := range slices.Sorted(maps.Keys(adapters)) {
		if c, ok := channels.As[channels.Checker](adapters[p]); ok {
			if err := c.Check(); err != nil {
				why = append(why, fmt.Sprintf("%s: %v", p, err))
			}
		}
	}
	return why
}

// listenMetrics binds metrics.listen; nil when it is not set (or its
// default address cannot be bound).
func listenMetrics(cfg config.Config, log *slog.Logger) (net.Listener, error) {
	if cfg.Metrics.Listen == "" {
		return nil, nil
	}
	return listen(cfg, "metrics.listen", cfg.Metrics.Listen, true, log)
}
