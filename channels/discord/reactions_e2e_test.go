package discord

import (
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
)

// waitReactions waits until the bot's reactions on message msg are
// exactly want (in the fake's state, not a log of calls).
func (g *gateway) waitReactions(msg string, want ...string) {
	g.t.Helper()
	g.f.waitFor(testCtx(g.t), "the bot's reactions "+strings.Join(want, " ")+" on "+msg, func() bool {
		return slices.Equal(g.f.reactions[msg], want)
	})
}

// TestReactionsThroughATurnsLife: with the whole gateway and the demo
// agent, a person's message gets 👀 when its turn is taken, ⏳ while it
// waits behind another turn, and one end mark in place of those (✅, ❌,
// ⏹️); the marks replace each other rather than pile up. A 🛑 on the
// running prompt by someone without access does nothing; Ann's stops the
// turn, and the thread says she did.
func TestReactionsThroughATurnsLife(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	f := newFake(t)
	g := newGateway(t, f, session.AccessRule{Guilds: []string{f.guild}, Users: []string{ann.ID}})
	ctx := testCtx(t)

	// The mention that opens the thread is taken (👀; it lives in the
	// parent channel, and the thread has its id); a message behind it
	// waits (⏳).
	id := f.say(ann, f.channel, "slow 400", true)
	th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	g.waitReactions(id, channels.ReactTaken)
	f.waitFor(ctx, "the slow answer", func() bool {
		for _, m := range f.botMessagesLocked(id) {
			if strings.HasPrefix(m.Content, "the quick") {
				return true
			}
		}
		return false
	})
	kept := f.say(ann, id, "echo runs after the stop", false)
	g.waitReactions(kept, channels.ReactQueued)

	// Bob has no access: his 🛑 does nothing. Ann's, after it in the
	// channel's order, stops the turn, and the stop is hers; the queued
	// message stays (said in the thread) and runs next (✅).
	f.react(bob, f.channel, id, channels.ReactStop, false)
	f.react(ann, f.channel, id, channels.ReactStop, false)
	if got := g.waitEnd(th); got != "cancelled" {
		t.Fatalf("stop reason %q after Ann's 🛑, want cancelled", got)
	}
	g.waitStopNotice(id, 0, "Ann")
	g.waitReactions(id, channels.ReactStopped)
	if got := g.waitEnd(th); got != "end_turn" {
		t.Fatalf("stop reason %q of the queued message's turn, want end_turn", got)
	}
	g.waitReactions(kept, channels.ReactDone)
	f.waitFor(ctx, "the kept queue's notice", func() bool {
		for _, m := range f.botMessagesLocked(id) {
			if strings.Contains(m.Content, "1 queued message stays and runs next") {
				return true
			}
		}
		return false
	})

	// A message behind a turn that waits for an approval waits (⏳),
	// then runs once the approval ends that turn: ✅ on both.
	n := len(f.botMessages(id))
	asks := f.say(ann, id, "permission", false)
	var prompt fakeMessage
	f.waitFor(ctx, "the permission prompt", func() bool {
		for _, m := range f.botMessagesLocked(id)[n:] {
			if m.Components != nil {
				prompt = m
				return true
			}
		}
		return false
	})
	g.waitReactions(asks, channels.ReactTaken)
	queued := f.say(ann, id, "echo after the approval", false)
	g.waitReactions(queued, channels.ReactQueued)
	f.click(ann, id, prompt.ID, customIDWithSuffix(t, prompt, "/allow_once"))
	for range 2 {
		if got := g.waitEnd(th); got != "end_turn" {
			t.Fatalf("stop reason %q, want end_turn", got)
		}
	}
	g.waitReactions(asks, channels.ReactDone)
	g.waitReactions(queued, channels.ReactDone)

	// In the thread, a 🛑 on the running prompt stops it too.
	n = len(f.botMessages(id))
	slow := f.say(ann, id, "slow 400", false)
	g.waitReactions(slow, channels.ReactTaken)
	f.react(ann, id, slow, channels.ReactStop, false)
	if got := g.waitEnd(th); got != "cancelled" {
		t.Fatalf("stop reason %q after Ann's 🛑 in the thread, want cancelled", got)
	}
	g.waitStopNotice(id, n, "Ann")
	g.waitReactions(slow, channels.ReactStopped)

	// A turn that fails ends with ❌.
	failed := f.say(ann, id, "error", false)
	g.waitEnd(th)
	g.waitReactions(failed, channels.ReactFailed)

	// Nothing piled up: every message carries one mark.
	for _, msg := range []string{id, kept, asks, queued, slow, failed} {
		if got := f.botReactions(msg); len(got) != 1 {
			t.Errorf("reactions on %s = %q, want one", msg, got)
		}
	}
}

// waitStopNotice waits for the turn's stop notice among the bot's
// messages in channel after the first n, and checks it names who.
func (g *gateway) waitStopNotice(channel string, n int, who string) {
	g.t.Helper()
	var notice string
	g.f.waitFor(testCtx(g.t), "the stop notice", func() bool {
		for _, m := range g.f.botMessagesLocked(channel)[n:] {
			if strings.Contains(m.Content, "Stopped by") {
				notice = m.Content
				return true
			}
		}
		return false
	})
	if !strings.Contains(notice, "Stopped by "+who) {
		g.t.Errorf("stop notice = %q, want the stop to be %s's", notice, who)
	}
}
