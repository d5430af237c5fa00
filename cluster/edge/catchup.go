package edge

import (
	"context"
	"errors"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
)

// CatchUp configures an edge's reading of what its platform connection
// missed: when the connection starts a new session (the edge's start, or
// a reconnection the platform did not resume), the threads the cluster's
// workers handled a message of within Window are read from the message
// after it, and each message missed is published as the live event would
// have been (the same Nats-Msg-Id: a message both caught up and delivered
// live, or caught up by two edges, is stored once). The worker answers
// them as it would live ones.
type CatchUp struct {
	// Window is channels.catchUp; zero turns the catch-up off.
	Window time.Duration
	// MaxMessages is how many missed messages one thread may have and
	// still get them published; past it none is, and a summary
	// (channels.Inbound.Missed) is published instead, which the worker
	// tells the thread (default 10, the gateway's catch-up's).
	MaxMessages int
	// Seen lists the platform's threads whose last message was handled
	// since since, with that message (jsstore.SeenSince).
	Seen func(ctx context.Context, since time.Time) ([]store.Seen, error)
}

// Sessions is implemented by an adapter whose platform connection does
// not get what was sent while it had no session (Discord's gateway after
// a fresh IDENTIFY), and which can read it (channels.History).
type Sessions interface {
	channels.History
	channels.NewSessions
	// Serves reports whether this connection gets t's live messages
	// (Discord: t's guild is on this shard). It may block on I/O.
	Serves(ctx context.Context, t channels.ThreadRef) bool
}

// Limits of the edge's catch-up reads, as the gateway's catch-up's.
const (
	catchUpPage     = 100
	catchUpPages    = 5
	maxCatchUpWait  = 5 * time.Minute
	defaultCatchUpN = 10
)

// catchUps runs a catch-up for each new session of s until ctx ends.
func (e *Edge) catchUps(ctx context.Context, s Sessions) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.Sessions():
			e.catchUp(ctx, s)
		}
	}
}

// catchUp reads and publishes what each thread this connection serves
// missed.
func (e *Edge) catchUp(ctx context.Context, s Sessions) {
	c := e.o.CatchUp
	seen, err := c.Seen(ctx, time.Now().Add(-c.Window))
	if err != nil {
		if ctx.Err() == nil {
			e.o.Log.Error("edge: cannot list the threads to catch up on", "err", err)
		}
		return
	}
	served := 0
	for _, t := range seen {
		if t.Thread.Platform != e.o.Platform || t.MessageID == "" || !s.Serves(ctx, t.Thread) {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		served++
		e.catchUpThread(ctx, s, t)
	}
	e.o.Log.Info("edge: a new platform session; caught up on the threads it serves", "seen", len(seen), "served", served)
}

// catchUpThread reads t's thread after its last message handled and
// publishes what people wrote there.
func (e *Edge) catchUpThread(ctx context.Context, h channels.History, t store.Seen) {
	maxN := e.o.CatchUp.MaxMessages
	if maxN <= 0 {
		maxN = defaultCatchUpN
	}
	var (
		missed []channels.Inbound
		last   channels.MessageID
	)
	after, complete := t.MessageID, false
	for pages := 0; pages < catchUpPages && !complete; {
		p, err := h.MessagesAfter(ctx, t.Thread, after, catchUpPage)
		if rl, ok := errors.AsType[*channels.RateLimitError](err); ok && rl.RetryAfter <= maxCatchUpWait {
			select {
			case <-ctx.Done():
				return
			case <-time.After(rl.RetryAfter):
			}
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				e.o.Log.Warn("edge: cannot read what a thread received while the connection was down", "thread", t.Thread, "err", err)
			}
			return
		}
		pages++
		for _, m := range p.Messages {
			if !m.Author.Self {
				missed = append(missed, m)
			}
		}
		if p.Last != "" {
			after, last = p.Last, p.Last
		}
		complete = !p.More || p.Last == ""
	}
	if len(missed) == 0 {
		return
	}
	if len(missed) > maxN || !complete {
		// The worker tells the thread; the same summary from two edges
		// is stored once.
		e.o.Log.Info("edge: a thread received more messages while the connection was down than the catch-up publishes",
			"thread", t.Thread, "read", len(missed), "max", maxN, "complete", complete)
		e.publish(ctx, channels.Inbound{
			Thread: t.Thread,
			Missed: &channels.Missed{N: len(missed), Max: maxN, Complete: complete, Last: last},
			Event:  "missed/" + t.Thread.Channel + "/" + t.Thread.Thread + "/" + string(last),
		})
		return
	}
	e.o.Log.Info("edge: caught up on a thread", "thread", t.Thread, "messages", len(missed))
	for _, m := range missed {
		e.publish(ctx, m)
	}
}
