package slack

import (
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
)

// waitReactions waits until the app's reactions on message ts of th's
// channel are exactly want, by Slack name (the fake's state, not a log of
// calls).
func (g *gateway) waitReactions(th channels.ThreadRef, ts string, want ...string) {
	g.t.Helper()
	err := g.f.waitFor(g.ctx(), "the app's reactions "+strings.Join(want, " ")+" on "+ts, func() bool {
		return slices.Equal(g.f.reactions[th.Channel+"/"+ts], want)
	})
	if err != nil {
		g.t.Fatalf("%v; they are %q", err, g.f.reactionsOn(th.Channel, ts))
	}
}

// TestReactionsThroughATurnsLife: with the whole gateway and the demo
// agent, a person's message gets :eyes: when its turn is taken,
// :hourglass_flowing_sand: while it waits behind another turn, and one
// end mark in their place (✅, ❌, ⏹️); the marks replace each other rather
// than pile up. An :octagonal_sign: on the running turn's prompt by
// someone without access does nothing; Ann's stops the turn, on the
// prompt or on the turn's answer.
func TestReactionsThroughATurnsLife(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{rule: func(team string) session.AccessRule {
		return session.AccessRule{Workspaces: []string{team}, Users: []string{ann}, Approvers: []string{ann}}
	}})
	f := g.f

	// The mention is taken; a message behind it waits.
	s := g.say(ann, "", "slow 400", true)
	th := ref(fakeChannel, s.ts)
	g.waitReactions(th, s.ts, "eyes")
	g.waitMessage(th, "", "the quick brown")
	kept := g.say(ann, s.ts, "echo runs after the stop", false)
	g.waitReactions(th, kept.ts, "hourglass_flowing_sand")

	// Bob has no access: his stop does nothing. Ann's, after it, stops the
	// turn as hers; the queued message stays (said in the thread: a
	// reaction has no message to answer privately) and runs next.
	since := g.mark(th)
	if err := f.react(g.ctx(), bob, th.Channel, s.ts, "octagonal_sign", false); err != nil {
		t.Fatal(err)
	}
	if err := f.react(g.ctx(), ann, th.Channel, s.ts, "octagonal_sign", false); err != nil {
		t.Fatal(err)
	}
	if end := g.waitEnd(th); end.StopReason != "cancelled" {
		t.Fatalf("turn after Ann's stop reaction ended %+v, want cancelled", end)
	}
	if m := g.waitMessage(th, since, "Stopped by"); !strings.Contains(m.Text, "Stopped by Ann") {
		t.Errorf("stop notice = %q, want the stop to be Ann's (Bob's reaction must do nothing)", m.Text)
	}
	g.waitReactions(th, s.ts, "black_square_for_stop")
	g.waitMessage(th, since, "1 queued message stays and runs next")
	if end := g.waitEnd(th); end.StopReason != "end_turn" {
		t.Fatalf("the queued message's turn ended %+v, want end_turn", end)
	}
	g.waitReactions(th, kept.ts, "white_check_mark")

	// A message behind a turn that waits for an approval waits, then
	// runs once the approval ends that turn: ✅ on both.
	since = g.mark(th)
	asks := g.say(ann, s.ts, "permission", false)
	prompt := g.waitMessage(th, since, "Permission needed")
	g.waitReactions(th, asks.ts, "eyes")
	queued := g.say(ann, s.ts, "echo after the approval", false)
	g.waitReactions(th, queued.ts, "hourglass_flowing_sand")
	if _, err := f.click(g.ctx(), ann, th.Channel, prompt.TS, button(t, prompt, "/allow_once")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if end := g.waitEnd(th); end.StopReason != "end_turn" {
			t.Fatalf("turn ended %+v, want end_turn", end)
		}
	}
	g.waitReactions(th, asks.ts, "white_check_mark")
	g.waitReactions(th, queued.ts, "white_check_mark")

	// A stop reaction on the running turn's answer stops it too; the mark
	// goes on the prompt.
	since = g.mark(th)
	slow := g.say(ann, s.ts, "slow 400", false)
	answer := g.waitMessage(th, since, "the quick brown")
	if err := f.react(g.ctx(), ann, th.Channel, answer.TS, "octagonal_sign", false); err != nil {
		t.Fatal(err)
	}
	if end := g.waitEnd(th); end.StopReason != "cancelled" {
		t.Fatalf("turn after a stop reaction on its answer ended %+v, want cancelled", end)
	}
	g.waitReactions(th, slow.ts, "black_square_for_stop")

	// A turn that fails ends with ❌.
	failed := g.say(ann, s.ts, "error", false)
	g.waitEnd(th)
	g.waitReactions(th, failed.ts, "x")

	for _, ts := range []string{s.ts, kept.ts, asks.ts, queued.ts, slow.ts, failed.ts} {
		if got := f.reactionsOn(th.Channel, ts); len(got) != 1 {
			t.Errorf("reactions on %s = %q, want one", ts, got)
		}
	}
	if got := f.reactionsOn(th.Channel, answer.TS); len(got) != 0 {
		t.Errorf("reactions on the app's answer = %q, want none", got)
	}
}
