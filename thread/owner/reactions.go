package owner

import (
	"context"
	"log/slog"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/thread"
)

// Reactions is the reactions section: the gateway's reactions on
// people's messages as a glanceable status (see machine_react.go). It can
// be overridden per platform, space and channel.
type Reactions struct {
	// Mode is "on" (the default) or "off": whether a person's message
	// gets ⏳ while queued, 👀 once taken, and ✅, ❌ or ⏹️ when its turn
	// ends, where the platform has reactions.
	Mode string `koanf:"mode" validate:"oneof=on off"`
	// StallAfter marks a turn that has been silent this long with ⚠️
	// (until the agent speaks again): 0 (never) to 24h; default 2m.
	StallAfter time.Duration `koanf:"stallAfter" validate:"min=0,max=24h"`
}

// The reactions modes.
const (
	ReactionsOn  = "on"
	ReactionsOff = "off"
)

// DefaultReactions returns the documented defaults.
func DefaultReactions() Reactions { return Reactions{Mode: ReactionsOn, StallAfter: 2 * time.Minute} }

// On reports whether reactions are on ("" counts as the default, on).
func (r Reactions) On() bool { return r.Mode != ReactionsOff }

// startReactions starts the thread's reaction runner where the adapter
// reacts; nil otherwise.
func startReactions(ctx context.Context, ad channels.Adapter, ref channels.ThreadRef, log *slog.Logger) *dispatch.ReactRunner {
	return dispatch.ReactionsFor(ctx, ad, ref, log)
}

// react performs React: at once, or once the turn's output is out.
func (t *Thread) react(f thread.React) {
	if t.reacts == nil {
		return
	}
	h, emoji, rr := channels.Handle{Thread: t.ref, ID: f.Msg}, f.Emoji, t.reacts
	if !f.AtTurnEnd {
		rr.Set(h, emoji)
		return
	}
	t.runner.Do(func(l *dispatch.Lane) { l.AtTurnEnd(func() { rr.Set(h, emoji) }) })
}

// reactionEv is a stop reaction for the owner. One on a message the
// machine does not know as the turn's goes once through the lane first
// (bounced): the lane may have posted that message and not yet told the
// owner (Posted), which it has done by the time the lane runs Do.
type reactionEv struct {
	e       thread.ReactionStop
	bounced bool
}

// reaction applies a stop reaction, after a round through the lane when
// its message may be one the lane has just posted.
func (t *Thread) reaction(e reactionEv) {
	if e.bounced || !e.e.MayStop || t.m.OfTurn(e.e.Message) {
		t.apply(e.e)
		return
	}
	t.runner.Do(func(*dispatch.Lane) { t.inbox.send(reactionEv{e: e.e, bounced: true}) })
}
