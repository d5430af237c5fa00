package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
)

// waitReactions waits until the app's reactions on msg in th are exactly
// want.
func (g *Gateway) waitReactions(th channels.ThreadRef, msg channels.MessageID, want ...string) {
	g.t.Helper()
	if err := Wait(g.Ctx(), g.d, func() bool { return slices.Equal(g.d.Reactions(th, msg), want) }); err != nil {
		g.t.Fatalf("waiting for the app's reactions %q on %s: %v; they are %q", want, msg, err, g.d.Reactions(th, msg))
	}
}

// waitStopNotice waits for the turn's stop notice in th after the first n
// messages, and checks it names who.
func (g *Gateway) waitStopNotice(th channels.ThreadRef, n int, who Person) {
	g.t.Helper()
	if m := g.WaitText(th, n, "Stopped by"); !strings.Contains(m.Text, "Stopped by "+who.Name()) {
		g.t.Errorf("stop notice = %q, want the stop to be %s's", m.Text, who.Name())
	}
}

// A person's message gets 👀 when its turn is taken, ⏳ while it waits
// behind another turn, and one end mark in place of those (✅, ❌, ⏹️);
// the marks replace each other rather than pile up. A 🛑 on the running
// prompt by someone without access does nothing; Ann's stops the turn,
// and the thread says she did; so does hers on a prompt in the thread or
// on the running turn's answer (which gets no mark).
func testReactionsThroughATurnsLife(t *testing.T, s Setup) {
	ann := s.UserID(Ann)
	g := s.start(t, Config{Access: session.AccessRule{Users: []string{ann}, Approvers: []string{ann}}})

	// The mention that opens the thread is taken; a message behind it
	// waits.
	th := g.Mention(Ann, "slow 400")
	opened := channels.MessageID(th.Thread)
	g.waitReactions(th, opened, channels.ReactTaken)
	g.WaitText(th, 0, "the quick brown")
	kept := g.Say(Ann, th, "echo runs after the stop")
	g.waitReactions(th, kept, channels.ReactQueued)

	// Bob has no access: his 🛑 does nothing. Ann's, after it, stops the
	// turn as hers; the queued message stays (said in the thread: a
	// reaction has no message to answer privately) and runs next.
	n := len(g.Messages(th))
	s.React(t, g.Ctx(), Bob, th, opened, channels.ReactStop)
	s.React(t, g.Ctx(), Ann, th, opened, channels.ReactStop)
	if got := g.WaitEnd(th); got != "cancelled" {
		t.Fatalf("stop reason %q after Ann's 🛑, want cancelled", got)
	}
	g.waitStopNotice(th, n, Ann)
	g.waitReactions(th, opened, channels.ReactStopped)
	g.WaitText(th, n, "1 queued message stays and runs next")
	if got := g.WaitEnd(th); got != "end_turn" {
		t.Fatalf("stop reason %q of the queued message's turn, want end_turn", got)
	}
	g.waitReactions(th, kept, channels.ReactDone)

	// A message behind a turn that waits for an approval waits, then
	// runs once the approval ends that turn: ✅ on both.
	n = len(g.Messages(th))
	asks := g.Say(Ann, th, "permission")
	prompt := g.WaitPrompt(th, n)
	g.waitReactions(th, asks, channels.ReactTaken)
	queued := g.Say(Ann, th, "echo after the approval")
	g.waitReactions(th, queued, channels.ReactQueued)
	s.Click(t, g.Ctx(), Ann, th, prompt, "/allow_once")
	for range 2 {
		if got := g.WaitEnd(th); got != "end_turn" {
			t.Fatalf("stop reason %q, want end_turn", got)
		}
	}
	g.waitReactions(th, asks, channels.ReactDone)
	g.waitReactions(th, queued, channels.ReactDone)

	// In the thread, a 🛑 on the running prompt stops it too.
	n = len(g.Messages(th))
	slow := g.Say(Ann, th, "slow 400")
	g.waitReactions(th, slow, channels.ReactTaken)
	s.React(t, g.Ctx(), Ann, th, slow, channels.ReactStop)
	if got := g.WaitEnd(th); got != "cancelled" {
		t.Fatalf("stop reason %q after Ann's 🛑 in the thread, want cancelled", got)
	}
	g.waitStopNotice(th, n, Ann)
	g.waitReactions(th, slow, channels.ReactStopped)

	// A 🛑 on the running turn's answer stops it too; the mark goes on
	// the prompt.
	n = len(g.Messages(th))
	slower := g.Say(Ann, th, "slow 400")
	answer := g.WaitText(th, n, "the quick brown")
	s.React(t, g.Ctx(), Ann, th, answer.ID, channels.ReactStop)
	if got := g.WaitEnd(th); got != "cancelled" {
		t.Fatalf("stop reason %q after a 🛑 on the turn's answer, want cancelled", got)
	}
	g.waitReactions(th, slower, channels.ReactStopped)

	// A turn that fails ends with ❌.
	failed := g.Say(Ann, th, "error")
	g.WaitEnd(th)
	g.waitReactions(th, failed, channels.ReactFailed)

	// Nothing piled up: every message carries one mark.
	for _, msg := range []channels.MessageID{opened, kept, asks, queued, slow, slower, failed} {
		if got := s.Reactions(th, msg); len(got) != 1 {
			t.Errorf("reactions on %s = %q, want one", msg, got)
		}
	}
	if got := s.Reactions(th, answer.ID); len(got) != 0 {
		t.Errorf("reactions on the app's answer = %q, want none", got)
	}
}
