package session_test

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
)

// usageOf asks /usage in th as who and returns the answer.
func (e *env) usageOf(th channels.ThreadRef, who channels.Author) string {
	e.t.Helper()
	n := 0
	for _, op := range e.rec.OpsIn(th) {
		if op.Op == "reply" {
			n++
		}
	}
	in := channels.Inbound{Thread: th, Author: who, Text: "/usage", ID: e.messageID("in-usage"), Reply: e.rec.ReplyFunc(th),
		Command: channels.ParseCommand("/usage")}
	if err := e.rec.Deliver(e.ctx(), in); err != nil {
		e.t.Fatal(err)
	}
	var answer string
	err := e.rec.WaitFor(e.ctx(), th, func(ops []channeltest.Op) bool {
		seen := 0
		for _, op := range ops {
			if op.Op == "reply" {
				if seen++; seen > n {
					answer = op.Text
					return true
				}
			}
		}
		return false
	})
	if err != nil {
		e.t.Fatalf("no /usage answer: %v", err)
	}
	return answer
}

// TestCostReportsCannotLowerOrHoldTheChannel: an agent that reports a
// negative cost, then an absurd one (1e308), counts nothing: another
// thread of the channel is neither given room by it (its $90 reaches the
// $3 budget) nor held by it (its $1 does not).
func TestCostReportsCannotLowerOrHoldTheChannel(t *testing.T) {
	p := session.DefaultPolicy()
	p.Budgets.CostPerChannelDay = 3
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}, policy: &p})
	a, b, c := e.rec.Thread("a"), e.rec.Thread("b"), e.rec.Thread("c")
	e.say(a, ann, "cost -100 1e308")
	e.waitEnd(a)
	e.say(b, ann, "cost 1")
	e.waitEnd(b)
	for _, op := range e.rec.OpsIn(b) {
		if strings.Contains(op.Text, "Budget reached") {
			t.Fatalf("a $1 turn reached the channel's $3 budget after another thread reported 1e308: %q", op.Text)
		}
	}
	if got := e.usageOf(a, ann); !strings.Contains(got, "Usage of this thread: 1 turn, 2000 tokens in context (1% of 200000), $0.00.") {
		t.Errorf("/usage of the thread that reported -100 and 1e308 = %q, want $0.00", got)
	}
	e.say(c, ann, "cost 90")
	e.waitOp(c, "the channel's budget", hasText("Budget reached: cost of this channel today, $91.00 of $3.00"))
	e.waitEnd(c)
	if n := strings.Count(e.logs.String(), "the agent's cost report is not counted"); n != 2 {
		t.Errorf("%d warnings of a cost report not counted, want 2 (-100, 1e308)", n)
	}
}

// TestCostDropResetsTheBaseline: a report lower than the one before is
// no refund and counts nothing; the next increase counts from it.
func TestCostDropResetsTheBaseline(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
	th := e.rec.Thread("drop")
	e.say(th, ann, "cost 5 1 3")
	e.waitEnd(th)
	if got := e.usageOf(th, ann); !strings.Contains(got, "$7.00. This channel today: 1 turn, $7.00.") {
		t.Errorf("/usage after 5, 1, 3 = %q, want $7.00 (5, then 2 from the new baseline)", got)
	}
}

// TestUsageUnknownWithoutCost: an agent that reports no usage leaves the
// cost and the budgets unknown, not $0.00 and 0%.
func TestUsageUnknownWithoutCost(t *testing.T) {
	p := session.DefaultPolicy()
	p.Budgets.CostPerThread = 3
	p.Budgets.CostPerChannelDay = 3
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, policy: &p})
	th := e.rec.Thread("quiet")
	e.say(th, ann, "echo hi")
	e.waitEnd(th)
	want := "Usage of this thread: 1 turn, cost unknown (the agent reported none). This channel today: 1 turn, cost unknown.\n" +
		"- budgets.costPerThread (cost of this thread): unknown of $3.00 (the agent reported nothing to count)\n" +
		"- budgets.costPerChannelDay (cost of this channel today): unknown of $3.00 (the agent reported nothing to count)"
	if got := e.usageOf(th, ann); got != want {
		t.Errorf("/usage =\n%s\nwant\n%s", got, want)
	}
}
