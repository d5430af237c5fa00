package store

import (
	"math"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

func TestBudgetHolds(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "t"}
	if _, ok, err := s.BudgetHoldOf(ctx, th); ok || err != nil {
		t.Fatalf("hold before any: %v %v", ok, err)
	}
	at := time.UnixMilli(5000).UTC()
	if err := s.PutBudgetHold(ctx, BudgetHold{Thread: th, Budget: "tokensPerTurn", Reached: at}); err != nil {
		t.Fatal(err)
	}
	h, ok, err := s.BudgetHoldOf(ctx, th)
	if err != nil || !ok || h.Budget != "tokensPerTurn" || !h.Reached.Equal(at) {
		t.Fatalf("hold = %+v %v %v", h, ok, err)
	}
	if err := s.ClearBudgetHold(ctx, th); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.BudgetHoldOf(ctx, th); ok {
		t.Error("the hold outlived its clearing")
	}
}

// An agent reports the session's cost so far: a turn costs its last
// report less the session's before it; turns without a report cost
// nothing and do not reset the session's total.
func TestSpend(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	a := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "a"}
	b := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "b"}
	other := channels.ThreadRef{Platform: "web", Channel: "d", Thread: "x"}
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	cost := func(th channels.ThreadRef, sess string, ended time.Time, c float64, known bool) Turn {
		return Turn{Thread: th, SessionID: sess, StopReason: "end_turn", Started: ended, Ended: ended, Cost: c, Currency: "USD", CostKnown: known}
	}
	for _, tu := range []Turn{
		cost(a, "s1", day.Add(-time.Hour), 1.0, true),  // yesterday: $1
		cost(a, "s1", day.Add(time.Hour), 1.5, true),   // today: $0.5
		cost(a, "s1", day.Add(2*time.Hour), 0, false),  // today: unknown
		cost(a, "s1", day.Add(3*time.Hour), 2.0, true), // today: $0.5
		cost(b, "s2", day.Add(time.Hour), 0.25, true),  // today: $0.25
		cost(other, "s3", day.Add(time.Hour), 7, true),
	} {
		if err := s.AddTurn(ctx, tu); err != nil {
			t.Fatal(err)
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	sp, err := s.ChannelSpend(ctx, "web", "c", day)
	if err != nil || sp.Turns != 4 || !sp.CostKnown || !near(sp.Cost, 1.25) {
		t.Errorf("channel today = %+v, %v; want 4 turns, $1.25", sp, err)
	}
	sp, err = s.ThreadSpend(ctx, a)
	if err != nil || sp.Turns != 4 || !near(sp.Cost, 2.0) {
		t.Errorf("thread a = %+v, %v; want 4 turns, $2", sp, err)
	}
	if c, ok, err := s.SessionCost(ctx, "s1"); err != nil || !ok || c != 2 {
		t.Errorf("session s1 cost = %v %v %v, want 2", c, ok, err)
	}
	if _, ok, err := s.SessionCost(ctx, "none"); err != nil || ok {
		t.Errorf("session without turns: %v %v", ok, err)
	}
	sp, err = s.ChannelSpend(ctx, "web", "empty", day)
	if err != nil || sp.Turns != 0 || sp.CostKnown {
		t.Errorf("empty channel = %+v, %v", sp, err)
	}
}
