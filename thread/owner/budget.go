package owner

import (
	"time"

	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/sysmsg"
)

// Budgets is the budgets section: limits per channel (overrides apply)
// that stop a turn when reached; the thread's next prompt then waits for
// an approver's Continue. Zero: no limit.
type Budgets struct {
	// TokensPerTurn stops a turn whose agent reports this many tokens in
	// its context window (usage_update's used).
	TokensPerTurn int64 `koanf:"tokensPerTurn" validate:"min=0"`
	// CostPerThread stops a turn once the thread's cost (what its agents
	// reported, summed over its sessions) reaches this amount, in the
	// agent's currency.
	CostPerThread float64 `koanf:"costPerThread" validate:"min=0"`
	// CostPerChannelDay stops a turn once the channel's cost since
	// midnight (UTC) reaches this amount.
	CostPerChannelDay float64 `koanf:"costPerChannelDay" validate:"min=0"`
}

// spent is what a running turn's budgets are measured against.
type spent struct {
	// Tokens is the turn's context tokens as last reported; TokensKnown
	// whether the agent reported any in the turn.
	Tokens      int64
	TokensKnown bool
	// Thread and ChannelDay are the costs so far, this turn included;
	// CostKnown whether the agent reported one in the turn.
	Thread, ChannelDay float64
	CostKnown          bool
	Currency           string
}

// reached returns the first budget of b that s reaches, if any. It is
// pure.
func (b Budgets) reached(s spent) (sysmsg.BudgetReached, bool) {
	if b.TokensPerTurn > 0 && s.TokensKnown && s.Tokens >= b.TokensPerTurn {
		return sysmsg.BudgetReached{Budget: sysmsg.BudgetTurnTokens,
			Used: float64(s.Tokens), Limit: float64(b.TokensPerTurn)}, true
	}
	if !s.CostKnown {
		return sysmsg.BudgetReached{}, false
	}
	if b.CostPerThread > 0 && s.Thread >= b.CostPerThread {
		return sysmsg.BudgetReached{Budget: sysmsg.BudgetThreadCost,
			Used: s.Thread, Limit: b.CostPerThread, Currency: s.Currency}, true
	}
	if b.CostPerChannelDay > 0 && s.ChannelDay >= b.CostPerChannelDay {
		return sysmsg.BudgetReached{Budget: sysmsg.BudgetChannelDayCost,
			Used: s.ChannelDay, Limit: b.CostPerChannelDay, Currency: s.Currency}, true
	}
	return sysmsg.BudgetReached{}, false
}

// dayStart is the start of now's day (UTC), from which the channel's
// daily cost counts.
func dayStart(now time.Time) time.Time {
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// turnSpend is what the running turn has spent so far by the projector's
// record: its last usage report, and the session's cost when it began.
func turnSpend(u projector.UsageUpdate, frames int, sessionBefore float64) (tokens int64, tokensKnown bool, inc float64, costKnown bool, currency string) {
	if frames == 0 {
		return 0, false, 0, false, ""
	}
	if u.CostKnown {
		inc = max(u.Cost-sessionBefore, 0)
	}
	return u.Used, u.UsedKnown, inc, u.CostKnown, u.Currency
}
