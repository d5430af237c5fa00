package session_test

import (
	"math"
	"testing"
)

// TestUsageTotalsCountACumulativeCostOnce: an agent reports the session's
// cost so far, many times a turn (the demo agent's "usage" scenario
// reports $0.0123 fifty times a turn). Three such turns cost $0.0123 in
// all, in the store's session totals as in the thread's spend.
func TestUsageTotalsCountACumulativeCostOnce(t *testing.T) {
	e := newEnv(t, envOptions{})
	th := e.rec.Thread("usage")
	for range 3 {
		e.say(th, ann, "usage")
		e.waitEnd(th)
	}
	b, ok, err := e.st.Binding(e.ctx(), th)
	if err != nil || !ok {
		t.Fatalf("binding of %s: %v %v", th, ok, err)
	}
	u, err := e.st.UsageTotals(e.ctx(), b.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Turns != 3 || len(u.Cost) != 1 || math.Abs(u.Cost["USD"]-0.0123) > 1e-9 {
		t.Errorf("usage totals = %+v, want 3 turns costing USD 0.0123", u)
	}
	sp, err := e.st.ThreadSpend(e.ctx(), th)
	if err != nil {
		t.Fatal(err)
	}
	if !sp.CostKnown || math.Abs(sp.Cost-0.0123) > 1e-9 {
		t.Errorf("thread spend = %+v, want 0.0123", sp)
	}
}
