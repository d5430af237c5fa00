package session_test

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
)

// A budget reached stops the turn with a notice naming it; the thread's
// next prompt waits for a Continue, which only an approver may give; then
// it runs. The hold is in the store meanwhile.
func TestBudgetStopsAndWaitsForContinue(t *testing.T) {
	p := session.DefaultPolicy()
	p.Budgets.TokensPerTurn = 4000 // the "usage" scenario reports 4,200
	rule := session.AccessRule{Users: []string{ann.ID, bob.ID}, Approvers: []string{ann.ID}}
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}, policy: &p,
		access: map[string]session.AccessRule{"web": rule}})
	th := e.rec.Thread("budget")
	e.say(th, bob, "usage")
	e.waitOp(th, "the budget notice", hasText("Budget reached: tokens per turn, 4200 tokens of 4000 tokens (budgets.tokensPerTurn)"))
	e.waitEnd(th) // cancelled, or end_turn when the agent finished first
	e.waitOp(th, "the stop's notice", hasText("Stopped by the budget budgets.tokensPerTurn."))
	if h, ok, err := e.st.BudgetHoldOf(e.ctx(), th); err != nil || !ok || h.Budget != "tokensPerTurn" {
		t.Fatalf("hold in the store = %+v %v %v", h, ok, err)
	}

	e.say(th, bob, "echo after the budget")
	ask := e.waitOp(th, "the Continue button", isPrompt)
	if len(ask.Options) != 1 || !strings.Contains(ask.Text, "the next prompt waits") {
		t.Fatalf("Continue prompt %+v", ask)
	}
	click := func(who channels.Author) {
		t.Helper()
		err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: who, Reply: e.rec.ReplyFunc(th),
			Choice: &channels.ChoiceAnswer{Prompt: channels.Handle{Thread: th, ID: ask.Msg}, OptionID: ask.Options[0]}})
		if err != nil {
			t.Fatal(err)
		}
	}
	click(bob)
	e.waitOp(th, "the refusal", func(op channeltest.Op) bool {
		return op.Op == "reply" && strings.Contains(op.Text, "only approvers")
	})
	if strings.Contains(e.text(th), "after the budget") {
		t.Fatal("the waiting prompt ran before an approver's Continue")
	}
	click(ann)
	e.waitOp(th, "the Continue notice", hasText("Continued by Ann"))
	if end := e.waitEnd(th); end.StopReason != "end_turn" {
		t.Errorf("the prompt after Continue ended %+v", end)
	}
	if !strings.Contains(e.text(th), "after the budget") {
		t.Errorf("text %q lacks the waiting prompt's answer", e.text(th))
	}
	if _, ok, err := e.st.BudgetHoldOf(e.ctx(), th); err != nil || ok {
		t.Errorf("the hold outlived the Continue: %v %v", ok, err)
	}
}

// A cost budget works the same way, and the hold outlives a restart: the
// thread's first prompt after it still waits for a Continue.
func TestCostBudgetHoldOutlivesARestart(t *testing.T) {
	p := session.DefaultPolicy()
	p.Budgets.CostPerThread = 0.01 // the "usage" scenario reports $0.0123
	dir := t.TempDir()
	o := envOptions{rec: channeltest.Options{Edit: true, Prompt: true}, policy: &p, dir: dir}
	e := newEnv(t, o)
	th := e.rec.Thread("cost")
	e.say(th, ann, "usage")
	e.waitOp(th, "the budget notice", hasText("Budget reached: cost of this thread, $0.01 of $0.01 (budgets.costPerThread)"))
	e.waitEnd(th)
	e.close()

	e = newEnv(t, o)
	th = e.rec.Thread("cost")
	e.say(th, ann, "echo after the restart")
	ask := e.waitOp(th, "the Continue button", isPrompt)
	if strings.Contains(e.text(th), "after the restart") {
		t.Fatal("the prompt ran without a Continue")
	}
	err := e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Reply: e.rec.ReplyFunc(th),
		Choice: &channels.ChoiceAnswer{Prompt: channels.Handle{Thread: th, ID: ask.Msg}, OptionID: ask.Options[0]}})
	if err != nil {
		t.Fatal(err)
	}
	e.waitEnd(th)
	if !strings.Contains(e.text(th), "after the restart") {
		t.Errorf("text %q", e.text(th))
	}
}

// /usage answers the one who asked with the thread's turns, tokens and
// cost, the channel's today and the budgets; it is not a prompt.
func TestUsageCommand(t *testing.T) {
	p := session.DefaultPolicy()
	p.Budgets.CostPerChannelDay = 1
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, policy: &p})
	th := e.rec.Thread("usage")
	e.say(th, ann, "usage") // the demo scenario: 4,200 of 200,000 tokens, $0.0123
	e.waitEnd(th)
	in := channels.Inbound{Thread: th, Author: ann, Text: "/usage", ID: "in-cmd", Reply: e.rec.ReplyFunc(th),
		Command: channels.ParseCommand("/usage")}
	if err := e.rec.Deliver(e.ctx(), in); err != nil {
		t.Fatal(err)
	}
	op := e.waitOp(th, "the /usage answer", func(op channeltest.Op) bool { return op.Op == "reply" })
	want := "Usage of this thread: 1 turn, 4200 tokens in context (2% of 200000), $0.01. This channel today: 1 turn, $0.01.\n" +
		"- budgets.costPerChannelDay (cost of this channel today): $0.01 of $1.00, 1%"
	if op.Text != want {
		t.Errorf("/usage answered\n%s\nwant\n%s", op.Text, want)
	}
	e.say(th, ann, "echo done")
	e.waitEnd(th)
	ends := 0
	for _, op := range e.rec.OpsIn(th) {
		if op.Op == "turn_end" {
			ends++
		}
	}
	if ends != 2 {
		t.Errorf("%d turns, want 2: /usage must not reach the agent", ends)
	}
}
