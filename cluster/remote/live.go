package remote

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// A thread's operations go to one edge, so that one edge's rate-limit
// state counts all of them (two edges each with its own would together
// overrun a channel's limits). The edge is chosen among the platform's
// live edges by rendezvous hashing: every worker chooses the same one,
// and when an edge comes or goes only the threads that fall to it move.
// A thread that moved waits (pace) until its last operation on the edge
// before is Pace old: the platform's window that edge spent in is over,
// so the new edge, which knows nothing of it, cannot overrun it.

// watchLive follows the platform's entries in the live bucket: with
// initial, until the entries there now are read; else until ctx ends.
func (a *Adapter) watchLive(ctx context.Context, initial bool) error {
	current := false // the entries there now are read
	return watch(ctx, a.liveKV, wire.LiveKey(a.o.Platform, "*"), func(ent jetstream.KeyValueEntry) bool {
		if ent == nil {
			current = true
			return !initial
		}
		a.liveEntry(ent, current)
		return true
	})
}

// watch hands take each entry of kv under key (nil: the end of those
// there were when it started) until ctx ends or take returns false.
func watch(ctx context.Context, kv jetstream.KeyValue, key string, take func(jetstream.KeyValueEntry) bool, opts ...jetstream.WatchOpt) error {
	w, err := kv.Watch(ctx, key, opts...)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ent, ok := <-w.Updates():
			if !ok {
				return errors.New("the watch ended")
			}
			if !take(ent) {
				return nil
			}
		}
	}
}

// liveEntry takes one entry of the live bucket; fresh says it was just
// written (else it is as old as it says, at most).
func (a *Adapter) liveEntry(ent jetstream.KeyValueEntry, fresh bool) {
	edge, ok := strings.CutPrefix(ent.Key(), a.o.Platform+".")
	if !ok {
		return
	}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if ent.Operation() != jetstream.KeyValuePut {
		if _, ok := a.live[edge]; ok || !fresh {
			a.left[edge] = now
			if !fresh && ent.Created().Before(now) {
				a.left[edge] = ent.Created()
			}
			a.ended[edge] = a.left[edge]
		}
		delete(a.live, edge)
		delete(a.since, edge)
		return
	}
	l, err := wire.DecodeLive(ent.Value())
	if err != nil || l.Platform != a.o.Platform || l.Edge != edge {
		a.o.Log.Error("remote: a bad live edge entry", "key", ent.Key(), "err", err)
		return
	}
	written := now
	if !fresh && ent.Created().Before(now) {
		written = ent.Created()
	}
	if lapses, ok := a.live[edge]; fresh && (!ok || !now.Before(lapses)) {
		a.joined[edge] = now
	} else if !l.Since.IsZero() && now.Sub(l.Since) < a.o.Pace && !ok {
		// Started lately, before this worker watched.
		a.joined[edge] = l.Since
		if l.Since.After(now) {
			a.joined[edge] = now
		}
	}
	a.live[edge] = written.Add(l.TTL)
	if prev, ok := a.since[edge]; ok && !l.Since.IsZero() && l.Since.After(prev) {
		// A new process under the same id, its entry written over the
		// one before's (killed, or not deleted): that one ended by now.
		a.ended[edge] = l.Since
		if l.Since.After(now) {
			a.ended[edge] = now
		}
	}
	if _, ok := a.since[edge]; !ok || !l.Since.IsZero() {
		a.since[edge] = l.Since
		if l.Since.IsZero() || l.Since.After(written) {
			a.since[edge] = written
		}
	}
}

// edgeFor returns the live edge thread t falls to, "" when none is live.
func (a *Adapter) edgeFor(t channels.ThreadRef) string {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	var best string
	var top uint64
	for edge, lapses := range a.live {
		if !now.Before(lapses) {
			continue
		}
		if s := score(t, edge); best == "" || s > top || s == top && edge < best {
			best, top = edge, s
		}
	}
	return best
}

