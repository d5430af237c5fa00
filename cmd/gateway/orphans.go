package main

// A prompt whose worker died is answered without waiting for another
// message in its thread: each worker looks for such threads (a prompt
// marked running, no lease) and publishes one take-over event for each,
// which placement hands to a worker like any event; the worker that
// claims the thread adopts it (asks the prompts again) and hands the
// event itself to no thread.

import (
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/acpgw/gateway/store"
)

// orphans finds the threads a dead worker left prompts pending in.
type orphans struct {
	st       store.Backend
	leases   *cluster.Leases
	in       *cluster.Inbound
	ttl      time.Duration
	draining func() bool
	log      *slog.Logger
}

// run scans once at once, then every ttl (jittered by up to half of it
// either way, so that workers started together do not scan together)
// until ctx ends.
func (o orphans) run(ctx context.Context) {
	for {
		o.scan(ctx, time.Now())
		t := time.NewTimer(o.ttl/2 + rand.N(o.ttl))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// scan publishes a take-over event for each thread with a prompt marked
// running before now minus the TTL (a thread being claimed now is left to
// its claimer) whose lease does not exist (it expired or was released).
// Workers scanning in the same round (now cut to the TTL) publish the
// same event, stored once; the next round publishes it again if the
// thread is still nobody's. A draining worker does not scan. It costs one
// listing of the marks, and one lease read per thread with an old mark.
func (o orphans) scan(ctx context.Context, now time.Time) {
	if o.draining() {
		return
	}
	rs, err := o.st.RunningTurns(ctx)
	if err != nil {
		if ctx.Err() == nil {
			o.log.Warn("cannot list the prompts pending, to find those of a worker gone", "err", err)
		}
		return
	}
	oldest := map[channels.ThreadRef]store.RunningTurn{}
	for _, rt := range rs {
		if now.Sub(rt.Started) < o.ttl {
			continue
		}
		if cur, ok := oldest[rt.Thread]; !ok || rt.Started.Before(cur.Started) {
			oldest[rt.Thread] = rt
		}
	}
	for thread, rt := range oldest {
		if o.draining() {
			return
		}
		_, held, err := o.leases.Holder(ctx, thread.String())
		if err != nil {
			if ctx.Err() == nil {
				o.log.Warn("cannot read a thread's lease, to find whether its worker is gone", "thread", thread, "err", err)
			}
			continue
		}
		if held {
			continue
		}
		ev := wire.TakeOverEvent(thread, rt.Started, rt.Attempts, now.Truncate(o.ttl))
		data, err := json.Marshal(ev)
		if err != nil {
			o.log.Error("cannot encode a take-over event", "thread", thread, "err", err)
			continue
		}
		dup, err := o.in.Publish(ctx, cluster.Event{ID: string(ev.ID), Thread: thread.String(), Data: data, TakeOver: true})
		if err != nil {
			if ctx.Err() == nil {
				o.log.Warn("cannot publish a take-over event for a thread whose worker is gone", "thread", thread, "err", err)
			}
			continue
		}
		if !dup {
			o.log.Info("a thread's worker is gone with a prompt pending: take-over event published", "thread", thread, "event", ev.ID)
		}
	}
}
