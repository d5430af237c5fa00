package owner

// The cost the agent reports, counted: an agent reports the session's
// cost so far (usage_update's cost), and nothing makes it tell the truth.
// The count only grows: a report lower than the one before is no refund
// but a new baseline (the next increase counts from there); a report
// that is not a finite number, is negative, or is more than MaxCostStep
// above the one before is not counted (logged), so that an agent cannot
// lower what its channel spent today for every thread nor hold the
// channel until midnight with one absurd number.

import (
	"context"
	"math"
	"time"

	"github.com/acpgw/gateway/projector"
)

// MaxCostStep is the most one usage report may add to a session's cost,
// in the agent's currency; a larger step is ignored.
const MaxCostStep = 1000.0

// costMeter counts one session's cost from the agent's reports.
type costMeter struct {
	session string  // the session it counts; "" none yet
	base    float64 // the agent's last report: the baseline
	counted float64 // the session's cost as counted (never lower)
}

// take counts report v and returns the session's cost counted after it,
// and why v added nothing when it was not counted ("" counted, or a drop
// that only moved the baseline).
func (c *costMeter) take(v float64) (counted float64, ignored string) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return c.counted, "nonfinite"
	case v < 0:
		return c.counted, "negative"
	case v < c.base:
		c.base = v // no refund: the next increase counts from here
		return c.counted, ""
	case v-c.base > MaxCostStep:
		c.base = v
		return c.counted, "step-over-MaxCostStep"
	}
	c.counted += v - c.base
	c.base = v
	return c.counted, ""
}

// meterCost replaces the cost of usage report u by the session's cost as
// counted (see costMeter), which the projector, the budgets, the records
// and /status then use.
func (t *Thread) meterCost(u *projector.Update) {
	if u.Tag != projector.TagUsage || !u.Usage.CostKnown || t.sess == nil {
		return
	}
	if t.cost.session != t.sess.ID {
		// What the session's turns recorded counting before (a resumed
		// session), else nothing.
		t.cost = costMeter{session: t.sess.ID}
		ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
		c, ok, err := t.d.Store.SessionCost(ctx, t.sess.ID)
		cancel()
		switch {
		case err != nil:
			t.d.Log.Warn("cannot read the session's cost; it counts from zero", "thread", t.ref, "err", err)
		case ok && c >= 0 && !math.IsInf(c, 0):
			t.cost.base, t.cost.counted = c, c
		}
	}
	reported := u.Usage.Cost
	counted, ignored := t.cost.take(reported)
	if ignored != "" {
		t.d.Log.Warn("the agent's cost report is not counted", "thread", t.ref, "session", t.sess.ID, "reported", reported, "why", ignored, "counted", counted)
	}
	u.Usage.Cost = counted
}