// score is edge's weight for thread t in the rendezvous hashing.
func score(t channels.ThreadRef, edge string) uint64 {
	h := fnv.New64a()
	for _, s := range []string{t.Platform, t.Channel, t.Thread, edge} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	// fnv's last bytes stir its high bits little: mix them (splitmix64).
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// answered records that edge answered one of t's operations now.
func (a *Adapter) answered(t channels.ThreadRef, edge string) {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	by := a.threads[t]
	if by == nil {
		by = map[string]time.Time{}
		a.threads[t] = by
	}
	by[edge] = now
	if len(a.threads) >= a.nextPrune {
		for th, by := range a.threads {
			for e, last := range by {
				if now.Sub(last) >= a.o.Pace {
					delete(by, e)
				}
			}
			if len(by) == 0 {
				delete(a.threads, th)
			}
		}
		a.nextPrune = max(256, 2*len(a.threads))
	}
	for _, m := range []map[string]time.Time{a.left, a.joined, a.ended} {
		for e, at := range m {
			if now.Sub(at) >= a.o.Pace {
				delete(m, e)
			}
		}
	}
}

// noAnswer records that edge did not answer: it may have spent the
// platform's window of the thread, so the queue group is asked only once
// that is over, as after it stopped.
func (a *Adapter) noAnswer(edge string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.left[edge] = time.Now()
}

// pace waits until t's operations may go to edge ("" for any), or ctx
// ends (a *channels.RateLimitError at once when ctx ends before): until
// no other edge answered one of them within Pace, and, as t may have
// been served by another worker, until Pace after edge (or an edge t
// would have fallen to instead) started or stopped serving, and after
// edge's process before the one serving now ended.
//
// pick chooses the edge, again after each wait: the live edges change
// meanwhile (an edge starting again), and a wait for the edge chosen
// before would last as long as the edge the thread is on now answers its
// other operations.
func (a *Adapter) pace(ctx context.Context, t channels.ThreadRef, pick func() string) (string, error) {
	for {
		edge := pick()
		now := time.Now()
		var until time.Time
		a.mu.Lock()
		for e, last := range a.threads[t] {
			// Another edge, or this one before it started again (a new
			// process under the same id knows nothing of what the one
			// before it spent).
			again := e == edge && a.since[e].After(last)
			if (e != edge || again) && now.Sub(last) < a.o.Pace {
				until = later(until, last.Add(a.o.Pace))
			}
		}
		if at, ok := a.ended[edge]; ok && now.Sub(at) < a.o.Pace {
			// The edge's process before this one may have spent t's
			// window, for this worker or another (t taken over here).
			until = later(until, at.Add(a.o.Pace))
		}
		if at, ok := a.joined[edge]; ok && now.Sub(at) < a.o.Pace {
			// t was on another edge before, if there was one.
			for e := range a.live {
				if since, ok := a.since[e]; e != edge && ok && since.Before(at) {
					until = later(until, at.Add(a.o.Pace))
				}
			}
		}
		left := func(e string, at time.Time) {
			if now.Sub(at) < a.o.Pace && (edge == "" || score(t, e) > score(t, edge)) {
				until = later(until, at.Add(a.o.Pace))
			}
		}
		for e, at := range a.left {
			left(e, at)
		}
		for e, lapses := range a.live {
			if !now.Before(lapses) {
				left(e, lapses)
			}
		}
		a.mu.Unlock()
		if until.IsZero() {
			return edge, nil
		}
		if dl, ok := ctx.Deadline(); ok && dl.Before(until) {
			// As a local adapter refuses a call its limits have no
			// room for: the caller tries again when told.
			return "", &channels.RateLimitError{RetryAfter: until.Sub(now), Scope: "moved"}
		}
		a.o.Log.Debug("remote: a thread moved to another edge; waiting for the platform's window", "thread", t, "edge", edge, "wait", until.Sub(now))
		tm := time.NewTimer(until.Sub(now))
		select {
		case <-ctx.Done():
			tm.Stop()
			return "", ctx.Err()
		case <-tm.C:
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
