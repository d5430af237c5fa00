package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/remote"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/acpgw/gateway/session"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// edgePlatforms are the platforms a worker serves: those the edges
// announce in <cluster>_edges, watched, so that an edge that starts after
// the worker is served too. The worker needs no platform token.
type edgePlatforms struct {
	ctx     context.Context // the proxies' lifetime
	cluster string
	nc      *nats.Conn
	js      jetstream.JetStream
	log     *slog.Logger
	router  *session.Router
	wg      *sync.WaitGroup // the proxies' Run and the watch

	replicas int // cluster.replicas, for the edges' bucket if it is missing

	mu     sync.Mutex
	byName map[string]*remote.Adapter
}

// watch serves the platforms announced now, and goes on watching for
// more until the proxies stop.
func (e *edgePlatforms) watch(ctx context.Context) error {
	kv, err := cluster.WhileSettling(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		// Opened as it is when it exists (an edge made it, with other
		// replicas perhaps).
		if kv, err := e.js.KeyValue(ctx, wire.EdgesBucket(e.cluster)); err == nil {
			return kv, nil
		}
		return e.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: wire.EdgesBucket(e.cluster), Storage: jetstream.FileStorage, Replicas: max(e.replicas, 1),
		})
	})
	if err != nil {
		return fmt.Errorf("cluster: edges bucket: %w", err)
	}
	w, err := kv.WatchAll(e.ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("cluster: watch the edges: %w", err)
	}
	// The announcements there are now, up to the marker of their end.
	for ent := range w.Updates() {
		if ent == nil {
			break
		}
		e.add(ent.Key())
	}
	e.wg.Go(func() {
		defer w.Stop()
		for {
			select {
			case <-e.ctx.Done():
				return
			case ent, ok := <-w.Updates():
				if !ok {
					return
				}
				if ent != nil {
					e.add(ent.Key())
				}
			}
		}
	})
	return nil
}

// add serves platform p if it is not served yet, and returns its proxy.
func (e *edgePlatforms) add(p string) (*remote.Adapter, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if a, ok := e.byName[p]; ok {
		return a, nil
	}
	if e.ctx.Err() != nil {
		return nil, fmt.Errorf("cluster: the worker is stopping; %s not served", p)
	}
	// Announced already: Open reads the announcement at once.
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	a, err := remote.Open(ctx, remote.Options{Cluster: e.cluster, Replicas: e.replicas, Platform: p, Conn: e.nc, JS: e.js, Log: e.log.With("platform", p)})
	if err != nil {
		e.log.Error("cannot serve a platform an edge announced", "platform", p, "err", err)
		return nil, err
	}
	e.router.Add(p, a)
	e.byName[p] = a
	// Run follows the platform's later announcements too (a capability
	// an edge adds), which the proxy logs.
	e.wg.Go(func() { _ = a.Run(e.ctx, e.router.Handle) })
	e.log.Info("channel enabled", "platform", p, "capabilities", channels.CapsOf(a).Names())
	return a, nil
}

// deliver hands an inbound event to its platform's proxy, serving the
// platform first if its announcement has not been read yet (an edge
// announces before it publishes).
func (e *edgePlatforms) deliver(ctx context.Context, ev cluster.Event) error {
	in, err := wire.DecodeInbound(ev.Data)
	if err != nil {
		// Delivering it again would fail the same way.
		e.log.Error("dropping an event", "event", ev.ID, "err", err)
		return nil
	}
	a, err := e.add(in.Thread.Platform)
	if err != nil {
		return err
	}
	return a.Deliver(ctx, in)
}
